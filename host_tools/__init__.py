"""pitboss host tools: the CPython side (rank, census, flash, vectors, virtual board).

The evaluator is the firmware's own `pitboss` package, imported unchanged from
firmware/ so the host and the board cannot disagree about a rule.

Where things are (REPO, home()):
- In a checkout (also an editable install) REPO is the repository: firmware/, boards/,
  tests/vectors/ and package.json sit beside host_tools/, and the tools write build/,
  node_modules/ and .pitboss/ there, as they always have.
- Installed from a wheel (`pip install .`), the same tree is package data in
  host_tools/_tree (setup.py copies it), and the tools write under home():
  $PITBOSS_HOME, default ~/.pitboss.
Either way firmware/ (for `pitboss`) and REPO (for `boards`) go on sys.path here.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT = os.path.dirname(_HERE)
INSTALLED = not os.path.isfile(os.path.join(_CHECKOUT, "firmware", "pitboss", "__init__.py"))
REPO = os.path.join(_HERE, "_tree") if INSTALLED else _CHECKOUT
FIRMWARE = os.path.join(REPO, "firmware")
for _p in (REPO, FIRMWARE):  # FIRMWARE ends up first
    if _p not in sys.path:
        sys.path.insert(0, _p)


def home():
    """Where the host tools write (build/, node_modules/, the virtual board's state): the
    checkout itself, or $PITBOSS_HOME (default ~/.pitboss) for an installed package,
    whose own folder may be read-only and is replaced by every upgrade."""
    if not INSTALLED:
        return REPO
    return os.environ.get("PITBOSS_HOME") or os.path.join(os.path.expanduser("~"), ".pitboss")
