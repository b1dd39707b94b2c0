"""The emulated Raspberry Pi Pico (rp2040js): board tier, with its own background jobs."""
