"""Talking to a board: the raw REPL (repl.py, mpremote's transport), protocol lines to
the running loop (proto.py), what `--port` may name (ports.py), one command per port at
a time (lock.py), and the host's calls sent over the raw REPL (board_api.py)."""
