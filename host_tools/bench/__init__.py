"""`pitboss bench` and its jobs (docs/bench.md): the command (command.py), CPython's
figures (cpython.py), boards' and the unix port's (device.py, pico.py; board.py is the
MicroPython script a board runs), the report (report.py)."""
