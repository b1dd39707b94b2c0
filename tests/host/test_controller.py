"""The table controller on CPython (the same firmware the board runs): shoe faults,
tilts that persist, authenticated configuration, refused input leaving state intact,
journal damage and recovery."""
import json
import os
import tempfile

import pytest

from host_tools.emu import shoe_sim
from host_tools.table.auth import KeyStore
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round, play_rounds
from host_tools.table.targets import LocalTarget


@pytest.fixture
def table(tmp_path):
    t = LocalTarget(str(tmp_path / "flash"))
    conf = Configurator(t, "t1", KeyStore(str(tmp_path / "keys")))
    conf.provision()
    assert conf.configure("pa-three-card-prime", 3)["ok"]
    return t, conf


def reboot(t):
    """A power cycle: a new App on the same storage (journal, tilts, meters, key)."""
    return LocalTarget(t.root)


def status(t):
    return t.commands(["status"])[0]


def test_round_settles_and_survives_reboot(table):
    t, _ = table
    [r] = list(play_rounds(t, "pa-three-card-prime", 3, 1, seed=3))
    assert r["ok"] and r["round"] == 1 and len(r["seats"]) == 3
    t2 = reboot(t)
    st = status(t2)
    assert st["phase"] == "settled" and st["round"] == 1
    assert t2.commands(["recall 1"])[0]["rounds"][0]["result"]["house_net"] == r["house_net"]
    m = t2.commands(["meters"])[0]["totals"]
    assert m["rounds"] == 1


def test_config_needs_a_valid_mac_and_replays_are_refused(table, tmp_path):
    t, conf = table
    assert t.commands(['config {"game":"nj-5card","seats":2}'])[0]["error"]["code"] == \
        "auth_required"
    line = conf.keys.sign("t1", 'config {"game":"nj-5card","seats":2}')
    assert t.commands([line])[0]["ok"]
    again = t.commands([line])[0]  # the same counter and MAC a second time
    assert again["error"]["code"] == "replay"
    forged = line.replace("nj-5card", "nj-3card")
    assert t.commands([forged])[0]["error"]["code"] == "bad_mac"
    assert status(t)["game"] == "nj-5card"
    # Refusals are counted in the journal with their reasons (in aggregate records).
    t2 = reboot(t)
    assert t2.app.ctl.journal.last_seq > 0
    logged = [json.loads(p) for _, _, p in t2.app.ctl.journal.last(10)]
    reasons = set()
    for e in logged:
        if e.get("ev") == "auth_refused":
            reasons.update(e["reasons"])
    assert {"replay", "bad_mac"} <= reasons


def test_repeated_bad_macs_tilt_the_table(table):
    t, conf = table
    for n in range(3):
        t.commands(["auth %d %s config {}" % (1000 + n, "0" * 64)])
    assert [a["code"] for a in status(t)["tilts"]] == ["bad_mac"]


@pytest.mark.parametrize("line", ["bogus", "wager", "wager x ante=5", "wager 9 ante=5",
                                  "wager 1 ante=-5", "deal 3", "card Zz", "card",
                                  "hand 1 As / Kd", "decide 1 maybe", "settle",
                                  "recall 999", "", "rank nj-5card As"])
def test_bad_commands_are_refused_and_change_nothing(table, line):
    t, _ = table
    t.commands(["wager 1 ante=10"])
    before = status(t)
    seq = t.app.ctl.journal.last_seq
    reply = t.commands([line])[0]
    assert reply["ok"] is False and reply["error"]["code"] and reply["error"]["message"]
    assert status(t) == before and t.app.ctl.journal.last_seq == seq


def test_settling_a_short_deal_is_a_wrong_card_count_tilt(table):
    t, _ = table
    t.commands(["wager 1 ante=10", "deal", "card 2c", "card 3c"])
    r = t.commands(["settle"])[0]
    assert r["error"]["code"] == "wrong_count" and "2 of 6" in r["error"]["message"]
    assert [a["code"] for a in status(t)["tilts"]] == ["wrong_card_count"]


def _deal_frames(t, game, seats, seed, faults=()):
    before, _, after = plan_round(game, seats, seed)
    replies = t.commands(before)
    assert all(r["ok"] for r in replies)
    order = replies[-1]["order"]
    deck = shoe_sim.shuffled_deck(seed, 52)[:len(order)]
    t._hw.shoe_uart().feed(shoe_sim.frames(deck, faults=faults))
    return list(t.app.poll()), after


def test_dropped_shoe_frame_tilts(table):
    t, _ = table
    _deal_frames(t, "pa-three-card-prime", 3, 9, faults=[(4, "drop")])
    st = status(t)
    assert [a["code"] for a in st["tilts"]] == ["shoe_gap"]
    assert "dropped" in st["tilts"][0]["detail"]
    # Halted: nothing moves until an operator clears it (authenticated, logged).
    assert t.commands(["decide 1 play"])[0]["error"]["code"] == "tilted"
    assert status(reboot(t))["tilts"], "a tilt survives a power cycle"


def test_repeated_and_corrupted_frames(table):
    t, _ = table
    replies, _ = _deal_frames(t, "pa-three-card-prime", 3, 9, faults=[(2, "repeat")])
    assert status(t)["tilts"] == [] and status(t)["phase"] == "deciding"
    assert len(replies) == 12  # the repeat was ignored, every card dealt once
    t2 = LocalTarget(tempfile.mkdtemp())
    c2 = Configurator(t2, "t2", KeyStore(tempfile.mkdtemp()))
    c2.provision()
    c2.configure("pa-three-card-prime", 3)
    _deal_frames(t2, "pa-three-card-prime", 3, 9, faults=[(5, "corrupt")])
    codes = [a["code"] for a in status(t2)["tilts"]]
    # The bad CRC frame is a transport error (never acknowledged, so an acknowledging
    # shoe resends it); this shoe streams on, and the next frame shows the gap it left.
    assert codes == ["shoe_gap"]


def test_duplicate_card_tilts_and_clearing_is_authenticated(table):
    t, conf = table
    t.commands(["wager 1 ante=10", "deal"])
    assert t.commands(["card As"])[0]["ok"]
    r = t.commands(["card As"])[0]
    assert r["error"]["code"] == "duplicate_card"
    assert [a["code"] for a in status(t)["tilts"]] == ["duplicate_card"]
    assert t.commands(["tilt-clear alice"])[0]["error"]["code"] == "auth_required"
    r = conf.signed("tilt-clear alice")
    assert r["ok"] and r["cleared"] == ["duplicate_card"]
    log = t.commands(["tilt"])[0]["log"]
    assert [(e["ev"], e["code"], e["op"]) for e in log] == [
        ("raise", "duplicate_card", ""), ("clear", "duplicate_card", "alice")]
    assert t.commands(["card Kd"])[0]["ok"], "the round goes on after the clear"


def test_card_for_an_empty_seat_and_after_the_deal(table):
    t, _ = table
    t.commands(["wager 1 ante=10", "deal"])
    for c in ("2c", "3c", "4c", "5c", "6c", "7c"):
        assert t.commands(["card " + c])[0]["ok"]
    r = t.commands(["card 8c"])[0]
    assert r["error"]["code"] == "deal_complete"


def test_corrupt_journal_byte_tilts_at_boot(table):
    t, conf = table
    list(play_rounds(t, "pa-three-card-prime", 3, 2, seed=4))
    jdir = os.path.join(t.root, "journal")
    seg = sorted(f for f in os.listdir(jdir) if f.endswith(".jnl"))[0]
    path = os.path.join(jdir, seg)
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0x40
    open(path, "wb").write(bytes(data))
    t2 = reboot(t)
    st = status(t2)
    assert [a["code"] for a in st["tilts"]] == ["journal_corrupt"]
    assert t2.commands(["wager 1 ante=5"])[0]["error"]["code"] == "tilted"
    # Clearing quarantines the damaged journal (kept as .bad) and starts a new one.
    assert Configurator(t2, "t1", conf.keys).signed("tilt-clear bob")["ok"]
    assert any(f.endswith(".bad") for f in os.listdir(jdir))
    assert Configurator(t2, "t1", conf.keys).configure("nj-5card", 2)["ok"]
    assert status(reboot(t2))["tilts"] == []


def test_tampered_firmware_tilts(tmp_path):
    from pitboss.controller import Controller
    c = Controller(str(tmp_path), integrity=lambda: ["/pitboss/rules/evaluator.mpy: mismatch"])
    c.boot()
    assert [a["code"] for a in c.tilt.active()] == ["firmware_mismatch"]


def test_status_never_reveals_undealt_cards(table):
    t, _ = table
    before, frames, _ = plan_round("pa-three-card-prime", 3, 5)
    t.commands(before)
    t._hw.shoe_uart().feed(frames[:24])  # two cards of twelve
    t.app.poll()
    st = status(t)
    dealt = sum(len(v) for v in st["hands"].values())
    assert dealt == 2 and st["dealt"] == 2
    text = json.dumps(st)
    deck = shoe_sim.shuffled_deck(5, 52)
    from pitboss.rules.cards import name
    assert not any('"%s"' % name(c) in text for c in deck[2:12])


def test_a_replayed_settlement_is_compared_with_the_journal_in_place():
    # _same() stands in for a JSON round trip (which held four copies of a Pai Gow
    # result at once on the chip): equal exactly when the JSON would be.
    import json
    from pitboss.controller import _same
    for v in ({"a": (1, 2), 3: [True, None, "x"]}, {"seats": [{"seat": 1, "amount": -5}]},
              [], {}, (1,), 0, False, "s", None):
        assert _same(v, json.loads(json.dumps(v))), v
    for a, b in (({"a": 1}, {"a": True}), ({"a": 1}, {"a": 1, "b": 2}), ([1, 2], [1, 2, 3]),
                 ({"a": [1, 2]}, {"a": [1, 3]}), (1, "1"), (None, 0), ((1,), {"0": 1}),
                 ({1: 2}, {"2": 2})):
        assert not _same(a, b), (a, b)
