"""Putting the firmware on a board and checking it: what a board gets (manifest.py reads
firmware/manifest.py), the mpy-cross build, copy and verify (flash.py), and the rule
core's answers on a flashed board (vectors.py: `vectors --port`, rank.py: `rank --port`)."""
