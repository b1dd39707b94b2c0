"""A table from the host: targets (a board's protocol lines, a raw REPL, the firmware
in this process) and the configurator (host.py), export of the journal (export.py), the
host's key store (auth.py) and which key is a board's (keyid.py), simulated rounds
(sim.py)."""
