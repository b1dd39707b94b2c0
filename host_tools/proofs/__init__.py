"""Long runs that prove a claim the tests sample (each is also `python -m
host_tools.proofs.X`): the acknowledged shoe link in simulated time (shoe_link.py) and on
the emulated Pico (pico_link.py), seeded rounds over a real serial port (serial_proof.py),
every Pai Gow house way over every rank pattern (houseway_check.py)."""
