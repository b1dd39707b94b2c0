"""Showdown for nj-5card and nj-3card: winners and split pots.

new-jersey-poker-ranks.txt (e): tied hands divide the pot equally. Odd units left by the
division go one each to the tied seats, lowest seat number first (our rule).
"""
import pytest

from pitboss import games
from pitboss.rules import profiles
from pitboss.rules.cards import parse_hand
from pitboss.errors import Refused
from pitboss.games import showdown

P5 = profiles.get("nj-5card")
P3 = profiles.get("nj-3card")


def run(p, hands, antes):
    return showdown.settle(p, {s: parse_hand(h) for s, h in hands.items()}, antes)


def test_single_winner_takes_the_pot():
    r = run(P5, {1: "As Ad Kc 7h 2s", 2: "Ks Kd Qc 7d 2c", 3: "9s 8d 6c 4h 2d"},
            {1: 100, 2: 100, 3: 100})
    assert r["pot"] == 300 and r["winners"] == [1]
    assert [r["seats"][s]["amount"] for s in (1, 2, 3)] == [200, -100, -100]
    assert r["seats"][1]["outcome"] == "win" and r["seats"][2]["outcome"] == "lose"


def test_tie_splits_the_pot_suits_never_break_ties():
    # NJ (b): all suits equal; NJ (e): identical hands divide the pot equally
    r = run(P5, {1: "As Kd Qc 7h 2s", 2: "Ah Kc Qd 7s 2c", 3: "9s 8d 6c 4h 2d"},
            {1: 50, 2: 50, 3: 50})
    assert r["winners"] == [1, 2]
    assert [r["seats"][s]["share"] for s in (1, 2, 3)] == [75, 75, 0]
    assert r["seats"][1]["outcome"] == "split"


def test_odd_units_go_to_the_lowest_seats_first():
    hands = {2: "As Kd Qc 7h 2s", 5: "Ah Kc Qd 7s 2c", 7: "Ad Kh Qs 7d 2h",
             1: "9s 8d 6c 4h 2d"}
    r = run(P5, hands, {1: 10, 2: 10, 5: 10, 7: 11})  # pot 41 among 3: 14, 14, 13
    assert r["winners"] == [2, 5, 7]
    assert {s: r["seats"][s]["share"] for s in hands} == {1: 0, 2: 14, 5: 14, 7: 13}
    assert sum(r["seats"][s]["amount"] for s in hands) == 0


def test_kicker_decides_before_a_split():
    # NJ (e): the highest card not contained in the other hand
    r = run(P5, {1: "As Ad Kc 7h 3s", 2: "Ah Ac Kd 7s 2c"}, {1: 1, 2: 1})
    assert r["winners"] == [1]


def test_nj_3card_straight_beats_flush():
    # NJ (d): a straight (4.) ranks above a flush (5.) in three-card hands
    r = run(P3, {1: "4s 5h 6d", 2: "2c 7c 9c", 3: "As 2d 3c"}, {1: 5, 2: 5, 3: 5})
    assert r["winners"] == [1]
    assert r["seats"][3]["category"] == "straight"  # A-2-3, the lowest straight


def test_best_five_of_seven():
    r = run(P5, {1: "As Ad Kc 7h 2s 9c 9d", 2: "Ks Qs Js Ts 2d 3c 4h"},
            {1: 20, 2: 20})
    # seat 1's best five: aces and nines, king kicker; seat 2's K-Q-J-T-4 is no
    # straight (four to one) and no flush (four spades)
    assert r["winners"] == [1]
    assert r["seats"][1]["category"] == "two_pair"
    assert r["seats"][2]["category"] == "high_card"
    assert len(r["seats"][1]["hand"]) == 5


@pytest.mark.parametrize("pot, seats, want", [
    (10, [3], {3: 10}),
    (10, [1, 2], {1: 5, 2: 5}),
    (11, [4, 2], {2: 6, 4: 5}),
    (2, [1, 2, 3], {1: 1, 2: 1, 3: 0}),
    (0, [1, 2], {1: 0, 2: 0}),
])
def test_split_pot(pot, seats, want):
    got = showdown.split_pot(pot, seats)
    assert got == want and sum(got.values()) == pot


def test_the_registry_names_each_games_family():
    # The one game -> family map (pitboss.games): a showdown game is played by this
    # module and no other.
    assert games.module("nj-5card") is showdown and games.module("nj-3card") is showdown
    assert games.family("pr-pai-gow") == "paigow"
    with pytest.raises(Refused) as e:
        games.family("blackjack")
    assert e.value.code == "unknown_game"
