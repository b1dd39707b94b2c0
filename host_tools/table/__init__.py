"""Table-side host tools: simulated rounds (sim.py)."""
