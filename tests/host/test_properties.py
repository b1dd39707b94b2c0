"""Property tests of the evaluator (hypothesis), for every game in profiles.GAMES.

What the rule texts guarantee for any hands, not for hand-picked ones (those are in
tests/vectors/*.vec):

* a score is an int, 0 <= s < 2**30 (the firmware's small-int budget);
* scores order hands consistently with the categories: a higher category always scores
  higher, equal scores are the same category;
* the order the cards are given in never matters;
* suits never matter (NJ (b), PA (a), QC "sans égard a la couleur", PR E): renaming the
  four suits consistently leaves every score unchanged;
* the joker (PR A, C, README) may always be read as an ace, so it never scores below the
  same hand with an ace in its place; more exactly, its score is the best of its legal
  readings: an ace, or any card that completes a straight, flush, straight flush or
  royal flush; four aces and the joker are five aces (PR B.1);
* `best` of n cards is the best `rank` over all subsets of the game's size, and the
  hand it plays is made of those cards.
"""
import itertools
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_FW = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "firmware")
if _FW not in sys.path:  # tests/conftest.py normally does this
    sys.path.insert(0, _FW)

from pitboss.rules import cards, evaluator, profiles  # noqa: E402

JOKER = cards.JOKER
ACE = 12
GAMES = profiles.GAMES
JOKER_GAMES = tuple(g for g in GAMES if profiles.get(g).joker)
# Categories the joker may complete other than as an ace (PR C).
JOKER_COMPLETES = ("straight", "flush", "straight_flush", "royal_flush")

SETTINGS = settings(max_examples=100, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def hands(draw, game, n=None, joker=None):
    """n distinct cards of the game's deck (n defaults to the game's hand size).

    Half the draws come from a narrow band of ranks and suits so that pairs, trips,
    quads, straights, flushes and straight flushes (and the A-2-3-4-5 wheel, through
    the wrap of the band) turn up often; joker games hold the joker about half the
    time (joker=True/False forces it)."""
    p = profiles.get(game)
    n = p.size if n is None else n
    with_joker = p.joker and (draw(st.booleans()) if joker is None else joker)
    k = n - 1 if with_joker else n
    if draw(st.booleans()):
        pool = list(range(52))
    else:
        width = draw(st.integers(3, 8))
        lo = draw(st.integers(0, 12))
        ranks = [(lo + i) % 13 for i in range(width)]
        suits = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True))
        pool = [r * 4 + s for r in ranks for s in suits]
        if len(pool) < k:
            pool = list(range(52))
    idx = draw(st.lists(st.integers(0, len(pool) - 1), min_size=k, max_size=k,
                        unique=True))
    out = [pool[i] for i in idx]
    if with_joker:
        out.insert(draw(st.integers(0, k)), JOKER)
    return out


def cat_index(p, s):
    """Place of the score's category in the game's ladder, 0 = highest."""
    return p.categories.index(evaluator.category(p, s))


def relabel(ids, perm):
    return [c if c == JOKER else (c >> 2) * 4 + perm[c & 3] for c in ids]


def from_played(names):
    """'Jk=Ah' -> the joker's ID: the cards a played hand is made of."""
    return [JOKER if t.startswith("Jk") else cards.parse(t) for t in names]


# --- scores: ints in range, ordered like the categories --------------------------------

@pytest.mark.parametrize("game", GAMES)
def test_score_is_small_int_with_a_category(game):
    p = profiles.get(game)

    @SETTINGS
    @given(hands(game))
    def run(h):
        s = evaluator.rank(p, h)
        assert type(s) is int
        assert 0 <= s < 2 ** 30
        assert evaluator.category(p, s) in p.categories
        assert evaluator.score(p, h) == s  # the unchecked hot path agrees

    run()


@pytest.mark.parametrize("game", GAMES)
def test_score_order_follows_category_order(game):
    p = profiles.get(game)

    @SETTINGS
    @given(hands(game), hands(game))
    def run(a, b):
        sa, sb = evaluator.rank(p, a), evaluator.rank(p, b)
        ia, ib = cat_index(p, sa), cat_index(p, sb)
        if ia != ib:
            # a higher category (lower index) always has the higher score
            assert (sa > sb) == (ia < ib)
        if sa == sb:
            assert ia == ib

    run()


# --- invariances -------------------------------------------------------------------------

@pytest.mark.parametrize("game", GAMES)
def test_shuffling_never_changes_a_score(game):
    p = profiles.get(game)

    @SETTINGS
    @given(st.data())
    def run(data):
        h = data.draw(hands(game))
        shuffled = data.draw(st.permutations(h))
        assert evaluator.rank(p, shuffled) == evaluator.rank(p, h)

    run()


@pytest.mark.parametrize("game", GAMES)
def test_suit_relabelling_never_changes_a_score(game):
    p = profiles.get(game)

    @SETTINGS
    @given(hands(game), st.permutations(range(4)))
    def run(h, perm):
        assert evaluator.rank(p, relabel(h, perm)) == evaluator.rank(p, h)

    run()


@pytest.mark.parametrize("game", GAMES)
def test_played_hand_is_the_hand(game):
    """`played` of a hand of the game's size uses exactly its cards (the joker written
    Jk=...), and ranks the same; for the All-Six the five (or six) cards that make it."""
    p = profiles.get(game)

    @SETTINGS
    @given(hands(game))
    def run(h):
        s = evaluator.rank(p, h)
        used = from_played(evaluator.played(p, h))
        if p.size == p.hand:
            assert sorted(used) == sorted(h)
        elif evaluator.category(p, s) != "no_qualifying_hand":
            assert len(used) in (p.hand, p.size)
            assert set(used) <= set(h)

    run()


# --- the joker (PR A, B.1, C) --------------------------------------------------------------

@pytest.mark.parametrize("game", JOKER_GAMES)
def test_joker_never_below_an_ace(game):
    p = profiles.get(game)

    @SETTINGS
    @given(hands(game, joker=True))
    def run(h):
        s = evaluator.rank(p, h)
        for ace in range(ACE * 4, ACE * 4 + 4):
            if ace not in h:
                natural = [ace if c == JOKER else c for c in h]
                assert s >= evaluator.rank(p, natural)

    run()


@pytest.mark.parametrize("game", JOKER_GAMES)
def test_joker_is_its_best_legal_reading(game):
    """Brute force over the joker's readings: any ace (it counts as an ace, PR A), or
    any card at all where that card completes a straight, flush, straight flush or
    royal flush (PR C); four aces and the joker are five aces (PR B.1)."""
    p = profiles.get(game)

    @SETTINGS
    @given(hands(game, joker=True))
    def run(h):
        s = evaluator.rank(p, h)
        rest = [c for c in h if c != JOKER]
        if sum(1 for c in rest if c >> 2 == ACE) == 4:
            assert evaluator.category(p, s) == "five_aces"
            return
        want = -1
        for c in range(52):
            if c in rest:
                continue
            t = evaluator.rank(p, rest + [c])
            if c >> 2 == ACE or evaluator.category(p, t) in JOKER_COMPLETES:
                want = max(want, t)
        assert s == want

    run()


# --- best = max over subsets -----------------------------------------------------------

BEST_CASES = [
    ("nj-5card", 7), ("pr-pai-gow", 7), ("nj-3card", 5), ("pa-all-six", 7),
    ("qc-caribbean", 6), ("pa-three-card-prime", 4), ("pr-pai-gow-a5-low", 7),
    ("pr-pai-gow-low", 4),
]


@pytest.mark.parametrize("game,n", BEST_CASES)
def test_best_is_max_over_subsets(game, n):
    p = profiles.get(game)

    @SETTINGS
    @given(hands(game, n))
    def run(h):
        s, shown = evaluator.best(p, h)
        assert s == max(evaluator.rank(p, list(sub))
                        for sub in itertools.combinations(h, p.size))
        used = from_played(shown)
        assert set(used) <= set(h) and len(set(used)) == len(used)
        if p.size == p.hand:
            assert len(used) == p.size
            assert evaluator.rank(p, used) == s

    run()
