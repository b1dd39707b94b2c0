"""Issue 4's 200 seeded rounds of every game on the virtual board against the same
firmware on CPython, as a background job (tests/support/background.py): the board plays while
the CPython reference plays the same seeds in a subprocess, and the rest of the suite runs.
tests/board/test_table_board.py checks the result hand by hand, amount by amount.

    python -m tests.support.seeded_rounds ref OUT.json   the CPython side alone (the subprocess)
"""
import json
import os
import subprocess
import sys
import tempfile

SEEDED = 200  # issue 4: 200 seeded rounds of each game, board vs CPython
SEED = 7000
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _games():
    from pitboss import games
    from tests.board.test_table_board import SEATS
    return [(g, SEATS.get(g, 5)) for g in games.ids()]


def reference():
    """Every game's seeded rounds on CPython: {game: [settle reply, ...]}."""
    from tests.board.test_table_board import local, play_exported
    out = {}
    for game, seats in _games():
        ref = local(game, seats)
        out[game] = play_exported(ref, ref.conf, game, seats, SEEDED, seed=SEED)
    return out


def job(base):
    from tests.board.test_table_board import VirtualTable, play_exported
    base.mkdir(parents=True, exist_ok=True)
    ref_file = base / "reference.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [REPO, os.path.join(REPO, "firmware"), os.environ.get("PYTHONPATH", "")]))
    ref = subprocess.Popen([sys.executable, "-m", "tests.support.seeded_rounds", "ref",
                            str(ref_file)], cwd=REPO, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        vt = VirtualTable(base / "board")
        try:
            board = {}
            for game, seats in _games():
                r = vt.conf.configure(game, seats)
                assert r["ok"], (game, r)
                board[game] = play_exported(vt.target, vt.conf, game, seats, SEEDED,
                                            seed=SEED)
        finally:
            vt.close()
        log = ref.communicate(timeout=900)[0]
    finally:
        if ref.poll() is None:
            ref.kill()
    if ref.returncode != 0:
        raise RuntimeError("the CPython reference failed:\n" + log.decode(errors="replace"))
    with open(ref_file) as f:
        return {"board": board, "cpython": json.load(f)}


if __name__ == "__main__":
    if sys.argv[1:2] != ["ref"] or len(sys.argv) != 3:
        sys.exit("usage: python -m tests.support.seeded_rounds ref OUT.json")
    sys.path[:0] = [REPO, os.path.join(REPO, "firmware")]
    from host_tools.emu import framebuf_shim
    from host_tools.fast import hostfast
    hostfast.install()
    framebuf_shim.install()
    data = reference()
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(sys.argv[2])))
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    os.replace(tmp, sys.argv[2])
