import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (REPO, os.path.join(REPO, "firmware")):
    if path not in sys.path:
        sys.path.insert(0, path)

# The host's score()/best() (host_tools/hostfast.py) are installed explicitly, as the
# host tools do; tests of the board's own path call evaluator._board_score /
# _board_best, or take the `board_path` fixture (tests/test_vectors.py runs every vector
# both ways).
from host_tools import hostfast  # noqa: E402

hostfast.install()
