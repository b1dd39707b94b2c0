"""Pai Gow Poker: the foul rule, the 21 ways, the house way, copies and commission.

Rule texts: puerto-rico-pai-gow-poker-ranks.es.txt (PR A-E). House way: Gold Star School
of Gaming "standard house ways" (goldstarschool.com/house-ways/) with the Trump Plaza
two-pair rule (Wizard of Odds, Pai Gow Poker, Appendix 2); each test names the bullet.
"""
import random

import pytest

from pitboss.rules import evaluator, profiles
from pitboss.rules.cards import JOKER, names, parse_hand
from pitboss.errors import Refused
from pitboss.games import paigow, paigow_rules, paigow_way

P = profiles.get("pr-pai-gow")
P_A5 = profiles.get("pr-pai-gow-a5-low")
LOW = paigow_rules.low()


def H(text):
    return parse_hand(text)


def foul(high, low, p=P):
    return paigow_rules.is_foul(p, H(high), H(low))


def way(text, p=P, two_pair=None):
    high, low, rule = paigow_way.house_way(p, H(text), two_pair)
    return sorted(names(high)), sorted(names(low)), rule


# ---- the foul rule (the five-card hand must outrank the two-card hand) ---------------

@pytest.mark.parametrize("high, low, is_foul", [
    # pair against pair: by the pair's rank (PR B.10)
    ("7s 7h Ks 4d 2c", "8s 8h", True),
    ("8s 8h Ks 4d 2c", "7s 7h", False),
    # the same pair on both sides: the five-card hand still holds cards the two-card
    # hand does not (PR E), so splitting four of a kind is legal
    ("7s 7h Ks 4d 2c", "7d 7c", False),
    # high card against high card: PR E, the highest card not held by the other hand
    ("Ks Qh 7d 5c 3s", "As 2h", True),
    ("As Qh 7d 5c 3s", "Ks 2h", False),
    ("As Qh 7d 5c 3s", "Ah Kh", True),   # K is the highest card the high hand lacks
    ("As Kh 7d 5c 3s", "Ad Kd", False),  # top two matched: the five-card hand wins
    # the joker is an ace in the low hand (PR A)
    ("As Kh 9d 7c 3s", "Jk Kc", False),
    ("Ks Kh 9d 7c 3s", "Jk As", True),   # pair of aces (joker + ace) over kings
    ("Ks Kh 9d 7c 3s", "Jk Qs", False),
    # any pair outranks two single cards; no single-card hand outranks a pair
    ("2s 2h 7d 5c 3s", "Ah Kh", False),
    ("As Kd Qc Jh 9s", "2d 2c", True),
    # two pair or better outranks every low hand
    ("2s 2h 3d 3c 4s", "As Ad", False),
    ("Jk 2h 3d 4c 5s", "As Ad", False),  # straight (the joker as 5... or A: PR C)
])
def test_foul_rule(high, low, is_foul):
    assert foul(high, low) is is_foul


def test_the_settings_table_is_splits_and_ways_rank_each_setting():
    # _PICK (the house way's index table) is SPLITS: the five others in order, then i, j
    for k, (i, j) in enumerate(paigow_rules.SPLITS):
        assert list(paigow_way._PICK[7 * k:7 * k + 7]) \
            == [x for x in range(7) if x != i and x != j] + [i, j]
    cards = H("As Kd Jk 9c 9s 4h 2c")
    for (hs, ls, high, low), (h2, l2) in zip(paigow_way._ways(P, cards), paigow_rules.settings(cards)):
        assert (high, low) == (h2, l2)
        assert hs == evaluator._eval(P, high, 5) and ls == evaluator._eval(LOW, low, 2)


def test_ways_are_the_21_partitions():
    cards = H("As Kd 9c 7h 5s 3d 2c")
    ways = paigow_rules.settings(cards)
    assert len(ways) == 21
    assert len({frozenset(lo) for _, lo in ways}) == 21
    assert all(sorted(hi + lo) == sorted(cards) and len(hi) == 5 for hi, lo in ways)
    seen = set()
    for i, j in paigow_rules.SPLITS:
        low = (cards[i], cards[j])
        high = tuple(c for k, c in enumerate(cards) if k not in (i, j))
        assert len(high) == 5 and sorted(high + low) == sorted(cards)
        seen.add(frozenset(low))
    assert len(paigow_rules.SPLITS) == 21 and len(seen) == 21


@pytest.mark.parametrize("high, low, kind", [
    ("As Kd 9c 7h", "5s 3d 2c", "wrong_count"),
    ("As Kd 9c 7h 5s 3d", "2c", "wrong_count"),
    ("As Kd 9c 7h 5s", "5s 2c", "duplicate_card"),
    ("As Kd 9c 7h 5s", "4s 2c", "not_dealt"),
])
def test_check_setting_refuses(high, low, kind):
    with pytest.raises(Refused) as e:
        paigow_rules.check_setting(H("As Kd 9c 7h 5s 3d 2c"), H(high), H(low))
    assert e.value.code == kind


# ---- the house way --------------------------------------------------------------------

@pytest.mark.parametrize("hand, low, rule", [
    # "No pair: Play the highest card in the back and the next two highest in the front."
    ("As Kd 9c 7h 5s 3d 2c", "Kd 9c", "no_pair"),
    ("Jk Kd 9c 7h 5s 3d 2c", "9c Kd", "no_pair"),  # the joker is the ace kept behind
    # "One pair: Play the pair in back and the next two highest cards in the front."
    ("As Ad Kc 9h 7s 5d 2c", "9h Kc", "one_pair"),
    # "Three pair: Play the highest pair in front."
    ("Ks Kd 9c 9h 4s 4d Ac", "Kd Ks", "three_pair"),
    # "Three of a kind: Play three of a kind in back. If three aces, split them."
    ("9s 9d 9c Kh 7s 5d 2c", "7s Kh", "trips"),
    ("As Ad Ac Kh 7s 5d 2c", "Kh", "three_aces_split"),
    ("As Ad Jk Kh 7s 5d 2c", "Kh", "three_aces_split"),  # the joker makes the third ace
    # "Three of a kind twice: Play lowest trips in the back and highest pair in front."
    ("9s 9d 9c 5h 5s 5d 2c", "9x 9x", "two_trips"),
    # "Full house: Play the three of a kind in back and pair up front."
    ("9s 9d 9c 5h 5s Ad Kc", "5h 5s", "full_house"),
    ("As Ad Ac 5h 5s Qd Kc", "5h 5s", "full_house"),  # aces stay together in a full house
    # "... If the full house includes a pair of twos and kickers are A-K, keep full house
    # together."
    ("9s 9d 9c 2h 2s Ad Kc", "Ad Kc", "full_house_deuces_ak"),
    ("9s 9d 9c 3h 3s Ad Kc", "3h 3s", "full_house"),   # only a pair of twos is kept
    ("9s 9d 9c 2h 2s Ad Qc", "2h 2s", "full_house"),   # only with A-K kickers
    # "Full house with three of a kind and two pairs: Play the highest pair in front."
    ("9s 9d 9c 5h 5s Kd Kc", "Kc Kd", "full_house_two_pairs"),
    # "Four of a kind ... 2-6: Always keep together."
    ("6s 6d 6c 6h As Kd 2c", "As Kd", "quads_keep"),
    # "7-10: Split unless an ace or better can be played in front."
    ("Ts Td Tc Th As 3d 2c", "As 3d", "quads_keep_ace"),
    ("Ts Td Tc Th Ks 3d 2c", "Tx Tx", "quads_split"),
    ("7s 7d 7c 7h Jk 3d 2c", "Jk 3d", "quads_keep_ace"),  # the joker is an ace up front
    # "J-A: Always split."
    ("Js Jd Jc Jh As 3d 2c", "Jx Jx", "quads_split"),
    ("As Ad Ac Jk Ks 3d 2c", "Ax Ax", "quads_split"),
    # "Four of a kind and a pair: Play pair in front."
    ("Js Jd Jc Jh 3s 3d 2c", "3d 3s", "quads_pair"),
    # "Four of a kind and three of a kind: Play pair in front from the three of a kind."
    ("Js Jd Jc Jh 3s 3d 3c", "3x 3x", "quads_trips"),
    # "Five aces: Split aces and play three aces in back and two aces in front. If you
    # have five aces and a pair of kings, then play five aces in back and kings in front."
    ("As Ad Ac Ah Jk Qs Qd", "Ax Ax", "five_aces_split"),
    ("As Ad Ac Ah Jk Ks Kd", "Kd Ks", "five_aces_kings"),
])
def test_house_way_rules(hand, low, rule):
    high_, low_, rule_ = way(hand)
    assert rule_ == rule
    # 'Tx' style: any card of that rank (the suit choice is the engine's)
    want = sorted(low.split())
    got = low_
    if len(want) == 1:  # one named card plus an ace
        assert want[0] in got and any(c[0] == "A" or c == "Jk" for c in got)
    elif any(w[1] == "x" for w in want):
        assert sorted(c[0] if c != "Jk" else "A" for c in got) == sorted(w[0] for w in want)
    else:
        assert got == want


@pytest.mark.parametrize("hand, rule, keep", [
    # Trump Plaza: "Low pair and low pair: Split unless holding a king or better."
    ("6s 6d 2c 2h Ks 9d 8c", "two_pair_keep", True),
    ("6s 6d 2c 2h Qs 9d 8c", "two_pair_split", False),
    ("6s 6d 2c 2h Jk 9d 8c", "two_pair_keep", True),  # the joker is an ace
    # "Low pair and medium pair: Split unless holding a king or better."
    ("Ts Td 2c 2h Ks 9d 8c", "two_pair_keep", True),
    ("Ts Td 2c 2h Qs 9d 8c", "two_pair_split", False),
    # "Low pair and high pair: Split unless holding an ace."
    ("Ks Kd 6c 6h As 9d 8c", "two_pair_keep", True),
    ("Js Jd 6c 6h Qs 9d 8c", "two_pair_split", False),
    # "Medium pair and medium pair: Split unless holding an ace."
    ("Ts Td 7c 7h As 9d 8c", "two_pair_keep", True),
    ("Ts Td 7c 7h Ks 9d 8c", "two_pair_split", False),
    # "Medium pair and high pair: Always split." "High and high: Always split."
    ("Qs Qd 7c 7h As 9d 8c", "two_pair_split", False),
    ("Qs Qd Jc Jh As 9d 8c", "two_pair_split", False),
    # "Pair of aces and any other pair: Always split." (joker + ace = a pair of aces)
    ("As Jk 2c 2h Ks 9d 8c", "two_pair_split", False),
])
def test_house_way_two_pair_rule(hand, rule, keep):
    cards = H(hand)
    high, low, rule_ = paigow_way.house_way(P, cards)
    assert rule_ == rule
    if keep:
        # both pairs behind, the two highest singles in front
        assert evaluator.category(P, evaluator.score(P, high)) == "two_pair"
        assert evaluator.category(LOW, evaluator.score(LOW, low)) == "high_card"
    else:
        # split: the higher pair behind, the lower pair in front
        assert evaluator.category(LOW, evaluator.score(LOW, low)) == "one_pair"
        assert evaluator.category(P, evaluator.score(P, high)) == "one_pair"
        assert evaluator.score(LOW, low) >> 13 & 0x1FFF < evaluator.score(P, high) >> 13 & 0x1FFF


def test_two_pair_rule_trumps_a_straight():
    # Gold Star: the two-pair rule "typically trumps other rules": 2-2-6-6 with a
    # 2-3-4-5-6 straight and a king is set by it (keep together, K-5 in front is
    # not what the straight rule would do).
    high, low, rule = paigow_way.house_way(P, H("2s 2d 3c 4h 5s 6d 6c"))
    assert rule == "two_pair_split"  # low-low, no king: split
    assert sorted(names(low)) == ["2d", "2s"]


def test_two_pair_rule_is_configuration():
    # Canterbury Park (as posted; Wizard of Odds house-way page): low 2-5, medium 6-9,
    # high 10-K; medium-medium and low-high split unless an ace with a face can play in
    # the low hand.
    canterbury = {"name": "canterbury-park", "low_max": "5", "medium_max": "9",
                  "keep": {"low-low": "K", "low-medium": "K", "low-high": "AJ",
                           "medium-medium": "AJ", "medium-high": None,
                           "high-high": None, "aces": None}}
    rule = paigow_rules.two_pair_rule(canterbury)
    # 9-9 and 7-7 with A-Q: Trump Plaza keeps (medium-medium + ace); so does Canterbury
    assert paigow_way.house_way(P, H("9s 9d 7c 7h As Qd 2c"), rule)[2] == "two_pair_keep"
    # with A-8 Canterbury splits (no face), Trump Plaza keeps (any ace)
    assert paigow_way.house_way(P, H("9s 9d 7c 7h As 8d 2c"), rule)[2] == "two_pair_split"
    assert paigow_way.house_way(P, H("9s 9d 7c 7h As 8d 2c"))[2] == "two_pair_keep"


@pytest.mark.parametrize("cfg, msg", [
    ("trump", "must be a dict"),
    ({"low_max": "6", "medium_max": "T", "keep": {}, "bogus": 1}, "no setting"),
    ({"low_max": "Z", "medium_max": "T", "keep": {}}, "low_max"),
    ({"low_max": "T", "medium_max": "6", "keep": {}}, "low_max < medium_max"),
    ({"low_max": "6", "medium_max": "T", "keep": {"low-low": "K"}}, "missing"),
    ({"low_max": "6", "medium_max": "T",
      "keep": dict(paigow_rules.TRUMP_PLAZA["keep"], **{"low-low": "KKK"})}, "1-2 ranks"),
    ({"low_max": "6", "medium_max": "T",
      "keep": dict(paigow_rules.TRUMP_PLAZA["keep"], **{"mid-mid": "A"})}, "unknown pair class"),
])
def test_two_pair_rule_config_refused(cfg, msg):
    with pytest.raises(Refused) as e:
        paigow_rules.two_pair_rule(cfg)
    assert msg in str(e.value) and e.value.code == "bad_config"


@pytest.mark.parametrize("hand, high, low, rule", [
    # "Straights, flushes ...: With no pair: Play the way that will allow the highest
    # two cards in front." 6-card straight 4-9: the 9 goes up with the ace.
    ("4s 5d 6c 7h 8s 9d Ac", "4s 5d 6c 7h 8s", "9d Ac", "straight_best_front"),
    # 7-card straight: the two top cards in front, the low five straight behind
    ("4s 5d 6c 7h 8s 9d Tc", "4s 5d 6c 7h 8s", "9d Tc", "straight_best_front"),
    # the joker completes the flush behind (PR C)
    ("Kh Qh 9h 5h Jk 2c 3d", "Kh Qh 9h 5h Jk", "2c 3d", "straight_best_front"),
    # "With one pair: Play pair in the front if a straight or flush can be maintained in
    # back."
    ("2s 3d 4c 5h 6s 6d Ac", "2s 3d 4c 5h Ac", "6s 6d", "straight_pair_front"),
    # "If pair is 10's+ and you have an ace, play pair/ace": the straight needs the ace,
    # so the tens go behind and A-K in front
    ("Ts Jd Qc Kh Ac Td 3c", "Ts Jd Qc Td 3c", "Kh Ac", "straight_pair_ace"),
    # ... our reading: not when the straight keeps the ace in front anyway (A-T beats
    # A-9 and a straight beats two tens)
    ("6s 7d 8c 9h Ts Td Ac", "6s 7d 8c 9h Td", "Ts Ac", "straight_best_front"),
    ("Kh Kc 9h 7h 4h 2h As", "Kh 9h 7h 4h 2h", "Kc As", "straight_best_front"),
    # pair below tens, pair cannot go up: straight behind, best two others in front
    ("2s 3d 4c 5h 6s 5d Kc", "2s 3d 4c 5h 6s", "5d Kc", "straight_best_front"),
    # three of a kind with a straight: the page has no rule; the straights principle
    # (best two in front, straight behind) puts a pair of the trips up front
    ("5s 6d 7c 8h 9s 9d 9c", "5s 6d 7c 8h 9s", "9d 9c", "straight_best_front"),
])
def test_house_way_straights_and_flushes(hand, high, low, rule):
    h, lo, r = way(hand)
    assert r == rule

    def ranks(cards):  # suits of equal ranks are the engine's choice
        return sorted(c[0] for c in cards)
    assert ranks(h) == ranks(high.split()) and ranks(lo) == ranks(low.split())
    cards = H(hand)
    hs = evaluator.score(P, [c for c in cards if names([c])[0] in h])
    assert evaluator.category(P, hs) in ("straight", "flush", "straight_flush") \
        or rule == "straight_pair_ace"


def test_a5_low_option_changes_the_house_way_only_through_ranking():
    # PR D (licensee's option): A-2-3-4-5 is the lowest straight. With 2-3-4-5-6-A-K
    # both profiles keep a straight behind and play A-K up front.
    for p in (P, P_A5):
        h, lo, r = way("2s 3d 4c 5h 6s Ad Kc", p)
        assert lo == ["Ad", "Kc"] and r == "straight_best_front"


def _random_hands(n, seed):
    rnd = random.Random(seed)
    deck = list(range(53))
    for _ in range(n):
        rnd.shuffle(deck)
        yield deck[:7]


@pytest.mark.parametrize("p", [P, P_A5], ids=lambda p: p.id)
def test_house_way_never_fouls_and_uses_each_card_once(p):
    for cards in _random_hands(2500, 7):
        high, low, rule = paigow_way.house_way(p, cards)
        assert sorted(high + low) == sorted(cards), rule
        assert not paigow_rules.is_foul(p, high, low), (names(cards), rule)


def test_house_way_refuses_bad_hands():
    with pytest.raises(Refused) as e:
        paigow_way.house_way(P, H("As Kd 9c 7h 5s 3d"))
    assert e.value.code == "wrong_count"
    with pytest.raises(Refused) as e:
        paigow_way.house_way(P, H("As As 9c 7h 5s 3d 2c"))
    assert e.value.code == "duplicate_card"
    with pytest.raises(Refused):
        paigow_way.house_way(P, [JOKER, JOKER, 1, 2, 3, 4, 5])


# ---- settlement: copies and commission -------------------------------------------------

@pytest.mark.parametrize("win, bps, rounding, unit, want", [
    (100, 500, "down", 1, 5),
    (119, 500, "down", 1, 5),     # 5.95 -> 5: never more than the posted 5%
    (119, 500, "up", 1, 6),       # 5.95 -> 6
    (120, 500, "up", 1, 6),       # exact stays exact
    (1010, 500, "down", 25, 50),  # 50.5 in a table whose smallest chip is 25
    (1010, 500, "up", 25, 75),
    (1000, 500, "up", 25, 50),
    (7, 500, "down", 1, 0),       # 0.35 -> 0
    (7, 500, "up", 1, 1),
    (999, 0, "down", 1, 0),
    (999, 10000, "down", 1, 999),
    (2 ** 29, 500, "down", 1, 2 ** 29 * 5 // 100),
])
def test_commission_rounding(win, bps, rounding, unit, want):
    assert paigow.commission(win, bps, rounding, unit) == want


def _scores(high, low):
    return evaluator.score(P, H(high)), evaluator.score(LOW, H(low))


BANK = _scores("Ts Td 8c 6h 3s", "Kd 9c")  # pair of tens / K-9


@pytest.mark.parametrize("high, low, outcome, hr, lr, amount", [
    ("Js Jd 8d 6c 3h", "As 9d", "win", "win", "win", 95),    # both win: 100 less 5
    ("Js Jd 8d 6c 3h", "Qs 9d", "push", "win", "lose", 0),   # one each
    ("9s 9h 8d 6c 3h", "Qs 9d", "lose", "lose", "lose", -100),
    # copies (identical hands, PR E) go to the banker:
    ("Th Tc 8d 6d 3h", "As 9d", "push", "copy", "win", 0),
    ("Js Jd 8d 6c 3h", "Kh 9h", "push", "win", "copy", 0),
    ("Th Tc 8d 6d 3h", "Kh 9h", "lose", "copy", "copy", -100),
])
def test_settle_copies_go_to_the_banker(high, low, outcome, hr, lr, amount):
    hs, ls = _scores(high, low)
    r = paigow.settle(100, hs, ls, BANK[0], BANK[1], False)
    assert (r["outcome"], r["high_result"], r["low_result"], r["amount"]) == \
        (outcome, hr, lr, amount)
    assert r["commission"] == (5 if outcome == "win" else 0)


def test_settle_foul_loses_even_when_both_hands_beat_the_banker():
    hs, ls = _scores("Js Jd 8d 6c 3h", "As Ad")
    r = paigow.settle(100, hs, ls, BANK[0], BANK[1], True)
    assert r == {"outcome": "foul", "high_result": "lose", "low_result": "lose",
                 "commission": 0, "amount": -100}


def test_settle_commission_options():
    hs, ls = _scores("Js Jd 8d 6c 3h", "As 9d")
    r = paigow.settle(1010, hs, ls, BANK[0], BANK[1], False, 500, "up", 25)
    assert (r["commission"], r["amount"]) == (75, 935)
    assert all(type(v) is int for v in (r["commission"], r["amount"]))


def test_settle_seats_is_settle_for_every_seat_in_one_call():
    # The round's path (settle_round, the chip's benchmark) against the one-seat
    # reference, on random settings (fouls included), every commission option.
    rng = random.Random(13)
    for n in range(300):
        deck = list(range(53))
        rng.shuffle(deck)
        banker = deck[:7]
        bh, bl, _ = paigow_way.house_way(P, banker)
        bhs, bls = evaluator.score(P, bh), evaluator.score(LOW, bl)
        seats, want = [], []
        bps, rounding, unit = rng.choice([(500, "down", 1), (500, "up", 25), (400, "down", 5)])
        for k in range(rng.randint(1, 6)):
            cards = deck[7 + 7 * k:14 + 7 * k]
            high, low = cards[:5], cards[5:]  # as dealt: often a foul
            wager = rng.randint(1, 2000)
            lose = rng.choice([None, True, False])
            hs, ls = evaluator.score(P, high), evaluator.score(LOW, low)
            fouls = not paigow_rules.outranks(P, hs, ls)
            seats.append((wager, high, low, lose))
            want.append((hs, ls, fouls if lose is None else lose,
                         paigow.settle(wager, hs, ls, bhs, bls,
                                       fouls if lose is None else lose, bps, rounding,
                                       unit)))
        rows = paigow.settle_seats(P, seats, bhs, bls, bps, rounding, unit)
        for i, (hs, ls, lose, x) in enumerate(want):
            r = rows[i]
            assert r[:3] == [hs, ls, lose]
            assert dict(zip(("outcome", "high_result", "low_result", "commission",
                             "amount"), r[3:])) == x, (n, i)
