"""The rule vectors (tests/vectors/*.vec), on CPython and on the MicroPython 1.27 VM.

Both runs go through firmware/pitboss/vectors.py, so a vector means the same thing
everywhere; the VM run checks the firmware as the board runs it.
"""
import glob
import os

import pytest

from pitboss import vectors

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = sorted(glob.glob(os.path.join(HERE, "vectors", "*.vec")))


def _cases():
    for path in FILES:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                case = vectors.parse(line)
                if case:
                    yield pytest.param(case, id="%s:%d" % (os.path.basename(path), n))


CASES = list(_cases())


def test_vector_files_exist():
    assert len(FILES) >= 8 and len(CASES) >= 200


@pytest.fixture(params=["board", "host"])
def evaluator_path(request):
    """Every vector through the board's evaluator path (bytecode score/best, tables from
    pitboss/rules/tables/t5_*.py) and through the host's (host_tools/fast/hostfast.py)."""
    from host_tools.fast import hostfast
    if request.param == "board":
        hostfast.uninstall()
    else:
        hostfast.install()
    yield request.param
    hostfast.install()


@pytest.mark.parametrize("case", CASES)
def test_vector_cpython(case, evaluator_path):
    from pitboss.rules import evaluator
    from host_tools.fast import hostfast
    want = evaluator._board_score if evaluator_path == "board" else hostfast.score
    assert evaluator.score is want
    assert vectors.check(case) is None


def test_every_game_has_vectors():
    from pitboss.rules.profiles import GAMES
    games = {c.values[0][0] for c in CASES}
    assert set(GAMES) <= games


def _cpython_tally():
    return vectors.run_files(FILES, lambda m: None)


@pytest.mark.vm  # the rest of the module is host (tests/support/tiers.py)
def test_vectors_on_micropython_vm():
    from host_tools.emu.vm import run_script
    r = run_script("from pitboss import vectors\nraise SystemExit(vectors.main('/vectors'))",
                   mounts={os.path.join(HERE, "..", "firmware"): "/",
                           os.path.join(HERE, "vectors"): "/vectors"},
                   timeout=600)
    lines = r.stdout.splitlines()
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    games = {}
    for line in lines:
        if line.startswith("GAME "):
            _, game, ok, bad = line.split()
            games[game] = [int(ok), int(bad)]
    assert lines[-1].startswith("VECTORS ")
    # The VM must have run exactly the cases CPython ran, and passed them all.
    assert games == _cpython_tally()
    assert all(bad == 0 for _, bad in games.values())
