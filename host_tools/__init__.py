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
Importing host_tools changes nothing: `pitboss` (firmware/pitboss) and `boards` (boards/)
are packages of the distribution beside host_tools (pyproject.toml), importable from a
wheel or an editable install. The files the tools use as files (the firmware sources a
flash copies, firmware/manifest.py, boards/, tests/vectors/ and the npm manifest) are
read under REPO. A checkout that was never installed (`python -m host_tools` from the
repository root, with only the standard library) finds them through checkout_paths(),
which the entry point (__main__.py) and the processes the tools start ask for explicitly.
"""
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT = os.path.dirname(_HERE)
INSTALLED = not os.path.isfile(os.path.join(_CHECKOUT, "firmware", "pitboss", "__init__.py"))
REPO = os.path.join(_HERE, "_tree") if INSTALLED else _CHECKOUT
FIRMWARE = os.path.join(REPO, "firmware")


def checkout_paths():
    """The folders a never-installed checkout needs on the module path for `pitboss` and
    `boards` (firmware/ first, then the repository); none when they are importable, as
    from a wheel or an editable install."""
    import importlib.util
    if INSTALLED or importlib.util.find_spec("pitboss") is not None:
        return []
    return [FIRMWARE, REPO]


def home():
    """Where the host tools write (build/, node_modules/, the virtual board's state): the
    checkout itself, or $PITBOSS_HOME (default ~/.pitboss) for an installed package,
    whose own folder may be read-only and is replaced by every upgrade."""
    if not INSTALLED:
        return REPO
    return os.environ.get("PITBOSS_HOME") or os.path.join(os.path.expanduser("~"), ".pitboss")


def process_pool(workers, initializer=None):
    """A multiprocessing Pool of `workers` whose processes inherit none of this one's open
    files. Forked workers would: mpremote opens a serial port with an exclusive lock
    (flock), and a worker forked while another thread has a board's port open keeps that
    lock until the pool ends, so the port cannot be opened again meanwhile ("failed to
    access .../tty": the test suite's Pico tier lost its board to the census this way,
    2026-12-01). Forkserver workers are forked from a clean server process instead, so
    they start with nothing set up: `initializer` runs in each first."""
    import multiprocessing
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return multiprocessing.get_context(method).Pool(workers, initializer)
