"""The test suite, by tier: one folder a tier, each with its own conftest.py (DEVELOPERS.md,
"Tests: what runs where"); the helpers they share are in tests/support/."""
