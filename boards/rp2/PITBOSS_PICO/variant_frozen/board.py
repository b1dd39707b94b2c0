# The FROZEN variant's `board`: boards/pico.py (frozen as `pico`) under the name the
# firmware imports.
from pico import *  # noqa: F401,F403
