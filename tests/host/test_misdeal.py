"""Issue 12, "Leaks" and "Misdeals that settle without an alarm", on CPython (the same
firmware the board runs; tests/board/test_table_board.py repeats the board-facing cases on the
virtual board).

Leaks: no face-down card (the Three Card Prime or Caribbean dealer's, the Pai Gow
banker's, an empty position's packet) in any reply, tilt or log line the bench port can
read before settlement.

Misdeals: every card the shoe delivers that the table does not take as dealt tilts with
its own code, and the round it belongs to is voided at tilt-clear (wagers returned,
journalled, meters untouched), never settled misaligned."""
import json
import os
import re

import pytest

from tests.support import fake_mfrc522 as F
from host_tools.emu import shoe_sim
from host_tools.table.auth import KeyStore
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round
from host_tools.table.targets import LocalTarget
from pitboss.hw import serialshoe, shoe as shoeframe
from pitboss.hw import shoe as shoe_mod
from pitboss.store import tilt
from pitboss.rules.cards import name

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Shoe:
    """A serial shoe as the hardware is one: its frame numbers run on across rounds."""

    def __init__(self, target):
        self.t = target
        self.seq = 0

    def send(self, cards, faults=()):
        data = shoe_sim.frames(cards, start_seq=self.seq, faults=faults)
        self.seq = (self.seq + len(cards)) & 0xFFFF
        self.t._hw.shoe_uart().feed(data)
        return list(self.t.app.poll())

    def raw(self, data):
        self.t._hw.shoe_uart().feed(data)
        return list(self.t.app.poll())


def make(tmp_path, game="pa-three-card-prime", seats=3, name_="t"):
    t = LocalTarget(str(tmp_path / name_))
    conf = Configurator(t, "m1", KeyStore(str(tmp_path / (name_ + "-keys"))))
    conf.provision()
    assert conf.configure(game, seats)["ok"]
    return t, conf, Shoe(t)


def cmd(t, line):
    return t.commands([line])[0]


def codes(t):
    return [a["code"] for a in cmd(t, "status")["tilts"]]


def start(t, game, seats, seed):
    """Wagers and the deal of a planned round: (its deck in deal order, the lines after)."""
    before, _, after = plan_round(game, seats, seed)
    replies = t.commands(before)
    assert all(r["ok"] for r in replies), replies
    from pitboss.rules import profiles
    deck = shoe_sim.shuffled_deck(seed, profiles.get(game).deck)
    return deck, len(replies[-1]["order"]), after


def settle_round(t, shoe, game, seats, seed):
    deck, n, after = start(t, game, seats, seed)
    shoe.send(deck[:n])
    replies = t.commands(after)
    assert replies[-1]["ok"], replies[-1]
    return replies[-1]


def assert_voided(t, conf, round_no, wagers, reboot=True):
    """tilt-clear voids the lost round: the wagers go back, the void is journalled (and
    recalled), no money moves in the meters, the next round starts clean."""
    meters = cmd(t, "meters")["totals"]
    r = conf.signed("tilt-clear floor1")
    assert r["ok"], r
    assert r["active"] == []
    v = r["voided"]
    assert v["round"] == round_no and v["house_net"] == 0
    assert {s["seat"]: s["wagers"] for s in v["seats"]} == wagers
    assert all(s["amount"] == 0 for s in v["seats"])
    after = cmd(t, "meters")["totals"]
    assert (after["rounds"], after["wagered"], after["paid"]) == (
        meters["rounds"], meters["wagered"], meters["paid"])
    st = cmd(t, "status")
    assert st["phase"] == "configured" and st["round"] == round_no + 1
    last = cmd(t, "recall 1")["rounds"][0]
    assert last["round"] == round_no and last["result"]["void"] == v["void"]
    if reboot:  # (a new LocalTarget takes over the virtual board's shoe UART)
        # The void survives a power cycle: replay lands in the same state.
        assert cmd(LocalTarget(t.root), "status")["round"] == round_no + 1


def planned_wagers(game, seats, seed):
    before, _, _ = plan_round(game, seats, seed)
    out = {}
    for ln in before:
        w = ln.split()
        if w[0] == "wager":
            out[int(w[1])] = {k: int(v) for k, v in (x.split("=") for x in w[2:])}
    return out


# ---- leaks ------------------------------------------------------------------------------
def _no_names(text, cards):
    return [name(c) for c in cards if re.search(r'\b%s\b' % name(c), text)]


def test_three_card_prime_dealer_cards_stay_hidden_while_players_decide(tmp_path):
    t, conf, shoe = make(tmp_path)
    deck, n, after = start(t, "pa-three-card-prime", 3, 21)
    replies = shoe.send(deck[:n])
    order = [0 if i % 4 == 3 else i % 4 + 1 for i in range(n)]
    dealer = [c for c, r in zip(deck, order) if r == 0]
    st = cmd(t, "status")
    assert st["phase"] == "deciding"
    assert st["hands"]["0"] == [None, None, None]
    assert st["hands"]["1"] == [name(c) for c, r in zip(deck, order) if r == 1]
    for r in replies:
        assert r["ok"] and (r["card"] is None) == (r["to"] == 0)
    text = json.dumps([st, replies, cmd(t, "tilt"), cmd(t, "recall 5")])
    assert _no_names(text, dealer) == []
    # Settled: the dealer's hand is shown.
    res = t.commands(after)[-1]
    assert res["ok"] and cmd(t, "status")["hands"]["0"] == [name(c) for c in dealer]


def test_pai_gow_banker_and_empty_positions_stay_hidden_while_hands_are_set(tmp_path):
    t, conf, shoe = make(tmp_path, "pr-pai-gow", 3)
    deck, n, after = start(t, "pr-pai-gow", 3, 33)
    replies = shoe.send(deck[:n])
    st = cmd(t, "status")
    assert st["phase"] == "setting"
    hidden = []
    for r, c in zip(replies, deck[:n]):
        assert r["ok"]
        if r["to"] == 0 or r["to"] > 3:  # the banker, positions nobody plays
            assert r["card"] is None
            hidden.append(c)
        else:
            assert r["card"] == name(c)
    assert len(hidden) == 7 * 4
    assert all(st["hands"][k] == [None] * 7 for k in st["hands"] if int(k) in (0, 4, 5, 6))
    assert _no_names(json.dumps([st, replies]), hidden) == []
    assert t.commands(after)[-1]["ok"]
    assert None not in cmd(t, "status")["hands"]["0"]


def test_caribbean_shows_only_the_face_up_dealer_card(tmp_path):
    t, conf, shoe = make(tmp_path, "qc-caribbean", 2)
    deck, n, after = start(t, "qc-caribbean", 2, 5)
    replies = shoe.send(deck[:n])
    dealer = deck[2:n:3]
    st = cmd(t, "status")
    assert st["hands"]["0"] == [None, None, None, None, name(dealer[4])]
    assert [r["card"] for r in replies if r["to"] == 0] == [None] * 4 + [name(dealer[4])]
    assert _no_names(json.dumps([st, replies]), dealer[:4]) == []


def test_a_duplicate_of_a_face_down_card_does_not_name_it(tmp_path):
    t, conf, shoe = make(tmp_path, "pa-three-card-prime", 1)
    assert cmd(t, "wager 1 ante=10")["ok"] and cmd(t, "deal")["ok"]
    shoe.send([0, 48])  # 2s to seat 1, As to the dealer
    shoe.send([48])  # As again: a duplicate of the dealer's face-down card
    text = json.dumps([cmd(t, "status"), cmd(t, "tilt")])
    assert "duplicate_card" in text and "As" not in text
    r = cmd(t, "card As")  # the bench probing for it learns nothing either
    assert "As" not in json.dumps(r)


def test_stale_and_conflicting_frames_do_not_name_their_card(tmp_path):
    t, conf, shoe = make(tmp_path, "pa-three-card-prime", 1)
    assert cmd(t, "wager 1 ante=10")["ok"] and cmd(t, "deal")["ok"]
    shoe.send([0, 48, 5])
    shoe.raw(shoeframe.encode(51, 2) + shoeframe.encode(50, 0x0001))  # conflict, stale
    assert set(codes(t)) == {"shoe_conflict", "shoe_stale"}
    text = json.dumps([cmd(t, "status"), cmd(t, "tilt")])
    assert "Ac" not in text and "Ad" not in text and " 51" not in text and " 50" not in text


# ---- misdeals: serial shoe ---------------------------------------------------------------
def test_a_corrupted_first_frame_of_a_round_tilts_and_voids_it(tmp_path):
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    settle_round(t, shoe, game, 3, 40)  # round 1: the shoe's count is now 12
    deck, n, after = start(t, game, 3, 41)
    shoe.send(deck[:n], faults=[(0, "corrupt")])
    # The torn frame is a transport error (not acknowledged: an acknowledging shoe sends
    # it again); this shoe streams on, so the next frame shows the gap it left.
    assert codes(t) == ["shoe_gap"]
    assert cmd(t, "status")["dealt"] == 0  # the next card never became card 1
    assert t.commands(after)[-1]["error"]["code"] == "tilted"
    assert_voided(t, conf, 2, planned_wagers(game, 3, 41))


def test_a_corrupted_first_frame_is_caught_when_the_shoe_counts_from_zero_each_round(
        tmp_path):
    # A shoe that restarts its count at each shuffle: frame 1 after frame 11 is stale.
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    settle_round(t, shoe, game, 3, 40)
    deck, n, after = start(t, game, 3, 41)
    shoe.raw(shoe_sim.frames(deck[:n], start_seq=0, faults=[(0, "corrupt")]))
    # Frames 1..10 are behind frame 11 (stale), frame 11 repeats its number (conflict);
    # the torn frame 0 itself is a transport error, not a misdeal.
    assert codes(t) == ["shoe_stale", "shoe_conflict"]
    assert cmd(t, "status")["dealt"] == 0
    assert_voided(t, conf, 2, planned_wagers(game, 3, 41))


def test_a_shoe_counting_from_zero_each_round_still_deals(tmp_path):
    # ...and when nothing is lost, its restart at 0 between rounds is only a notice.
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    for seed in (50, 51, 52):
        deck, n, after = start(t, game, 3, seed)
        shoe.raw(shoe_sim.frames(deck[:n], start_seq=0))
        assert t.commands(after)[-1]["ok"]
    assert codes(t) == [] and t.app.shoe.counts[shoe_mod.EV_RESTART] == 2


def _fake_ticks(t):
    now = [0]
    t.app.shoe._ticks = lambda: now[0]
    return now


def test_a_corrupted_last_frame_tilts_when_no_resend_comes(tmp_path):
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    now = _fake_ticks(t)
    deck, n, after = start(t, game, 3, 42)
    shoe.send(deck[:n], faults=[(n - 1, "corrupt")])
    # Torn: not acknowledged, so an acknowledging shoe sends it again; until the resend
    # timeout passes it is no misdeal (docs/shoe-protocol.md, "Transport errors").
    assert codes(t) == [] and cmd(t, "status")["dealt"] == n - 1
    now[0] = serialshoe.RESEND_MS - 1
    assert list(t.app.poll()) == [] and codes(t) == []
    now[0] = serialshoe.RESEND_MS
    assert list(t.app.poll()) == []
    assert codes(t) == ["shoe_bad_frame"]
    assert "unresent" in cmd(t, "status")["tilts"][0]["detail"]
    # The next round's first card can never complete this one.
    assert shoe.send([deck[n]])[0]["error"]["code"] == "tilted"
    assert cmd(t, "status")["dealt"] == n - 1
    assert_voided(t, conf, 1, planned_wagers(game, 3, 42))


def test_a_corrupted_frame_resent_in_time_is_no_misdeal(tmp_path):
    # The acknowledged link's repair: the torn frame is sent again (same seq, same card)
    # and dealt once; the round settles as if nothing had happened.
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    now = _fake_ticks(t)
    deck, n, after = start(t, game, 3, 42)
    shoe.send(deck[:n], faults=[(n - 1, "corrupt")])
    now[0] = serialshoe.RESEND_MS - 1
    [r] = shoe.raw(shoeframe.encode(deck[n - 1], n - 1))
    assert r["ok"] and codes(t) == []
    now[0] = 10 * serialshoe.RESEND_MS
    assert list(t.app.poll()) == [] and codes(t) == []
    assert t.commands(after)[-1]["ok"]
    assert t.app.shoe.counts[shoe_mod.EV_BAD_CRC] == 1


def test_an_extra_card_after_the_deal_tilts(tmp_path):
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    deck, n, after = start(t, game, 3, 43)
    shoe.send(deck[:n + 1])
    assert codes(t) == ["extra_card"]
    # The card after the deal is an undealt card: no reply or tilt names it.
    text = json.dumps([cmd(t, "status"), cmd(t, "tilt")])
    assert _no_names(text, [deck[n]]) == [] and '"c": %d' % deck[n] not in text
    assert t.commands(after)[-1]["error"]["code"] == "tilted"
    assert_voided(t, conf, 1, planned_wagers(game, 3, 43))


def test_a_joker_in_a_52_card_game_tilts(tmp_path):
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    deck, n, after = start(t, game, 3, 44)
    replies = shoe.send(deck[:4] + [52] + deck[4:n])
    assert replies[4]["error"]["code"] == "joker_not_allowed"
    assert codes(t) == ["joker_in_deck"]
    assert_voided(t, conf, 1, planned_wagers(game, 3, 44))


def test_a_53rd_card_tilts(tmp_path):
    # The whole 52-card deck and then a 53rd card through a 52-card game's shoe.
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    deck, n, after = start(t, game, 3, 45)
    replies = shoe.send(deck + [52])
    assert codes(t) == ["extra_card"]  # card 13 of 12; the rest arrive during the tilt
    assert [r["error"]["code"] for r in replies[n + 1:]] == ["tilted"] * (53 - n - 1)
    assert_voided(t, conf, 1, planned_wagers(game, 3, 45))


def test_cards_beyond_the_pai_gow_deal_tilt(tmp_path):
    game = "pr-pai-gow"
    t, conf, shoe = make(tmp_path, game, 2)
    deck, n, after = start(t, game, 2, 46)
    assert n == 49
    shoe.send(deck)  # all 53: four more than the deal
    assert codes(t) == ["extra_card"]
    assert_voided(t, conf, 1, planned_wagers(game, 2, 46))


def test_a_card_before_the_deal_tilts_and_returns_the_wagers(tmp_path):
    t, conf, shoe = make(tmp_path)
    assert cmd(t, "wager 2 ante=25")["ok"]
    assert shoe.send([7])[0]["error"]["code"] == "wrong_phase"
    assert codes(t) == ["card_before_deal"]
    assert cmd(t, "deal")["error"]["code"] == "tilted"
    assert_voided(t, conf, 1, {2: {"ante": 25}})


def test_a_card_between_rounds_tilts(tmp_path):
    t, conf, shoe = make(tmp_path)
    settle_round(t, shoe, "pa-three-card-prime", 3, 47)
    shoe.send([51])
    assert codes(t) == ["extra_card"]  # after round 1's deal, before round 2's
    r = conf.signed("tilt-clear floor1")
    assert r["ok"] and "voided" not in r  # round 1 is settled: nothing to void
    assert cmd(t, "recall 1")["rounds"][0]["result"]["house_net"] is not None


def test_a_stale_frame_tilts(tmp_path):
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    deck, n, after = start(t, game, 3, 48)
    shoe.send(deck[:5])
    shoe.raw(shoeframe.encode(deck[5], 2))  # an old frame number again
    assert codes(t) == ["shoe_stale"]
    assert_voided(t, conf, 1, planned_wagers(game, 3, 48))


def test_a_restart_in_the_middle_of_a_deal_tilts(tmp_path):
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    settle_round(t, shoe, game, 3, 49)
    deck, n, after = start(t, game, 3, 50)
    shoe.send(deck[:3])
    shoe.raw(shoeframe.encode(deck[3], 0))
    assert codes(t) == ["shoe_restart"]
    assert_voided(t, conf, 2, planned_wagers(game, 3, 50))


@pytest.mark.parametrize("fault,code", [("corrupt", "shoe_gap"),
                                        ("bad_card", "shoe_bad_card"),
                                        ("drop", "shoe_gap")])
def test_cards_arriving_during_a_tilt_void_the_round(tmp_path, fault, code):
    """The round goes on being dealt while the table is halted: those cards are lost, so
    the round can only be voided, never settled with the cards shifted."""
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    deck, n, after = start(t, game, 3, 60)
    replies = shoe.send(deck[:n], faults=[(3, fault)])
    tilts = codes(t)
    assert tilts and any(r.get("error", {}).get("code") == "tilted" for r in replies)
    assert_voided(t, conf, 1, planned_wagers(game, 3, 60), reboot=False)
    assert code in tilts  # each misdeal its own code
    # The next round is dealt and settled normally.
    assert settle_round(t, shoe, game, 3, 61)["round"] == 2


def test_a_lost_round_stays_lost_across_a_power_cycle(tmp_path):
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    deck, n, after = start(t, game, 3, 62)
    shoe.send(deck[:n], faults=[(4, "drop")])
    t2 = LocalTarget(t.root)
    assert codes(t2) == ["shoe_gap"]
    assert t2.commands(after)[-1]["error"]["code"] == "tilted"
    assert_voided(t2, Configurator(t2, "m1", conf.keys), 1, planned_wagers(game, 3, 62))


def test_a_lost_round_whose_tilt_never_reached_flash_is_tilted_again_at_boot(tmp_path):
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    deck, n, after = start(t, game, 3, 63)
    shoe.send(deck[:n], faults=[(4, "drop")])
    for f in ("tilt.a", "tilt.b"):  # as if the tilt's save had been lost
        p = os.path.join(t.root, "state", f)
        if os.path.exists(p):
            os.remove(p)
    t2 = LocalTarget(t.root)
    assert codes(t2) == ["shoe_gap"]
    assert t2.commands(after)[-1]["error"]["code"] == "tilted"


def test_frames_sent_while_the_board_was_off_are_a_gap(tmp_path):
    """The sequence runs on across power cycles too: the board resumes at the last frame
    it journalled, so frames it never received while off tilt instead of shifting the
    deal."""
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    deck, n, after = start(t, game, 3, 65)
    shoe.send(deck[:5])  # frames 0..4
    t2 = LocalTarget(t.root)  # power cycle; frames 5 and 6 are sent while it is off
    shoe2 = Shoe(t2)
    shoe2.seq = 7
    shoe2.send(deck[7:n])
    assert codes(t2) == ["shoe_gap"]
    assert cmd(t2, "status")["dealt"] == 5
    assert_voided(t2, Configurator(t2, "m1", conf.keys), 1, planned_wagers(game, 3, 65))


def test_a_power_cycle_mid_deal_loses_nothing_when_no_frame_is_missed(tmp_path):
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    settle_round(t, shoe, game, 3, 66)  # frames 0..11
    deck, n, after = start(t, game, 3, 67)
    shoe.send(deck[:5])  # frames 12..16
    t2 = LocalTarget(t.root)
    shoe2 = Shoe(t2)
    shoe2.seq = shoe.seq
    shoe2.raw(shoeframe.encode(deck[4], 16))  # the last frame retransmitted: a repeat
    shoe2.send(deck[5:n])
    assert codes(t2) == []
    assert t2.commands(after)[-1]["ok"]


def test_the_shoe_position_rides_in_the_journal_snapshot(tmp_path):
    # A segment that starts between rounds holds no card record: its snapshot carries the
    # shoe's last frame, so a reboot after any rotation still resumes the sequence.
    t, conf, shoe = make(tmp_path)
    settle_round(t, shoe, "pa-three-card-prime", 3, 68)
    ctl = t.app.ctl
    last = ctl.shoe_last  # the card event's int: card | (seq + 1) << 6
    assert last == shoe_sim.shuffled_deck(68, 52)[11] | 12 << 6
    snap = json.loads(ctl._snapshot(ctl.journal.last_seq + 1))
    assert snap["shoe"] == [11, shoe_sim.shuffled_deck(68, 52)[11]]  # [seq, card] as before
    ctl._restore(snap)
    assert ctl.shoe_last == last and ctl.table.round == 1


def test_newround_cannot_hide_a_lost_round(tmp_path):
    t, conf, shoe = make(tmp_path)
    deck, n, after = start(t, "pa-three-card-prime", 3, 64)
    shoe.send(deck[:n], faults=[(2, "drop")])
    assert cmd(t, "newround")["error"]["code"] == "tilted"
    assert cmd(t, "status")["round"] == 1


# ---- misdeals: RFID shoe ------------------------------------------------------------------
def _rfid(tmp_path, size=52, game="pa-three-card-prime"):
    from tests.host.test_rfid_table import RFIDBoard, Target, uid_for
    from pitboss.store.deckmap import new_deck_order
    t = Target(RFIDBoard(), str(tmp_path))
    conf = Configurator(t, "rf", KeyStore(str(tmp_path / "keys")))
    conf.provision()
    assert conf.signed("deck-register %d" % size)["registering"]
    for card in new_deck_order(size):
        [r] = t.read(uid_for(card))
        assert r["ok"], r
    assert conf.configure(game, 1)["ok"]
    assert all(r["ok"] for r in t.commands(["wager 1 ante=10", "deal"]))
    [r] = t.read(uid_for(48))
    assert r["ok"]
    return t, conf, uid_for


def test_rfid_read_error_tilts(tmp_path):
    t, conf, uid_for = _rfid(tmp_path)
    tag = F.Tag(uid_for(5))
    tag.bad_bcc = True
    t.board.chip.tags = [tag]
    assert list(t.app.poll()) == []
    assert codes(t) == ["rfid_read_error"]
    assert_voided(t, conf, 1, {1: {"ante": 10}})


def test_rfid_reader_fault_tilts(tmp_path):
    t, conf, uid_for = _rfid(tmp_path)
    t.board.chip.irq_stalls = True
    t.board.chip.tags = [F.Tag(uid_for(5))]
    assert list(t.app.poll()) == []
    assert codes(t) == ["rfid_reader_fault"]
    t.board.chip.irq_stalls = False
    assert_voided(t, conf, 1, {1: {"ante": 10}})


def test_rfid_joker_tag_in_a_52_card_game_tilts(tmp_path):
    t, conf, uid_for = _rfid(tmp_path, size=53)
    [r] = t.read(uid_for(52))
    assert r["error"]["code"] == "joker_not_allowed"
    assert codes(t) == ["joker_in_deck"]
    assert_voided(t, conf, 1, {1: {"ante": 10}})


# ---- documentation ------------------------------------------------------------------------
@pytest.mark.parametrize("doc", ["docs/protocol.md", "docs/journal.md"])
def test_every_tilt_code_is_documented(doc):
    text = open(os.path.join(REPO, doc), encoding="utf-8").read()
    missing = [c for c in tilt.CODES if "`%s`" % c not in text]
    assert missing == []


@pytest.mark.parametrize("after_a_round", [False, True])
def test_a_card_with_no_round_in_play_is_forgotten_after_its_tilt(tmp_path, after_a_round):
    # Issue 29 item 12: the stray card tilts card_before_deal, but it belongs to no
    # round, so it must not stay in the shoe's memory of the deck: the next round (a new
    # shuffle) deals that card again and settles, with no false duplicate_card misdeal.
    game = "pa-three-card-prime"
    t, conf, shoe = make(tmp_path)
    if after_a_round:
        settle_round(t, shoe, game, 3, 47)
        assert cmd(t, "newround")["ok"]
    deck = shoe_sim.shuffled_deck(51, 52)
    assert cmd(t, "status")["phase"] == "configured"
    assert shoe.send([deck[0]])[0]["error"]["code"] == "wrong_phase"
    assert codes(t) == ["card_before_deal"]
    r = conf.signed("tilt-clear floor1")
    assert r["ok"] and r["active"] == [] and "voided" not in r
    res = settle_round(t, shoe, game, 3, 51)  # its first card is the stray one
    assert codes(t) == [] and res["ok"] and "void" not in res.get("result", {})


def test_void_voids_only_a_lost_round(tmp_path):
    # Issue 29 item 10: `pitboss void` is the tilt-clear of a misdeal, sent only when the
    # board says a round lost a card (status "lost"): never a tilt cleared by the way.
    from host_tools.table.keyed import void_round
    t, conf, shoe = make(tmp_path)
    rc, why = void_round(t, conf, "floor1")
    assert rc == 1 and "nothing to void" in why
    deck, n, after = start(t, "pa-three-card-prime", 3, 48)
    shoe.send(deck[:5])
    shoe.raw(shoeframe.encode(deck[5], 2))  # a stale frame: the round is lost
    assert cmd(t, "status")["lost"] == "shoe_stale"
    rc, r = void_round(t, conf, "floor1")
    assert rc == 0 and r["voided"]["round"] == 1 and r["active"] == []
    assert "lost" not in cmd(t, "status")


def test_each_shoe_alarm_raises_its_own_tilt_by_its_event_name():
    # pitboss.halting holds the policy as a tuple indexed by the event code (constants in
    # flash, no dict on the heap): each row checked here against the event's name.
    from pitboss import halting

    want = {"EV_BAD_CARD": ("shoe_bad_card", 0), "EV_DROPPED": ("shoe_gap", 0),
            "EV_CONFLICT": ("shoe_conflict", 2), "EV_STALE": ("shoe_stale", 2),
            "EV_RESTART": ("shoe_restart", 1), "EV_DUPLICATE": ("duplicate_card", 2),
            "EV_UNKNOWN_TAG": ("unknown_rfid_tag", 0),
            "EV_WRONG_DECK": ("rfid_wrong_deck", 0), "EV_COLLISION": ("rfid_collision", 0),
            "EV_READ_ERROR": ("rfid_read_error", 0),
            "EV_READER_FAULT": ("rfid_reader_fault", 0),
            "EV_UNRESENT": ("shoe_bad_frame", 1)}
    names = [n for n in dir(shoe_mod) if n.startswith("EV_")]
    assert len(halting._SHOE_ALARMS) == shoe_mod.N_EVENTS == len(names) + 1
    for n in names:
        assert halting._SHOE_ALARMS[getattr(shoe_mod, n)] == want.get(n), n
    assert halting._SHOE_ALARMS[0] is None
    assert all(t in tilt.CODES for t, _ in want.values())
