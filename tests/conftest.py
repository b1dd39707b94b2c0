import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (REPO, os.path.join(REPO, "firmware")):
    if path not in sys.path:
        sys.path.insert(0, path)

# The host's score()/best() (host_tools/fast/hostfast.py) are installed explicitly, as the
# host tools do; tests of the board's own path call evaluator._board_score /
# _board_best, or take the `board_path` fixture (tests/host/test_vectors.py runs every vector
# both ways).
from host_tools.fast import hostfast  # noqa: E402

hostfast.install()

# CPython has no `framebuf`: the firmware's display code draws on the host's stand-in,
# installed explicitly here as the host tools do (it is not part of the firmware).
from host_tools.emu import framebuf_shim  # noqa: E402

framebuf_shim.install()

from tests.support.tiers import FOLDERS, tiers_of  # noqa: E402

# ---- test tiers ----------------------------------------------------------------------
# Every test gets exactly one tier marker, from the folder it lives in: tests/host/,
# tests/slow/, tests/vm/, tests/board/, tests/pico/ (board tier), tests/static/,
# tests/floor/, each with a conftest.py naming its tier (tests/support/tiers.py; the
# markers are registered in pyproject.toml; DEVELOPERS.md, "Tests: what runs where",
# says how to run each). A test outside them is a collection error, so a new file cannot
# slip out of every tier.
@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        tiers = tiers_of(item)
        if len(tiers) != 1:
            raise pytest.UsageError(
                "%s has %s: a test module belongs in one tier folder, tests/{%s}/ "
                "(tests/support/tiers.py), helpers in tests/support/"
                % (item.nodeid, "tiers %s" % ", ".join(tiers) if tiers else "no test tier",
                   ",".join(FOLDERS)))
    # Tests of background jobs go last: pytest runs in order, so one of them met early
    # would hold the foreground idle until its job ends, instead of the rest of the suite
    # running meanwhile (the jobs start at collection: pytest_collection_finish in
    # tests/board/conftest.py and tests/pico/conftest.py).
    # (Tried on 2026-12-01 and reverted when the Picos lost their ports; that was the
    # census's forked pool holding their port locks: host_tools.process_pool.)
    # The slow tier (the census, a pool of one worker per core) goes just before them:
    # met early, its workers fight both Pico emulators for CI's two cores; met late, it
    # fills the core the foreground alone leaves idle once the Pico's jobs are done.
    def place(i):  # a stable sort keeps the modules' own order within each group
        if (i.get_closest_marker("pico") is not None or
                i.get_closest_marker("background") is not None):
            return 2
        return 1 if i.get_closest_marker("slow") is not None else 0
    items.sort(key=place)

# ---- one flashed virtual board for the board modules ---------------------------------
# Here, not in tests/board/: the floor's collector tests (tests/floor/) take it too, and
# one session flashes it once.
@pytest.fixture(scope="session")
def vb_flash(tmp_path_factory):
    """A virtual board's flash folder written once by `pitboss flash` (service mode, no
    key yet): the board modules start their boards from copies of it, as a factory
    writes one image onto every board. A flash is ~20 s of the VM; tests/board/test_flash.py
    and the e2e job flash boards of their own, since the flashing is what they test.
    Never written to: copy it (shutil.copytree) and start a board on the copy."""
    from host_tools.deploy import flash as flashing
    from host_tools.emu.vboard import virtual_board
    base = tmp_path_factory.mktemp("vb-flashed")
    with virtual_board(base / "flash", service=True) as st:
        flashing.flash(st["port"], progress=None)
    return base / "flash"


def pytest_terminal_summary(terminalreporter):
    mod = sys.modules.get("tests.support.timeline")
    if mod is not None:
        mod.report(terminalreporter.write_line)
    tier = sys.modules.get("tests.support.pico_tier")
    if tier is not None:  # the budget session's figures (issue 27), when it ran
        tier.report_session(terminalreporter.write_line)
