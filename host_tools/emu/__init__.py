"""Emulated boards: the virtual board (the MicroPython WebAssembly VM) and the emulated
Pico behind a pty, and the stand-ins the host draws and stores with (framebuf, NOR
flash, a simulated shoe, screenshots)."""
