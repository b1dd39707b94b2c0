"""Issue 4 and 5 on the virtual board (the MicroPython 1.27 VM behind a pty, flashed with
the real mpremote): rounds dealt through the simulated shoe settle exactly as the same
firmware settles them on CPython; recall, screenshot; and power cuts at 50 points of
rounds of every game, each resumed from the board's saved flash with the same final
settlement and no settled round lost or doubled."""
import os
import shutil
import signal
import tempfile
import time

import pytest

from host_tools.table import export as ex
from host_tools.deploy import flash as flashing
from host_tools.emu import vboard
from host_tools.emu import vboard_state
from host_tools.table.auth import KeyStore
from host_tools.link.boardlink import Board
from host_tools.emu.screenshot import decode_png, png_from_fb
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round, play_many, play_rounds
from host_tools.table.targets import BoardTarget, LocalTarget
from pitboss import games
from tests.support.seeded_rounds import SEEDED

GAMES = games.ids()  # every table game in the registry
SEATS = {"pr-pai-gow": 4, "pr-pai-gow-a5-low": 6}
ROUNDS = 3


class VirtualTable:
    """A virtual board with its own flash folder, flashed and provisioned once.
    flashed: a flash folder already written by `pitboss flash` (conftest.py's vb_flash),
    copied instead of flashing again."""

    def __init__(self, base, flashed=None):
        self.state, self.flash = base / "state", base / "flash"
        self.keys = KeyStore(str(base / "keys"))
        if flashed is not None:
            shutil.copytree(flashed, self.flash)
        st = vboard.start(self.flash, state_dir=self.state)
        if flashed is None:
            flashing.flash(st["port"], progress=None)
        self._connect(st)
        Configurator(self.target, "vt", self.keys).provision()

    def _connect(self, st):
        self.pid = st["pid"]
        self.board = Board(st["port"])
        self.target = BoardTarget(self.board)
        self.conf = Configurator(self.target, "vt", self.keys)

    def power_cut(self):
        """SIGKILL the whole board (bridge and VM) and start it again on its flash."""
        self.board.close()
        os.killpg(self.pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while vboard_state.alive(self.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        self._connect(vboard.start(self.flash, state_dir=self.state))

    def close(self):
        self.board.close()
        vboard_state.stop(self.state)


@pytest.fixture(scope="module")
def vt(tmp_path_factory, vb_flash):
    t = VirtualTable(tmp_path_factory.mktemp("table"), vb_flash)
    try:
        yield t
    finally:
        t.close()


def local(game, seats):
    # The reference: the same firmware on CPython (no fsync: nothing relies on its files).
    t = LocalTarget(tempfile.mkdtemp(prefix="pitboss-ref-"), durable=False)
    c = Configurator(t, "ref", KeyStore(tempfile.mkdtemp()))
    c.provision()
    assert c.configure(game, seats)["ok"]
    t.conf = c
    return t


def play_exported(target, conf, game, seats, rounds, seed, chunk=50):
    """play_many in chunks, exporting (and acknowledging) the journal after each: the
    journal keeps what was not exported and halts the table (journal_full) rather than
    delete it, and 200 rounds of a Pai Gow table are more than its budget."""
    out = []
    store = tempfile.mkdtemp(prefix="pitboss-export-")
    for i in range(0, rounds, chunk):
        out += play_many(target, game, seats, min(chunk, rounds - i), seed + i)
        ex.export(target, conf.keys, conf.board_id, store)
    return out


@pytest.mark.parametrize("game", GAMES)
def test_shoe_rounds_settle_on_the_board_as_on_cpython(vt, game):
    seats = SEATS.get(game, 5)
    assert vt.conf.configure(game, seats)["ok"]
    on_board = list(play_rounds(vt.target, game, seats, ROUNDS, seed=500))
    on_cpython = list(play_rounds(local(game, seats), game, seats, ROUNDS, seed=500))
    for b, c in zip(on_board, on_cpython):
        b.pop("round"), c.pop("round")
        assert b == c  # every hand, every category, every amount
    assert len(on_board) == ROUNDS


@pytest.fixture(scope="module")
def seeded():
    # tests/support/seeded_rounds.py, on a virtual board of its own in the background from the
    # start of the session (tests/support/background.py).
    from tests.support.background import Background
    return Background.result("seeded")


@pytest.mark.background("seeded")
@pytest.mark.parametrize("game", GAMES)
def test_200_seeded_rounds_settle_on_the_board_as_on_cpython(seeded, game):
    """Every round dealt through the board's shoe input (frames, parser, table) and
    settled there, against the same firmware on CPython: hand by hand, amount by amount."""
    on_board, on_cpython = seeded["board"][game], seeded["cpython"][game]
    assert len(on_board) == len(on_cpython) == SEEDED
    for i, (b, c) in enumerate(zip(on_board, on_cpython)):
        assert b.get("ok") and c.get("ok"), (i, b, c)
        b.pop("round"), c.pop("round")
        assert b == c, (game, i)


def test_recall_and_meters_from_the_board(vt):
    reply = vt.target.commands(["recall 10", "meters"])
    rounds, meters = reply[0]["rounds"], reply[1]
    assert len(rounds) == 10
    seqs = [r["seq"] for r in rounds]
    assert seqs == sorted(seqs) and len(set(seqs)) == 10
    assert all(r["result"]["seats"] and "cards" in r["result"]["seats"][0] for r in rounds)
    assert meters["totals"]["rounds"] == ROUNDS * len(GAMES)


def test_screenshot_shows_the_last_result(vt):
    buf = vt.target.screen()
    assert len(buf) == 128 * 64 // 8 and any(buf)
    w, h, px = decode_png(png_from_fb(buf, 128, 64, scale=1))
    assert (w, h) == (128, 64) and any(any(row) for row in px)


# ---- power cuts -----------------------------------------------------------------------
def _round_lines(game, seats, seed):
    before, frames, after = plan_round(game, seats, seed)
    # After a cut, the dealer goes on by hand (the bench protocol's `card`), so each
    # card is its own command here; the shoe path itself is tested above.
    from host_tools.emu.shoe_sim import shuffled_deck
    from pitboss.rules.profiles import get
    n = len(frames) // 12
    cards = ["card %d" % c for c in shuffled_deck(seed, get(game).deck)[:n]]
    return before + cards + after


def _cut_points(lines):
    """Indices (cut after that command) covering every kind of record: first and last
    wager, the deal, first / middle / last card, the first decision and the settlement."""
    kinds = [ln.split()[0] for ln in lines]
    cards = [i for i, k in enumerate(kinds) if k == "card"]
    pts = {0, kinds.index("deal"), cards[0], cards[len(cards) // 2], cards[-1],
           len(lines) - 1}
    if len(cards) + kinds.index("deal") + 2 < len(lines):
        pts.add(cards[-1] + 1)  # the first house way / decision
    wagers = [i for i, k in enumerate(kinds) if k == "wager"]
    pts.add(wagers[-1])
    return sorted(pts)


def test_power_cuts_at_50_points_resume_every_round_exactly(vt):
    cuts_done = replayed = 0
    for gi, game in enumerate(GAMES):
        seats = SEATS.get(game, 3)
        assert vt.conf.configure(game, seats)["ok"]
        ref = local(game, seats)
        before = vt.target.commands(["meters"])[0]["totals"]["rounds"]
        plays = 2 if gi == 0 else 1
        for r in range(plays):
            seed = 900 + 10 * gi + r
            lines = _round_lines(game, seats, seed)
            want = ref.commands(lines)
            assert all(x["ok"] for x in want)
            cuts = _cut_points(lines)
            if cuts_done + len(cuts) > 50:
                cuts = cuts[:50 - cuts_done]
            i = 0
            got_settle = None
            for cut in cuts + [len(lines) - 1]:
                replies = vt.target.commands(lines[i:cut + 1])
                assert all(x["ok"] for x in replies), replies
                if lines[cut] == "settle":
                    got_settle = replies[-1]
                i = cut + 1
                if cut in cuts:
                    # Resume: the board replays its journal and must be exactly where it
                    # was (same phase, same cards dealt to the same seats).
                    expect = vt.target.commands(["status"])[0]
                    vt.power_cut()
                    cuts_done += 1
                    again = vt.target.commands(["status"])[0]
                    assert again == expect, (game, lines[cut])
                    boot = vt.target.run("import json\nprint(json.dumps(A.app().boot))")
                    replayed += boot[0]["replayed"]
                if i >= len(lines):
                    break
            assert got_settle is not None
            got_settle.pop("round")
            w = dict(want[-1])
            w.pop("round")
            assert got_settle == w, game
        # Every settled round counted once: none lost, none doubled.
        after = vt.target.commands(["meters"])[0]["totals"]["rounds"]
        assert after - before == plays
        recalled = vt.target.commands(["recall %d" % plays])[0]["rounds"]
        assert len({r["seq"] for r in recalled}) == plays
    assert cuts_done == 50
    print("50 power cuts; journal records replayed at the 50 boots: %d" % replayed)


# ---- issue 12: leaks and misdeals, on the board ------------------------------------------
def _codes(vt):
    return [a["code"] for a in vt.target.commands(["status"])[0]["tilts"]]


def test_dealer_cards_never_leave_the_board_before_settlement(vt):
    """Three Card Prime on the board: while players decide, neither `status` nor the
    replies to the shoe's cards name a dealer card; once settled, status shows them."""
    import json

    from host_tools.emu.shoe_sim import shuffled_deck
    from pitboss.rules.cards import name

    game, seats, seed = "pa-three-card-prime", 3, 1201
    assert vt.conf.configure(game, seats)["ok"]
    before, frames, after = plan_round(game, seats, seed)
    replies = vt.target.round(before, frames, [])
    st = vt.target.commands(["status"])[0]
    dealer = [name(c) for c in shuffled_deck(seed, 52)[3:12:4]]
    assert st["phase"] == "deciding" and st["hands"]["0"] == [None, None, None]
    text = json.dumps([st, replies])
    assert not [c for c in dealer if '"%s"' % c in text]
    assert vt.target.commands(after)[-1]["ok"]
    assert vt.target.commands(["status"])[0]["hands"]["0"] == dealer


def test_a_corrupted_first_frame_on_the_board_tilts_and_voids_the_round(vt):
    """The board's shoe numbers frames across rounds: a lost first frame of a round is a
    gap (a tilt), not the next card taken as card 1; clearing voids the round."""
    from host_tools.emu.shoe_sim import frames as shoe_frames
    from host_tools.emu.shoe_sim import shuffled_deck

    game, seats = "pa-three-card-prime", 2
    assert vt.conf.configure(game, seats)["ok"]
    before, frames, after = plan_round(game, seats, 1202)
    n = len(frames) // 12  # frames 0..n-1
    assert vt.target.round(before, frames, after)[-1]["ok"]
    before, _, after = plan_round(game, seats, 1203)
    deck = shuffled_deck(1203, 52)[:n]
    replies = vt.target.round(before, shoe_frames(deck, start_seq=n,
                                                  faults=[(0, "corrupt")]), after)
    # The torn frame is a transport error (an acknowledging shoe resends it); this shoe
    # streams on, so the next frame shows the gap: the misdeal.
    assert _codes(vt) == ["shoe_gap"]
    assert replies[-1]["error"]["code"] == "tilted"  # the settle
    rounds_before = vt.target.commands(["meters"])[0]["totals"]["rounds"]
    r = vt.conf.signed("tilt-clear floor1")
    assert r["ok"] and r["active"] == [] and r["voided"]["house_net"] == 0
    assert vt.target.commands(["recall 1"])[0]["rounds"][0]["result"]["void"] == \
        "shoe_gap"
    assert vt.target.commands(["meters"])[0]["totals"]["rounds"] == rounds_before
    assert vt.target.commands(["status"])[0]["phase"] == "configured"
