"""Deploying the firmware: what a board gets, the .mpy build, the flash and its verify,
the ROMFS image, and the firmware run on a board (rank, vectors)."""
