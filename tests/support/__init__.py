"""What the tier folders share: the background jobs, simulated peripherals, models of
flash and the power cut, the timeline (none of it a test module)."""
