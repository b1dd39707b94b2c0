"""Three Card Prime: dealer qualification, Ante/Play, Pair Bonus, Prime, All-Six Bonus.

Ranks: pennsylvania-three-card-prime-ranks.txt (PA (a)-(d)). Procedure: 58 Pa. Code
§ 679a.1 (Qualify, Bad Beat Bonus) and § 679a.7(d); settlement order as the Wizard of
Odds' Three Card Prime rules 7-14.
"""
import pytest

from pitboss.rules import paytables
from pitboss.games import threecard
from pitboss.rules.cards import parse_hand
from pitboss.errors import Refused

H = parse_hand
QUALIFIED = "Qd Jc 2h"    # queen high, the weakest kind of qualifying hand
UNQUALIFIED = "Jd Tc 8h"  # jack high

# Distinct odds per line so that each line is seen to pay its own odds.
PLAY = {"mini_royal": 70, "straight_flush": 60, "three_of_a_kind": 50, "straight": 40,
        "flush": 30, "one_pair": 20, "high_card": 10}

HANDS3 = {
    "mini_royal": "As Ks Qs",
    "straight_flush": "9h Th Jh",
    "three_of_a_kind": "7s 7h 7d",
    "straight": "4s 5h 6d",
    "flush": "2c 7c 9c",
    "one_pair": "8s 8h 3d",
    "high_card": "Ks 9h 4d",
}


def tables(**over):
    t = paytables.resolve(threecard.PAYTABLES, {"play": PLAY})
    for k in over:
        t[k] = paytables.validate(k, over[k])
    return t


def settle(player, dealer, played=True, wagers=None, bad_beat="straight", t=None):
    return threecard.settle(wagers or {"ante": 10}, H(player), H(dealer), played,
                            t or tables(), bad_beat)


@pytest.mark.parametrize("hand, q", [
    ("Qd 3c 2h", True),    # the lowest queen-high hand (58 Pa. Code § 679a.1)
    ("Qd Jc 9h", True),
    ("Jd Tc 8h", False),   # jack high does not qualify
    ("2d 2c 3h", True),    # any pair qualifies
    ("2d 4d 7d", True),    # a flush ranks above queen high (PA (b))
    ("As 2d 3c", True),    # A-2-3: the lowest straight (PA (a))
])
def test_dealer_qualifies_with_queen_high_or_better(hand, q):
    from pitboss.rules import evaluator
    assert threecard.qualifies(evaluator.score(threecard.profile(), H(hand))) is q


@pytest.mark.parametrize("line", sorted(HANDS3))
def test_dealer_not_qualifying_ante_pushes_play_pays_every_line(line):
    # Rule 8: "If the dealer does not qualify, then Ante will push and the Play bet
    # will pay according to the pay table."
    r = settle(HANDS3[line], UNQUALIFIED)
    assert r["category"] == line
    assert r["results"]["ante"] == {"wager": 10, "outcome": "push", "amount": 0}
    assert r["results"]["play"] == {"wager": 10, "outcome": "win", "line": line,
                                    "amount": 10 * PLAY[line]}
    assert r["amount"] == 10 * PLAY[line]


@pytest.mark.parametrize("line", sorted(HANDS3))
def test_player_beats_qualified_dealer(line):
    # Rule 10: the Ante pays even money and the Play according to the pay table.
    r = settle(HANDS3[line], QUALIFIED)
    assert r["results"]["ante"]["amount"] == 10
    assert r["results"]["play"]["amount"] == 10 * PLAY[line]
    assert r["amount"] == 10 + 10 * PLAY[line]


def test_dealer_wins_ante_and_play_lose_for_flush_or_less():
    # Rule 11: "If the player has flush or less, the Play will also lose."
    r = settle("2c 7c 9c", "3s 3h 5d")  # a flush beats a pair (PA (b)(5), (6))
    assert r["results"]["ante"]["outcome"] == "win"
    r = settle("2c 7c 9c", "4s 5h 6d")  # a straight beats a flush (PA (b)(4), (5))
    assert r["results"]["ante"] == {"wager": 10, "outcome": "lose", "amount": -10}
    assert r["results"]["play"]["outcome"] == "lose"
    assert r["amount"] == -20


def test_bad_beat_pays_the_play_on_a_losing_straight_or_better():
    # Rule 11: "In the unlikely event the player loses with a straight or higher, the
    # Play bet will pay according to the pay table." (58 Pa. Code § 679a.1 Bad Beat)
    r = settle("4s 5h 6d", "9h Th Jh")
    assert r["results"]["ante"]["amount"] == -10
    assert r["results"]["play"] == {"wager": 10, "outcome": "win", "line": "straight",
                                    "amount": 400, "rule": "bad_beat"}
    # the certificate holder's table may start the bad beat at a flush instead ...
    r = settle("2c 7c 9c", "4s 5h 6d", bad_beat="flush")
    assert r["results"]["play"]["amount"] == 300
    # ... or (our "none") not pay one at all
    r = settle("4s 5h 6d", "9h Th Jh", bad_beat="none")
    assert r["results"]["play"]["amount"] == -10


def test_tie_ante_pushes_play_pays():
    # Rule 12: "If the player and dealer tie, then the Ante will push and the Play will
    # pay according to the pay table." Suits never break ties (PA (a), (c)).
    r = settle("Qs 9h 4d", "Qd 9c 4h")
    assert r["results"]["ante"]["outcome"] == "push"
    assert r["results"]["play"]["amount"] == 10 * PLAY["high_card"]


def test_fold_loses_the_ante_only():
    # Rule 4: "If the player folds, then he forfeits his Ante wager."
    r = settle("Ks 9h 4d", UNQUALIFIED, played=False)
    assert r["results"] == {"ante": {"wager": 10, "outcome": "lose", "amount": -10}}
    assert r["amount"] == -10


PAIR_BONUS = {"mini_royal": 100, "straight_flush": 40, "three_of_a_kind": 30,
              "straight": 6, "flush": 3, "one_pair": 1}


@pytest.mark.parametrize("line", sorted(HANDS3))
def test_pair_bonus_every_line_even_when_folded(line):
    t = tables(pair_bonus=PAIR_BONUS)
    for played in (True, False):
        r = settle(HANDS3[line], QUALIFIED, played, {"ante": 10, "pair_bonus": 7}, t=t)
        pb = r["results"]["pair_bonus"]
        if line == "high_card":  # "a pair or better" (§ 679a.7(d)(3))
            assert pb == {"wager": 7, "outcome": "lose", "line": "high_card",
                          "amount": -7}
        else:
            assert pb == {"wager": 7, "outcome": "win", "line": line,
                          "amount": 7 * PAIR_BONUS[line]}


def test_pair_bonus_default_table_pays_mini_royal_as_straight_flush():
    r = settle("As Ks Qs", QUALIFIED, True, {"ante": 10, "pair_bonus": 5},
               t=paytables.resolve(threecard.PAYTABLES, {}))
    assert r["results"]["pair_bonus"]["amount"] == 200


@pytest.mark.parametrize("player, dealer, line, amount", [
    ("2h 5d 9h", "3s 8c Kc", "three_same_colour", 30),   # player's three red: 3 to 1
    ("2s 5c 9s", "3h 8d Kh", "three_same_colour", 30),   # three black
    ("2h 5d 9h", "3h 8d Kh", "six_same_colour", 40),     # all six red: 4 to 1
    ("2s 5c 9s", "3c 8s Kc", "six_same_colour", 40),
    ("2h 5c 9h", "3h 8d Kh", None, -10),                 # mixed colours lose
])
def test_prime_every_line(player, dealer, line, amount):
    r = settle(player, dealer, False, {"ante": 10, "prime": 10})
    assert r["results"]["prime"]["amount"] == amount
    assert r["results"]["prime"].get("line") == line


ALL_SIX = {"six_card_royal_flush": 800, "royal_flush": 700, "straight_flush": 600,
           "four_of_a_kind": 500, "full_house": 400, "flush": 300, "straight": 200,
           "three_of_a_kind": 100}


@pytest.mark.parametrize("player, dealer, line", [
    ("As Ks Qs", "Js Ts 9s", "six_card_royal_flush"),  # PA (d)(1)
    ("As Ks Qs", "Js Ts 2d", "royal_flush"),           # PA (d)(2)
    ("5h 6h 7h", "8h 9h 2c", "straight_flush"),        # PA (d)(3)
    ("7s 7h 7d", "7c 2s 9d", "four_of_a_kind"),        # PA (d)(4)
    ("7s 7h 7d", "9c 9s 2d", "full_house"),            # PA (d)(5)
    ("2c 5c 9c", "Jc Kc 3d", "flush"),                 # PA (d)(6)
    ("4s 5h 6d", "7c 8s Kd", "straight"),              # PA (d)(7)
    ("7s 7h 7d", "2c 9s Kd", "three_of_a_kind"),       # PA (d)(8)
    ("2s 2h 5d", "9c Js Kd", None),                    # below three of a kind: loses
])
def test_all_six_every_line(player, dealer, line):
    t = tables(all_six=ALL_SIX)
    r = settle(player, dealer, False, {"ante": 10, "all_six": 3}, t=t)
    a6 = r["results"]["all_six"]
    if line is None:
        assert (a6["outcome"], a6["amount"], a6["line"]) == \
            ("lose", -3, "no_qualifying_hand")
    else:
        assert (a6["outcome"], a6["line"], a6["amount"]) == ("win", line, 3 * ALL_SIX[line])
    # the hand as played: the five cards that make it (all six for the six-card royal)
    assert len(a6["hand"]) == (6 if line in ("six_card_royal_flush", None) else 5)


def test_fractional_odds_round_down():
    t = tables(pair_bonus={"one_pair": [3, 2]})
    r = settle("8s 8h 3d", QUALIFIED, False, {"ante": 10, "pair_bonus": 7}, t=t)
    assert r["results"]["pair_bonus"]["amount"] == 10  # 7 * 3 / 2 = 10.5 -> 10


@pytest.mark.parametrize("kind, table, msg", [
    ("play", {"mini_royal": 1}, "missing line"),
    ("play", dict(PLAY, royal_flush=5), "no line"),
    ("pair_bonus", {"one_pair": 1.5}, "must be an int"),
    ("pair_bonus", {"one_pair": -1}, "out of range"),
    ("pair_bonus", {"one_pair": [1, 0]}, "out of range"),
    ("prime", {}, "non-empty"),
    ("all_six", ["royal_flush", 5], "non-empty dict"),
    ("bonus", {"x": 1}, "unknown paytable"),
])
def test_paytable_override_refused(kind, table, msg):
    with pytest.raises(Refused) as e:
        paytables.validate(kind, table)
    assert msg in str(e.value) and e.value.code == "bad_config"


def test_default_paytables_validate_and_name_their_source():
    for kind in paytables.DEFAULTS:
        d = paytables.DEFAULTS[kind]
        assert d["source"] and isinstance(d["verified"], bool)
        assert paytables.default(kind)
