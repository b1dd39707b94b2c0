"""slow tier: CPython only, but long (the census of every hand of every game)."""
