"""The five-card fast path in evaluator.score() is the core evaluator's own output.

`_score_bc` is score() as the board runs it (bytecode, tables from _fast5); on CPython
`score` is hostcache's (dicts filled by _eval): both are checked against _eval here.

score() ranks five-card hands from tables that _fast5() fills by running _eval() on one
hand per class; here every class is checked: every rank multiset of five cards (6,175)
with its suits spread, every five-rank set as a flush in every suit, and joker hands.
If a profile's scores did not fit the fast path's form it would decline (and _eval()
would rank every hand): that is checked too, by pretending a profile ranks otherwise.
"""
import itertools
import random

import pytest

from pitboss import evaluator, profiles

FIVE = [g for g in profiles.GAMES
        if profiles.get(g).size == 5 and profiles.get(g).hand == 5]


def _multisets():
    for ms in itertools.combinations_with_replacement(range(13), 5):
        if ms[0] != ms[4]:
            yield ms


def _spread(ms, shift):
    """Card ids for the ranks in ms, suits by occurrence (rotated): never a flush when
    two ranks repeat; for five ranks one card is moved to another suit."""
    seen = {}
    ids = []
    for r in ms:
        k = seen.get(r, 0)
        seen[r] = k + 1
        ids.append(r * 4 + (k + shift) % 4)
    if len(set(ms)) == 5:
        ids[0] = ids[0] & ~3 | (ids[1] + 1) & 3
    return ids


def test_the_fast_path_serves_the_five_card_games():
    assert FIVE == ["nj-5card", "qc-caribbean", "pr-pai-gow", "pr-pai-gow-a5-low"]
    for g in FIVE:
        p = profiles.get(g)
        evaluator._score_bc(p, [0, 4, 8, 12, 17])
        assert p._fast, g  # tables built on first use
    for g in set(profiles.GAMES) - set(FIVE):
        assert profiles.get(g)._fast is None


@pytest.mark.parametrize("gid", FIVE)
def test_every_class_matches_the_core(gid):
    p = profiles.get(gid)
    n = 0
    for ms in _multisets():
        for shift in (0, 1, 2):
            ids = _spread(ms, shift)
            want = evaluator._eval(p, ids, 5)
            for seq in (ids, tuple(reversed(ids)), bytes(ids)):
                assert evaluator._score_bc(p, seq) == want, (gid, ms, ids)
                assert evaluator.score(p, seq) == want, (gid, ms, ids)
            n += 1
    for ranks in itertools.combinations(range(13), 5):
        for suit in range(4):
            ids = [r * 4 + suit for r in ranks]
            want = evaluator._eval(p, ids, 5)
            assert evaluator._score_bc(p, ids) == want, (gid, ids)
            assert evaluator.score(p, ids) == want, (gid, ids)
    assert n == 3 * 6175


@pytest.mark.parametrize("gid", ["pr-pai-gow", "pr-pai-gow-a5-low"])
def test_joker_hands_match_the_core(gid):
    p = profiles.get(gid)
    rng = random.Random(7)
    for _ in range(20000):
        h = rng.sample(range(52), 4) + [52]
        rng.shuffle(h)
        assert evaluator._score_bc(p, h) == evaluator._eval(p, h, 5), h
        assert evaluator.score(p, h) == evaluator._eval(p, h, 5), h


@pytest.mark.parametrize("gid", FIVE)
def test_random_hands_match_the_core(gid):
    p = profiles.get(gid)
    rng = random.Random(11)
    for _ in range(20000):
        h = rng.sample(range(p.deck), 5)
        assert evaluator._score_bc(p, h) == evaluator._eval(p, h, 5), h
        assert evaluator.score(p, h) == evaluator._eval(p, h, 5), h
        assert evaluator.rank(p, h) == evaluator._eval(p, h, 5), h


def test_a_profile_that_does_not_fit_is_declined(monkeypatch):
    # A ladder where high cards do not score as their own rank mask (a different
    # scheme) would make the distinct-rank default wrong: the builder must notice.
    p = profiles.get("nj-5card")
    core = evaluator._eval

    def odd(q, c, n):
        v = core(q, c, n)
        return v + 1 if v >> 26 == 0 else v  # every high card scored off its mask

    monkeypatch.setattr(evaluator, "_eval", odd)
    assert evaluator._fast5(p) is None


@pytest.mark.parametrize("gid", FIVE)
def test_more_cards_than_five_go_to_the_core(gid):
    # score() of seven cards is the best five of them, as before the fast path
    p = profiles.get(gid)
    rng = random.Random(13)
    for _ in range(2000):
        h = rng.sample(range(p.deck), 7)
        assert evaluator._score_bc(p, h) == evaluator._eval(p, h, 7), h
        assert evaluator.score(p, h) == evaluator._eval(p, h, 7), h


@pytest.mark.parametrize("gid,n", [("pa-all-six", 6), ("nj-5card", 7), ("pr-pai-gow", 7),
                                   ("nj-3card", 3), ("pr-pai-gow-low", 2)])
def test_the_cpython_cache_returns_the_cores_scores(gid, n):
    # hostcache (CPython only) remembers _eval's scores by rank multiset and, when a
    # suit may make a flush, by the ranks that suit holds: flush-heavy hands included
    p = profiles.get(gid)
    rng = random.Random(17)
    for i in range(6000):
        if i % 3 == 0:  # most cards from one suit
            suit = rng.randrange(4)
            pool = [c for c in range(52) if c & 3 == suit]
            h = rng.sample(pool, min(n, rng.randrange(n - 1, n + 1)))
            h += rng.sample([c for c in range(p.deck) if c not in h], n - len(h))
        else:
            h = rng.sample(range(p.deck), n)
        assert evaluator.score(p, h) == evaluator._eval(p, h, n), (gid, h)
