"""Issue 3's proof, end to end on the virtual board with the real mpremote: flash it,
run every vector on it, rank 1,000 random hands per game there and on CPython with
identical results, power-cycle it, find the firmware still verified, stop it.

The board's side runs in the background from the start of the session
(tests/support/board_e2e.py, tests/support/background.py); CPython's is computed here."""
import pytest

from host_tools.deploy.board_vectors import compare, cpython_run
from pitboss.rules import profiles
from pitboss.verbs.rank import rank_reply


@pytest.mark.background("e2e")
def test_flash_vectors_random_hands_power_cycle():
    from tests.support.background import Background
    r = Background.result("e2e")
    assert r["first_copied"], "a blank board must receive every file"
    host, on_board = cpython_run(), r["vectors"]
    assert compare(host, on_board) == []
    assert sum(ok for ok, _ in on_board[0].values()) == sum(ok for ok, _ in host[0].values())
    assert set(r["hands"]) == set(profiles.GAMES)
    for game, (hands, got) in r["hands"].items():
        assert len(hands) == 1000
        want = [dict(rank_reply(game, h), ok=True) for h in hands]
        assert got == want, game
    assert r["verified"]
    assert r["again_copied"] == [], "nothing changed, so nothing may be copied"
