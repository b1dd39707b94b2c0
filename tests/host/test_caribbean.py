"""Caribbean Poker (qc-caribbean): dealer qualification, Ante and Call, the paytable.

Ranks: quebec-caribbean-poker-ranks.fr.txt (art. 67.11). Procedure: Loto-Québec's
"Poker des Caraïbes" (Call = twice the ante; an unqualified dealer pays the antes and
not the raises). Default paytable: 100/50/20/7/5/4/3/2/1/1 (= 58 Pa. Code § 671a.12(d)).
"""
import pytest

from pitboss.rules import evaluator, paytables
from pitboss.games import caribbean
from pitboss.rules.cards import parse_hand
from pitboss.errors import Refused

H = parse_hand
DEALER_AK = "Ad Kc 5s 4h 2c"  # ace-king: the weakest kind of qualifying hand
TABLES = paytables.resolve(caribbean.PAYTABLES, {})
CALL = paytables.DEFAULTS["call"]["lines"]

# One winning hand per paytable line, each beating DEALER_AK with cards it does not hold.
LINES = {
    "royal_flush": "Th Jh Qh Kh Ah",        # art. 67.11 1°
    "straight_flush": "5d 6d 7d 8d 9d",     # 2°
    "four_of_a_kind": "9s 9h 9d 9c 3s",     # 3°
    "full_house": "8s 8h 8d 3c 3h",         # 4°
    "flush": "2h 6h 9h Jh Qh",              # 5°
    "straight": "6s 7h 8c 9d Ts",           # 6°
    "three_of_a_kind": "7s 7h 7c Qd 3d",    # 7°
    "two_pair": "6s 6h Jc Js 3s",           # 8°
    "one_pair": "Qs Qh 8c 6d 3c",           # 9°
    "ace_king": "Ah Ks Qd 9c 7s",           # high card: at least ace-king to win
}


def settle(player, dealer, called=True, ante=10, tables=TABLES):
    return caribbean.settle({"ante": ante}, H(player), H(dealer), called, tables)


def test_default_paytable_is_the_posted_schedule():
    assert CALL == {"royal_flush": 100, "straight_flush": 50, "four_of_a_kind": 20,
                    "full_house": 7, "flush": 5, "straight": 4, "three_of_a_kind": 3,
                    "two_pair": 2, "one_pair": 1, "ace_king": 1}


@pytest.mark.parametrize("line", sorted(LINES))
def test_every_paytable_line(line):
    r = settle(LINES[line], DEALER_AK)
    assert r["results"]["ante"] == {"wager": 10, "outcome": "win", "amount": 10}
    assert r["results"]["call"] == {"wager": 20, "outcome": "win", "line": line,
                                    "amount": 20 * CALL[line]}
    assert r["amount"] == 10 + 20 * CALL[line]


@pytest.mark.parametrize("hand, q", [
    ("As Kh 4d 3c 2s", True),    # the lowest ace-king hand
    ("As Qh Jd 9c 8s", False),   # ace-queen does not qualify
    ("Ks Qh Jd 9c 8s", False),
    ("2s 2h 4d 6c 8s", True),    # any pair qualifies
    ("As 2h 3d 4c 5s", True),    # the wheel is a straight (art. 67.11 6°)
    ("Qs Ks As 2h 3d", True),    # Q-K-A-2-3 is no straight, but it is ace-king high
])
def test_dealer_qualifies_with_ace_king_or_better(hand, q):
    assert caribbean.qualifies(evaluator.score(caribbean.profile(), H(hand))) is q


@pytest.mark.parametrize("player", ["2s 3h 5d 7c 9s", "Qs Qh 8c 6d 3c"])
def test_dealer_not_qualifying_pays_ante_and_pushes_call(player):
    # even a hand the dealer's would beat is paid: the dealer did not qualify
    r = settle(player, "As Qh Jd 9c 8d")
    assert r["results"]["ante"] == {"wager": 10, "outcome": "win", "amount": 10}
    assert r["results"]["call"] == {"wager": 20, "outcome": "push", "amount": 0}
    assert r["amount"] == 10


def test_dealer_wins_ante_and_call_lose():
    r = settle("Ah Ks Qd 9c 7s", "2s 2h 4d 6c 8s")
    assert r["amount"] == -30
    assert r["results"]["call"]["outcome"] == "lose"


def test_tie_pushes_both():
    # identical ranks tie: suits never break ties (art. 67.11 ranks only by value)
    r = settle("Ah Ks Qd 9c 7s", "As Kh Qc 9d 7h")
    assert r["results"]["ante"]["outcome"] == "push"
    assert r["results"]["call"]["outcome"] == "push"
    assert r["amount"] == 0


def test_fold_loses_ante():
    r = settle("Th Jh Qh Kh Ah", DEALER_AK, called=False)
    assert r["results"] == {"ante": {"wager": 10, "outcome": "lose", "amount": -10}}


def test_configured_paytable_and_rounding():
    t = paytables.resolve(caribbean.PAYTABLES,
                          {"call": dict(CALL, flush=[7, 2], royal_flush=250)})
    assert settle(LINES["flush"], DEALER_AK, ante=5, tables=t)["results"]["call"]["amount"] \
        == 35  # 10 * 7 / 2
    assert settle(LINES["flush"], DEALER_AK, ante=3, tables=t)["results"]["call"]["amount"] \
        == 21  # 6 * 7 / 2
    assert settle(LINES["royal_flush"], DEALER_AK, tables=t)["results"]["call"]["amount"] \
        == 5000


@pytest.mark.parametrize("over, msg", [
    ({"call": {"royal_flush": 100}}, "missing line"),
    ({"call": dict(CALL, mini_royal=5)}, "no line"),
    ({"call": dict(CALL, flush="5:1")}, "must be an int"),
    ({"play": dict(CALL)}, "not used by this game"),
    ("call", "must be a dict"),
])
def test_paytable_override_refused(over, msg):
    with pytest.raises(Refused) as e:
        paytables.resolve(caribbean.PAYTABLES, over)
    assert msg in str(e.value)
