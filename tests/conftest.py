import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (REPO, os.path.join(REPO, "firmware")):
    if path not in sys.path:
        sys.path.insert(0, path)

# CPython has no `framebuf`: the firmware's display code draws on the host's stand-in,
# installed explicitly here as the host tools do (it is not part of the firmware).
from host_tools import framebuf_shim  # noqa: E402

framebuf_shim.install()
