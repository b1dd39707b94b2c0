import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (REPO, os.path.join(REPO, "firmware")):
    if path not in sys.path:
        sys.path.insert(0, path)
