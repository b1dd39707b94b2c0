"""Census: how many hands of each category a game's deck holds.

Three ways, which must agree:
- `exhaustive`: ranks every hand of the deck with the firmware's evaluator
  (2,598,960 for five cards, 20,358,520 for the All-Six), split over the CPU cores;
- `core`: the same, every hand through the evaluator's rule core alone (no fast path,
  no host cache): the slow, plain proof;
- `grouped`: ranks one representative hand per class of hands the evaluator cannot
  tell apart, and multiplies by the class size. A hand's score depends only on its
  rank multiset, its joker, and which ranks sit in a suit holding enough cards to make
  a flush (suits never rank: NJ (b), PA (a)); so the classes are (rank multiset, flush
  suit's ranks), counted with binomials. Thousands of evaluations instead of millions.
"""
import itertools
import operator
import os
from collections import Counter
from math import comb, prod

from host_tools import process_pool
from host_tools.fast import hostfast
from pitboss.rules import evaluator, profiles
from pitboss.rules.cards import JOKER


def _count_from(args):
    """Every hand whose lowest card is `first`: {rung: hands}, set of scores. The loop
    runs in C (map, Counter); each hand still goes through the evaluator: its public
    score() (fast path and host cache), or with core=True the rules' core alone."""
    gid, first, core = args
    p = profiles.get(gid)
    hands = map(operator.add, itertools.repeat((first,)),
                itertools.combinations(range(first + 1, p.deck), p.size - 1))
    rank = evaluator.score_core if core else evaluator.score
    by_score = Counter(map(rank, itertools.repeat(p), hands))
    counts = {}
    for s, n in by_score.items():
        counts[s >> 26] = counts.get(s >> 26, 0) + n
    return counts, set(by_score)


def exhaustive(p, workers=None, core=False):
    """{rung: hands}, set of distinct scores; every hand of the deck is ranked."""
    jobs = [(p.id, f, core) for f in range(p.deck - p.size + 1)]
    workers = workers or os.cpu_count() or 1
    hostfast.install()  # the host's score(): the core's own scores, looked up
    counts, scores = {}, set()
    if workers > 1:
        # Each worker installs the host's score() and loads the tables itself: the
        # pool's workers are not forks of this process (host_tools.process_pool).
        with process_pool(workers, hostfast.install) as pool:
            parts = pool.imap_unordered(_count_from, jobs)
            for c, s in parts:
                _merge(counts, c)
                scores |= s
    else:
        for job in jobs:
            c, s = _count_from(job)
            _merge(counts, c)
            scores |= s
    return counts, scores


def _merge(into, part):
    for k, v in part.items():
        into[k] = into.get(k, 0) + v


def _multisets(n):
    """Rank multisets of n cards, each rank at most 4 times, as a tuple of 13 counts."""
    def rec(r, left, acc):
        if r == 13:
            if left == 0:
                yield tuple(acc)
            return
        for m in range(min(4, left) + 1):
            acc.append(m)
            yield from rec(r + 1, left - m, acc)
            acc.pop()
    return rec(0, n, [])


def _spread(counts, avoid, need, taken=None):
    """Card IDs for the ranks in `counts`, suits chosen so no suit but `avoid` (already
    holding `taken` cards) reaches `need` cards; None if impossible."""
    load = [0, 0, 0, 0]
    if avoid >= 0:
        load[avoid] = taken
    ids = []
    for r, m in enumerate(counts):
        free = [s for s in range(4) if s != avoid]
        free.sort(key=lambda s: load[s])
        if m > len(free):
            return None
        for s in free[:m]:
            load[s] += 1
            ids.append(r * 4 + s)
    if any(load[s] >= need for s in range(4) if s != avoid):
        return None
    return ids


def grouped(p):
    """Same result as exhaustive(p), from one representative per class of hands."""
    counts, scores = {}, set()

    def add(ids, n):
        if n:
            s = evaluator.score(p, ids)
            counts[s >> 26] = counts.get(s >> 26, 0) + n
            scores.add(s)

    for jk in ((0, 1) if p.joker else (0,)):
        n_real = p.size - jk
        need = p.hand - jk if p.flushes else p.size + 1
        # A hand can hold only one suit of `need` cards, or the classes would overlap.
        assert n_real < 2 * need, p.id
        joker = [JOKER] * jk
        for ms in _multisets(n_real):
            total = prod(comb(4, m) for m in ms)
            held = [r for r in range(13) if ms[r]]
            flush_total = 0
            for k in range(need, len(held) + 1):
                for suited in itertools.combinations(held, k):
                    inside = set(suited)
                    ways = 4 * prod(comb(3, m - (r in inside)) for r, m in enumerate(ms))
                    if not ways:
                        continue
                    rest = [m - (r in inside) for r, m in enumerate(ms)]
                    ids = _spread(rest, 0, need, taken=k)
                    assert ids is not None, (p.id, ms, suited)
                    add([r * 4 for r in suited] + ids + joker, ways)
                    flush_total += ways
            plain = total - flush_total
            if plain:
                ids = _spread(list(ms), -1, need)
                assert ids is not None, (p.id, ms)
                add(ids + joker, plain)
    return counts, scores


def census(gid, method="exhaustive", workers=None):
    """The census as printed by `pitboss census`: counts by category name, highest first."""
    p = profiles.get(gid)
    if method == "grouped":
        counts, scores = grouped(p)
    elif method in ("exhaustive", "core"):
        counts, scores = exhaustive(p, workers, core=method == "core")
    else:
        raise ValueError("census method: exhaustive, core or grouped, not %r" % method)
    named = {}
    for rung in sorted(counts, reverse=True):
        named[p.category(rung << 26)] = counts[rung]
    return {"game": gid, "total": sum(counts.values()), "counts": named,
            "distinct_scores": len(scores), "method": method}
