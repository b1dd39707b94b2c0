"""Issue 3's proof, end to end on the virtual board with the real mpremote: flash it,
run every vector on it, rank 1,000 random hands per game there and on CPython with
identical results, power-cycle it, find the firmware still verified, stop it."""
import random

import pytest

from host_tools import flash as flashing
from host_tools.board_rank import rank_lines
from host_tools.board_vectors import board_run, compare, cpython_run
from host_tools.boardlink import Board
from host_tools.vboard import start, stop
from pitboss import profiles
from pitboss.cards import names
from pitboss.protocol import rank_reply

HANDS_PER_GAME = 1000


def random_hands(game, n, seed):
    p = profiles.get(game)
    rng = random.Random(seed)
    return [" ".join(names(rng.sample(range(p.deck), p.size))) for _ in range(n)]


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    base = tmp_path_factory.mktemp("vboard")
    state, flash_dir = base / "state", base / "flash"
    st = start(flash_dir, state_dir=state)
    try:
        yield {"port": st["port"], "state": state, "flash": flash_dir}
    finally:
        stop(state)


def test_flash_vectors_random_hands_power_cycle(board):
    port = board["port"]
    first = flashing.flash(port, progress=None)
    assert first.copied, "a blank board must receive every file"

    b = Board(port)
    try:
        host, on_board = cpython_run(), board_run(b)
        assert compare(host, on_board) == []
        assert sum(ok for ok, _ in on_board[0].values()) == sum(ok for ok, _ in host[0].values())

        for i, game in enumerate(profiles.GAMES):
            hands = random_hands(game, HANDS_PER_GAME, seed=1000 + i)
            got = rank_lines(b, game, hands)
            want = [dict(rank_reply(game, h), ok=True) for h in hands]
            assert got == want, game
    finally:
        b.close()

    # Power cycle: kill the board's process, start it again on the same flash.
    stop(board["state"])
    st = start(board["flash"], state_dir=board["state"])
    assert flashing.verify(st["port"], progress=None).ok
    again = flashing.flash(st["port"], progress=None)
    assert again.copied == [], "nothing changed, so nothing may be copied"
