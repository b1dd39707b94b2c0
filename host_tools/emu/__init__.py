"""Boards without hardware: the MicroPython WebAssembly VM (vm/: script runner and the
REPL bridge), the emulated Raspberry Pi Pico (pico/), both behind a pty as a board
(vboard.py), the shoe they are fed (shoe_sim.py, sidechannel.py), and the display
drawn on the host (framebuf_shim.py, screenshot.py)."""
