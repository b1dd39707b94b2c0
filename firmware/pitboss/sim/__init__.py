# Simulated rounds and the xorshift generator, for host tools and tests (on CPython and
# the MicroPython VM). Not in firmware/manifest.py: no board gets this package.
