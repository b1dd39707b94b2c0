"""Issue 3's proof on the virtual board, as a background job (tests/support/background.py): flash
a blank board, run every vector on it, rank 1,000 random hands per game there, power-cycle
it, verify and flash again. What the board answered is returned; tests/board/test_board_e2e.py
compares it with CPython (in the foreground, so nothing here uses the firmware on CPython).
"""
import random

HANDS_PER_GAME = 1000


def random_hands(game, n, seed):
    from pitboss.rules import profiles
    from pitboss.rules.cards import names

    p = profiles.get(game)
    rng = random.Random(seed)
    return [" ".join(names(rng.sample(range(p.deck), p.size))) for _ in range(n)]


def job(base):
    from host_tools.deploy import flash as flashing
    from host_tools.deploy import verify
    from host_tools.deploy.board_rank import rank_lines
    from host_tools.deploy.board_vectors import board_run
    from host_tools.link.boardlink import Board
    from host_tools.emu.vboard import start
    from host_tools.emu.vboard_state import stop
    from pitboss.rules import profiles

    base.mkdir(parents=True, exist_ok=True)
    state, flash_dir = base / "state", base / "flash"
    out = {}
    st = start(flash_dir, state_dir=state)
    try:
        out["first_copied"] = len(flashing.flash(st["port"], progress=None).copied)
        b = Board(st["port"])
        try:
            out["vectors"] = board_run(b)
            out["hands"] = {}
            for i, game in enumerate(profiles.GAMES):
                hands = random_hands(game, HANDS_PER_GAME, seed=1000 + i)
                out["hands"][game] = (hands, rank_lines(b, game, hands))
        finally:
            b.close()
        # Power cycle: kill the board's process, start it again on the same flash.
        stop(state)
        st = start(flash_dir, state_dir=state)
        out["verified"] = verify.verify(st["port"], progress=None).ok
        out["again_copied"] = flashing.flash(st["port"], progress=None).copied
    finally:
        stop(state)
    return out
