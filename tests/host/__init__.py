"""host tier: CPython only, no Node, no tools (the quick loop: `pytest -m host`)."""
