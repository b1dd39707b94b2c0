"""pitboss host tools: the CPython side (rank, census, flash, vectors, virtual board).

The evaluator is the firmware's own `pitboss` package, imported unchanged from
firmware/ so the host and the board cannot disagree about a rule.
"""
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(REPO, "firmware")
if FIRMWARE not in sys.path:
    sys.path.insert(0, FIRMWARE)
