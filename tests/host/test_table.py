"""The round engine (pitboss.games.table): configuration, casino deal order, phases, refused
inputs (each leaves the table exactly as it was) and settlement results as plain data."""
import copy
import json

import pytest

from pitboss import games
from pitboss.sim import rounds as sim
from pitboss.games import table
from pitboss.rules.cards import CardError, JOKER, names, parse, parse_hand
from pitboss.errors import Refused
from pitboss.sim.rng import XorShift32
from pitboss.games.table import Table


def snapshot(t):
    """Everything a round holds (not the config or the injected rng)."""
    return copy.deepcopy({k: v for k, v in vars(t).items() if k not in ("_c", "_rng")})


def refused(t, kind, fn, *args, **kw):
    """fn(*args) must raise a refusal of code `kind` and change nothing."""
    before = snapshot(t)
    with pytest.raises(Refused) as e:
        fn(*args, **kw)
    assert e.value.code == kind, str(e.value)
    assert snapshot(t) == before
    return str(e.value)


def feed(t, hands, filler=()):
    """Deal so that each recipient gets hands[r] (in order); recipients not named
    get cards from `filler`, then from the rest of the deck."""
    want = {r: parse_hand(h) if isinstance(h, str) else list(h) for r, h in hands.items()}
    used = {c for cs in want.values() for c in cs}
    spare = [c for c in list(filler) + list(range(53 if t._c["profile"].joker else 52))
             if c not in used]
    spare = list(dict.fromkeys(spare))
    seq = 0
    while t.phase == table.DEALING:
        who = t.status()["next"]
        c = want[who].pop(0) if want.get(who) else spare.pop(0)
        seq += 1
        t.card_in(c, seq=seq)


def plain(o):
    """Results are plain data: dict/list/str/int/bool only, and no float anywhere."""
    if isinstance(o, dict):
        return all(isinstance(k, str) and plain(v) for k, v in o.items())
    if isinstance(o, list):
        return all(plain(x) for x in o)
    return type(o) in (str, int, bool) or o is None


# ---- configuration -------------------------------------------------------------------

@pytest.mark.parametrize("config, kind, msg", [
    ({"game": "blackjack"}, "unknown_game", "not a table game"),
    ({"game": "pa-all-six"}, "unknown_game", "not a table game"),  # a side wager only
    ({"game": "qc-caribbean", "seats": 0}, "bad_config", "seats"),
    ({"game": "qc-caribbean", "seats": 8}, "bad_config", "seats"),
    ({"game": "qc-caribbean", "seats": "7"}, "bad_config", "seats"),
    ({"game": "pr-pai-gow", "seats": 7}, "bad_config", "1..6"),  # position 1: banker
    ({"game": "qc-caribbean", "limit": 5}, "bad_config", "unknown table setting"),
    ({"game": "qc-caribbean", "house": {"bad_beat": "flush"}}, "bad_config",
     "not a house rule of qc-caribbean"),
    ({"game": "pr-pai-gow", "house": {"commission_bps": 10001}}, "bad_config",
     "commission_bps"),
    ({"game": "pr-pai-gow", "house": {"commission_bps": 5.0}}, "bad_config",
     "commission_bps"),
    ({"game": "pr-pai-gow", "house": {"commission_rounding": "nearest"}}, "bad_config",
     "commission_rounding"),
    ({"game": "pr-pai-gow", "house": {"commission_unit": 0}}, "bad_config",
     "commission_unit"),
    ({"game": "pr-pai-gow", "house": {"foul": "redeal"}}, "bad_config", "foul"),
    ({"game": "pr-pai-gow", "house": {"two_pair": {"low_max": "6"}}}, "bad_config",
     "medium_max"),
    ({"game": "pa-three-card-prime", "house": {"bad_beat": "pair"}}, "bad_config",
     "bad_beat"),
    ({"game": "nj-5card", "house": {"hole": 4}}, "bad_config", "hole"),
    ({"game": "nj-5card", "house": {"hole": 8}}, "bad_config", "hole"),
    ({"game": "pa-three-card-prime", "paytables": {"call": {"royal_flush": 1}}},
     "bad_config", "not used by this game"),
    ({"game": "pa-three-card-prime", "paytables": {"prime": {"two_same_colour": 1}}},
     "bad_config", "no line"),
    ({"game": "pr-pai-gow", "paytables": {"play": {}}}, "bad_config",
     "not used by this game"),
    ("qc-caribbean", "bad_config", "must be a dict"),
])
def test_config_refused(config, kind, msg):
    with pytest.raises(Refused) as e:
        Table(config)
    assert e.value.code == kind and msg in str(e.value), str(e.value)


def test_refusals_have_one_shape():
    # one except clause (Refused) catches them all; .code tells them apart
    assert CardError is Refused and issubclass(Refused, ValueError)
    e = Refused("bad_config", "seats must be an int")
    assert e.code == "bad_config" and str(e) == "seats must be an int"
    assert not hasattr(e, "kind") and not hasattr(e, "reason")
    for bad, code in (({"game": "qc-caribbean", "seats": 0}, "bad_config"),
                      ({"game": "blackjack"}, "unknown_game")):
        with pytest.raises(Refused) as got:
            Table(bad)
        assert type(got.value) is Refused and got.value.code == code


def test_config_round_trips_as_plain_data():
    t = Table({"game": "pr-pai-gow", "seats": 4,
               "house": {"commission_bps": 400, "commission_unit": 25}})
    c = t.config()
    assert json.loads(json.dumps(c)) == c
    assert c["house"]["commission_bps"] == 400 and c["house"]["foul"] == "lose"
    assert Table(c).config() == c
    t3 = Table({"game": "pa-three-card-prime",
                "paytables": {"prime": {"three_same_colour": [5, 2]}}})
    assert t3.config()["paytables"]["prime"] == {"three_same_colour": [5, 2]}


# ---- wagers --------------------------------------------------------------------------

@pytest.mark.parametrize("seat, wagers, kind, msg", [
    (0, {"ante": 5}, "unknown_seat", "1..7"),
    (8, {"ante": 5}, "unknown_seat", "1..7"),
    ("1", {"ante": 5}, "unknown_seat", "1..7"),
    (1, {"call": 5}, "bad_wager", "not a wager of qc-caribbean"),
    (1, {"ante": 0}, "bad_wager", "int amount"),
    (1, {"ante": -5}, "bad_wager", "int amount"),
    (1, {"ante": 5.0}, "bad_wager", "int amount"),
    (1, {"ante": True}, "bad_wager", "int amount"),
    (1, {"ante": 2 ** 30}, "bad_wager", "int amount"),
    (1, [("ante", 5)], "bad_wager", "must be a dict"),
])
def test_wager_refused(seat, wagers, kind, msg):
    t = Table({"game": "qc-caribbean"})
    t.wager(2, {"ante": 10})
    assert msg in refused(t, kind, t.wager, seat, wagers)


def test_side_wagers_need_the_main_wager():
    t = Table({"game": "pa-three-card-prime"})
    assert "ante wager is required" in refused(t, "bad_wager", t.wager, 1, {"prime": 5})


def test_wagers_replace_and_remove():
    t = Table({"game": "qc-caribbean"})
    assert t.phase == table.CONFIGURED
    t.wager(3, {"ante": 10})
    t.wager(3, {"ante": 20})
    assert t.phase == table.WAGERS and t._wagers == {3: {"ante": 20}}
    t.wager(3, {})
    assert t.phase == table.CONFIGURED and t._wagers == {}
    refused(t, "wrong_phase", t.deal)  # no wager, no deal


# ---- casino deal order ---------------------------------------------------------------

def test_three_card_prime_deals_one_at_a_time_seats_then_dealer():
    t = Table({"game": "pa-three-card-prime"})
    t.wager(5, {"ante": 10})
    t.wager(2, {"ante": 10})
    assert t.deal()["order"] == [2, 5, 0] * 3
    refused(t, "wrong_phase", t.wager, 1, {"ante": 5})  # wagers closed


def test_caribbean_deals_five_each_including_the_dealer():
    t = Table({"game": "qc-caribbean"})
    for s in (7, 1, 3):
        t.wager(s, {"ante": 10})
    assert t.deal()["order"] == [1, 3, 7, 0] * 5


def test_showdown_deals_hole_cards_no_dealer():
    t = Table({"game": "nj-5card", "house": {"hole": 7}})
    t.wager(1, {"ante": 10})
    t.wager(4, {"ante": 10})
    assert t.deal()["order"] == [1, 4] * 7


@pytest.mark.parametrize("dice, start, first", [
    (8, 1, 0),    # 8 counted from the banker's position (1) comes back to it
    (3, 3, 2),    # position 3 = seat 2
    (9, 2, 1),
    (18, 4, 3),
])
def test_pai_gow_packets_from_the_dice(dice, start, first):
    t = Table({"game": "pr-pai-gow"})
    t.wager(1, {"wager": 100})
    d = t.deal(dice=dice)
    assert (d["start"], d["dice"]) == (start, dice)
    order = d["order"]
    assert len(order) == 49  # seven packets of seven; four cards are left over
    packets = [order[i:i + 7] for i in range(0, 49, 7)]
    assert all(len(set(pk)) == 1 for pk in packets)
    got = [pk[0] for pk in packets]
    assert got[0] == first
    # positions in order from the start, wrapping 7 -> 1: banker 0, seats 1..6
    assert got == [((start - 1 + i) % 7) for i in range(7)]


def test_pai_gow_dice_from_the_injected_rng_or_refused():
    t = Table({"game": "pr-pai-gow"})
    t.wager(1, {"wager": 100})
    refused(t, "no_dice", t.deal)
    refused(t, "bad_dice", t.deal, dice=2)
    refused(t, "bad_dice", t.deal, dice=19)
    refused(t, "bad_dice", t.deal, dice="8")
    rolls = iter([5, 0, 2])  # dice 6 + 1 + 3 = 10 -> position 3
    t2 = Table({"game": "pr-pai-gow"}, rng=lambda n: next(rolls))
    t2.wager(1, {"wager": 100})
    assert (t2.deal()["dice"], t2._start) == (10, 3)


# ---- card_in -------------------------------------------------------------------------

def caribbean_table():
    t = Table({"game": "qc-caribbean"})
    t.wager(1, {"ante": 10})
    t.wager(3, {"ante": 20})
    t.deal()
    return t


def test_card_in_knows_whose_card_it_is():
    t = caribbean_table()
    assert t.card_in("As", seq=1) == {"seq": 1, "card": "As", "to": 1, "count": 1,
                                      "complete": False}
    assert t.card_in(parse("Kd"), seq=2, seat=3)["to"] == 3
    assert t.card_in("2c", seat=0)["to"] == 0  # the dealer; seq is optional
    assert t.hand(1) == [parse("As")] and t.hand(0) == [parse("2c")]


def test_card_in_refused_before_the_deal():
    t = Table({"game": "qc-caribbean"})
    t.wager(1, {"ante": 10})
    assert "deal() first" in refused(t, "wrong_phase", t.card_in, "As", 1)


def test_duplicate_card_refused_state_intact():
    t = caribbean_table()
    t.card_in("As", 1)
    t.card_in("Kd", 2)
    msg = refused(t, "duplicate_card", t.card_in, "As", 3)
    assert "As" in msg and "seat 1" in msg


@pytest.mark.parametrize("seq, msg", [
    (2, "already received"),   # a repeated frame
    (1, "already received"),
    (4, "1 card(s) missed"),   # a dropped frame
    (9, "6 card(s) missed"),
    (0, "positive int"),
    ("3", "positive int"),
])
def test_bad_seq_refused(seq, msg):
    t = caribbean_table()
    t.card_in("As", 1)
    t.card_in("Kd", 2)
    assert msg in refused(t, "bad_seq", t.card_in, "Qh", seq)


def test_card_for_an_empty_seat_refused():
    t = caribbean_table()  # seats 1 and 3 play; 2 is empty
    msg = refused(t, "empty_seat", t.card_in, "As", 1, 2)
    assert "seat 2" in msg and "goes to seat 1" in msg
    refused(t, "wrong_seat", t.card_in, "As", 1, 3)
    refused(t, "wrong_seat", t.card_in, "As", 1, 0)
    refused(t, "unknown_seat", t.card_in, "As", 1, 9)
    refused(t, "unknown_seat", t.card_in, "As", 1, True)  # not the int 1


def test_card_after_the_deal_is_complete_refused():
    t = caribbean_table()
    feed(t, {})
    assert t.phase == table.DECIDING and t.status()["dealt"] == 15
    assert "complete (15 cards)" in refused(t, "deal_complete", t.card_in, "Ah", 16)


@pytest.mark.parametrize("card, kind", [
    ("Jk", "joker_not_allowed"), (JOKER, "joker_not_allowed"), ("Xx", "unknown_card"),
    (53, "unknown_card"), ("", "unknown_card"),
])
def test_bad_card_refused(card, kind):
    t = caribbean_table()
    refused(t, kind, t.card_in, card, 1)


def test_settle_mid_deal_is_a_wrong_count():
    t = caribbean_table()
    t.card_in("As", 1)
    assert "1 of 15" in refused(t, "wrong_count", t.settle)


# ---- Pai Gow round -------------------------------------------------------------------

BANKER = "As Kd 9c 7h 5s 3d 2c"  # house way: A-7-5-3-2 behind, K-9 in front


def paigow_table(**house):
    t = Table({"game": "pr-pai-gow", "house": house} if house else {"game": "pr-pai-gow"})
    t.wager(1, {"wager": 100})
    t.wager(4, {"wager": 1010})
    t.deal(dice=8)  # banker first, then seats 1..6
    return t


def test_pai_gow_round_with_copies_commission_and_discards():
    t = paigow_table()
    # seat 1 copies the banker in both hands (same ranks): copies go to the banker;
    # seat 4 wins both hands: 1010 less 5% = 50.5 -> 50 commission (rounded down)
    feed(t, {0: BANKER, 1: "Ah Kc 9d 7s 5h 3c 2d", 4: "Ks Kh Qc Jd 8s Ac Ad"})
    assert t.phase == table.SETTING
    assert t.set_house_way(1)["rule"] == "no_pair"
    r4 = t.set_hand(4, ["Ac", "Ad", "Qc", "Jd", "8s"], ["Ks", "Kh"])
    assert r4["foul"] is False
    assert t.phase == table.READY
    r = t.settle()
    assert plain(r) and json.loads(json.dumps(r)) == r
    s1, s4 = r["seats"]
    assert (s1["seat"], s1["high_result"], s1["low_result"], s1["outcome"],
            s1["amount"]) == (1, "copy", "copy", "lose", -100)
    assert (s4["seat"], s4["outcome"], s4["commission"], s4["amount"]) == \
        (4, "win", 50, 960)
    assert r["house_net"] == 100 - 960
    assert r["banker"]["rule"] == "no_pair" and sorted(r["banker"]["low"]) == ["9c", "Kd"]
    assert len(r["discards"]) == 4 * 7  # positions of seats 2, 3, 5, 6
    assert t.phase == table.SETTLED
    # What the table keeps of it (the display's pay screen), not the result itself
    low = "".join(c[0] for c in r["banker"]["low"])
    assert t.settled_rows() == ((1, r["banker"]["high_category"], low),
                                ((1, s1["amount"], "".join(c[0] for c in s1["low"])),
                                 (4, s4["amount"], "".join(c[0] for c in s4["low"]))))


@pytest.mark.parametrize("foul_rule, outcome, amount, set_by", [
    ("lose", "foul", -100, "player"),
    ("house_way", "win", 95, "house_way"),
])
def test_pai_gow_foul_rules(foul_rule, outcome, amount, set_by):
    t = paigow_table(foul=foul_rule)
    feed(t, {0: BANKER, 1: "Ks Kh Qc Jd 8s Ac Ad"})
    r = t.set_hand(1, ["Ks", "Kh", "Qc", "Jd", "8s"], ["Ac", "Ad"])
    assert r["foul"] is True and r["set_by"] == set_by
    t.set_house_way(4)
    s1 = t.settle()["seats"][0]
    assert (s1["outcome"], s1["amount"], s1["foul"], s1["set_by"]) == \
        (outcome, amount, True, set_by)


def test_pai_gow_foul_rule_reject_refuses_the_setting():
    t = paigow_table(foul="reject")
    feed(t, {0: BANKER, 1: "Ks Kh Qc Jd 8s Ac Ad"})
    msg = refused(t, "foul", t.set_hand, 1, ["Ks", "Kh", "Qc", "Jd", "8s"], ["Ac", "Ad"])
    assert "does not outrank" in msg
    t.set_hand(1, "Ac Ad Qc Jd 8s", "Ks Kh")  # text is accepted too


@pytest.mark.parametrize("seat, high, low, kind", [
    (1, ["Ks", "Kh", "Qc", "Jd"], ["Ac", "Ad", "8s"], "wrong_count"),
    (1, ["Ks", "Kh", "Qc", "Jd", "8s", "Ac"], ["Ad"], "wrong_count"),
    (1, ["Ks", "Kh", "Qc", "Jd", "2s"], ["Ac", "Ad"], "not_dealt"),
    (1, ["Ks", "Kh", "Qc", "Jd", "Jd"], ["Ac", "Ad"], "duplicate_card"),
    (1, ["Ks", "Kh", "Qc", "Jd", "Zz"], ["Ac", "Ad"], "unknown_card"),
    (2, ["Ks", "Kh", "Qc", "Jd", "8s"], ["Ac", "Ad"], "empty_seat"),
    (7, ["Ks", "Kh", "Qc", "Jd", "8s"], ["Ac", "Ad"], "unknown_seat"),
])
def test_set_hand_refused(seat, high, low, kind):
    t = paigow_table()
    feed(t, {0: BANKER, 1: "Ks Kh Qc Jd 8s Ac Ad"})
    refused(t, kind, t.set_hand, seat, high, low)


def test_set_hand_refused_outside_setting():
    t = paigow_table()
    refused(t, "wrong_phase", t.set_hand, 1, ["As"], ["Kd"])
    refused(t, "wrong_phase", t.set_house_way, 1)


def test_pai_gow_joker_is_dealt():
    t = paigow_table()
    feed(t, {0: BANKER, 1: "Jk Kh Qc Jd 8s 3c 2d"})
    assert JOKER in t.hand(1)


# ---- Three Card Prime / Caribbean rounds ---------------------------------------------

def test_three_card_prime_round_dealer_not_qualifying():
    t = Table({"game": "pa-three-card-prime"})
    t.wager(2, {"ante": 10, "pair_bonus": 5, "prime": 5, "all_six": 5})
    t.wager(6, {"ante": 20})
    t.deal()
    feed(t, {2: "8h 8d 3h", 6: "Ks 9c 4s", 0: "Jd Tc 7c"})
    assert t.phase == table.DECIDING
    refused(t, "bad_decision", t.decide, 2, 1)
    refused(t, "bad_decision", t.decide, 2, "play")
    refused(t, "empty_seat", t.decide, 3, True)
    t.decide(2, True)
    refused(t, "wrong_phase", t.settle)  # seat 6 has not decided
    t.decide(6, False)
    r = t.settle()
    assert plain(r)
    assert r["dealer"]["qualifies"] is False and r["dealer"]["category"] == "high_card"
    s2, s6 = r["seats"]
    assert s2["results"]["ante"]["outcome"] == "push"          # rule 8
    assert s2["results"]["play"]["amount"] == 10               # default play: 1 to 1
    assert s2["results"]["pair_bonus"]["amount"] == 5          # pair: 1 to 1
    assert s2["results"]["prime"]["amount"] == 15              # three red: 3 to 1
    assert s2["results"]["all_six"]["outcome"] == "lose"
    assert s2["amount"] == 10 + 5 + 15 - 5
    assert (s6["decision"], s6["amount"]) == ("fold", -20)
    assert r["house_net"] == -(s2["amount"] + s6["amount"])


def test_caribbean_round_call_and_fold():
    t = Table({"game": "qc-caribbean"})
    t.wager(1, {"ante": 10})
    t.wager(2, {"ante": 10})
    t.deal()
    feed(t, {1: "Qs Qh 8c 6d 3c", 2: "2s 3h 5d 7c 9s", 0: "Ad Kc 5s 4h 2c"})
    t.decide(1, True)
    t.decide(2, False)
    r = t.settle()
    assert r["dealer"]["qualifies"] is True
    assert r["seats"][0]["results"]["call"] == {"wager": 20, "outcome": "win",
                                                "line": "one_pair", "amount": 20}
    assert [s["amount"] for s in r["seats"]] == [30, -10]


def test_new_round_keeps_the_config():
    t = caribbean_table()
    t.card_in("As", 1)
    t.new_round()  # voids the round in play (misdeal)
    assert t.phase == table.CONFIGURED and t.round == 2 and t.status()["dealt"] == 0
    t.wager(1, {"ante": 5})
    t.deal()
    t.card_in("As", 1)  # the same card is fine in a new round


# ---- showdown round ------------------------------------------------------------------

def test_showdown_round_split_pot():
    t = Table({"game": "nj-3card"})
    for s in (1, 2, 3):
        t.wager(s, {"ante": 7})
    t.deal()
    feed(t, {1: "Ks Qd 9c", 2: "Kh Qc 9d", 3: "Js 8h 4c"})
    assert t.phase == table.READY
    r = t.settle()
    assert r["pot"] == 21 and r["winners"] == [1, 2]
    assert [s["amount"] for s in r["seats"]] == [4, 3, -7]  # 11 + 10: odd unit to seat 1
    assert r["house_net"] == 0


# ---- simulation ----------------------------------------------------------------------

def test_xorshift32_reference_stream():
    # Marsaglia (2003), xorshift32 with shifts 13, 17, 5 from state 1
    r = XorShift32(1)
    assert [r.next32() for _ in range(3)] == [270369, 67634689, 2647435461]
    assert XorShift32(0).state != 0


def test_shuffle_is_a_permutation_and_seeded():
    a = sim.shuffled(53, XorShift32(42))
    assert sorted(a) == list(range(53))
    assert a == sim.shuffled(53, XorShift32(42))
    assert a != sim.shuffled(53, XorShift32(43))


@pytest.mark.parametrize("game", games.ids())
def test_simulate_round_is_deterministic_plain_and_balanced(game):
    a = sim.simulate_round(game, 3, 99)
    assert a == sim.simulate_round(game, 3, 99)
    assert plain(a)
    assert a["house_net"] == -sum(s["amount"] for s in a["seats"])
    assert [s["seat"] for s in a["seats"]] == [1, 2, 3]


def test_simulate_round_takes_wagers_and_config():
    r = sim.simulate_round("pr-pai-gow", {2: {"wager": 1010}}, 5,
                           {"house": {"commission_bps": 400}})
    s = r["seats"][0]
    assert s["wagers"] == {"wager": 1010}
    if s["outcome"] == "win":
        assert s["commission"] == 40
    cards = [c for c in names(range(53))]
    dealt = r["banker"]["cards"] + s["cards"] + r["discards"]
    assert len(dealt) == 49 and set(dealt) <= set(cards) and len(set(dealt)) == 49
