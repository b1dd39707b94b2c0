"""vm tier: firmware run on the MicroPython 1.27 VM in script mode (Node)."""
