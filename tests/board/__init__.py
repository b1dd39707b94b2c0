"""board tier: the virtual board behind a pty, driven by the real mpremote."""
