"""The host's score(): the firmware evaluator's own scores, looked up (CPython only).

Installed explicitly by the host side (`hostfast.install()`: the CLI, census, bench,
tests) as pitboss.rules.evaluator's score(); nothing in firmware/ imports this and nothing is
set on a firmware class. `evaluator.use(None)` puts the board's score() back.

A hand's score depends on its rank multiset (the joker a fourteenth rank) and, when one
suit holds enough cards for a flush, on which ranks that suit holds; and it is the
larger of the two parts' scores (a flush-kind from the suit, every other kind from the
ranks: _eval takes the best of exactly these). So for n cards of a game the host keeps
  plain[rank multiset key] -> score          (one hand per multiset, suits spread)
  flush[suit's rank mask | joker << 13] -> score of those suited cards (and joker)
both computed by the rule core at build time (host_tools/fast/gentables.py, shipped in
host_tools/fast/tables/, checked by tests/host/test_tables.py) or, for a size not shipped, at its
first use. Per-card key K[c] = W[rank] << 12 | 1 << 3 * suit (host_tools/fast/hand_keys.py): the
sum's high part is the multiset key (W: sums of up to seven are unique, checked by the
generator), its low 12 bits count the cards of each suit, which FL[...] turns into the
suit that may flush.
"""
from __future__ import annotations

import os
import sys
import zlib
from array import array
from bisect import bisect_left
from operator import itemgetter

from pitboss.rules import evaluator, profiles

from host_tools.fast import hand_keys

TABLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tables")
# The hot paths below read the key scheme's tables as module globals.
_JOKER, _K, _K5, _FLUSH5 = hand_keys.JOKER, hand_keys.K, hand_keys.K5, hand_keys.FLUSH5
W5 = hand_keys.W5


_flsuit = {}


def _fl(need):
    """bytes: suit-count vector (the key's low 12 bits) -> the suit holding >= need
    cards, 4 if none."""
    t = _flsuit.get(need)
    if t is None:
        b = bytearray(b"\x04" * 4096)
        r = range(8)
        for c3 in r:
            for c2 in r:
                for c1 in r:
                    v = c3 << 9 | c2 << 6 | c1 << 3
                    for c0 in r:
                        top = max(c0, c1, c2, c3)
                        if top >= need:
                            b[v | c0] = (c0, c1, c2, c3).index(top)
        t = _flsuit[need] = bytes(b)
    return t


def load(p, n, lazy=False):
    """(plain dict, flush list) for n cards of p: shipped, or built from the core.
    lazy: the dict starts empty and _miss() fills it from the sorted arrays (a seven-card
    table has 49,205 entries: building the dict would dominate a cold start)."""
    path = os.path.join(TABLES, "%s-%d.bin" % (p.id, n))
    if os.path.exists(path):
        with open(path, "rb") as f:
            raw = zlib.decompress(f.read())
        count = int.from_bytes(raw[:4], "little")
        keys, plain, flush = array("I"), array("I"), array("I")
        if keys.itemsize != 4:
            raise RuntimeError("hostfast: array('I') is not 32-bit here")
        keys.frombytes(raw[4:4 + 4 * count])
        plain.frombytes(raw[4 + 4 * count:4 + 8 * count])
        flush.frombytes(raw[4 + 8 * count:])
        if sys.byteorder != "little":
            for a in (keys, plain, flush):
                a.byteswap()
    else:
        from host_tools.fast.gentables import host_table
        keys, plain, flush = host_table(p, n)
    if lazy:
        _SORTED[p, n] = keys, plain
        return {}, flush.tolist()
    return dict(zip(keys, plain)), flush.tolist()


_SORTED = {}


def _miss(p, n, d, key):
    """A plain score not yet in the lazily filled dict d: binary search, remembered."""
    keys, plain = _SORTED[p, n]
    i = bisect_left(keys, key)
    if i == len(keys) or keys[i] != key:
        raise KeyError(key)  # not a hand of n cards of this game
    v = d[key] = plain[i]
    return v


def _flush_mask(cards, s):
    m = 0
    for c in cards:
        if c == _JOKER:
            m |= 0x2000
        elif c & 3 == s:
            m |= 1 << (c >> 2)
    return m


class _Host:
    """One game's host tables, each loaded on its first use."""
    __slots__ = ("p", "p5", "f5", "d3", "p7", "f7", "_fl", "fns", "tpl", "ok")

    def __init__(self, p):
        self.p = p
        self.p5 = self.f5 = self.d3 = self.p7 = self.f7 = self._fl = None
        self.fns = {}  # other sizes: n -> score(cards)
        self.tpl = {}  # best(): rank multiset -> how the played hand is picked
        self.ok = frozenset(range(p.deck))  # best(): the card ids of the game's deck

    @property
    def fl(self):
        """The flush-suit table of this game (built on first use: 4,096 entries)."""
        if self._fl is None:
            p = self.p
            self._fl = _fl(p.hand - (1 if p.joker else 0) if p.flushes else 99)
        return self._fl

    def load5(self):
        plain, flush = load(self.p, 5)
        f5 = {}
        for rs in _combinations(14, 5):  # flush[mask | joker << 13] -> key of five cards
            v = flush[sum(1 << r for r in rs)]
            if v:
                f5[sum(W5[r] for r in rs)] = v
        self.f5 = f5
        self.p5 = plain

    def load7(self):
        self.p7, self.f7 = load(self.p, 7, lazy=True)

    def load3(self):
        """Three cards: d[a][b][c], every order of every hand (three list subscripts:
        no hashing, no arithmetic); None where the cards are not a hand."""
        fn = self.fn(3)
        d = [[[None] * 53 for _ in range(53)] for _ in range(53)]
        for a, b, c in _combinations(self.p.deck, 3):
            v = fn((a, b, c))
            d[a][b][c] = d[a][c][b] = d[b][a][c] = d[b][c][a] = d[c][a][b] = \
                d[c][b][a] = v
        self.d3 = d

    def fn(self, n):
        f = self.fns.get(n)
        if f is None:
            p = self.p
            if p.hand <= n <= 7 and (p.hand == n or p.hand == 5):
                P, F = load(p, n)
                K, FL = _K, self.fl
                if n <= 5:  # keyed by the five-card weights
                    def rk(cards, k):
                        return sum(_K5[c] for c in cards) >> 11
                else:
                    def rk(cards, k):
                        return k >> 12

                def f(cards):
                    k = 0
                    for c in cards:
                        k += K[c]
                    v = P[rk(cards, k)]
                    s = FL[k & 4095]
                    if s < 4:
                        x = F[_flush_mask(cards, s)]
                        if x > v:
                            return x
                    return v
            else:  # sizes no game deals: the board's own path
                def f(cards):
                    return evaluator._board_score(p, cards)
            f = self.fns[n] = f
        return f


def _combinations(deck, k):
    import itertools
    return itertools.combinations(range(deck), k)


_B = [1 << c for c in range(53)]  # three cards: the set itself is the key
_BV = _B + [1 << 60] * 53  # best()'s validity mask: ids 53..105 land on bit 60
_PB = None  # best(): _BV of two cards at once (built with the pair tables)
_host = {}
_PP5 = None
_PP7 = None


def _pairs():
    """Two cards' keys at once (built on the first table, not at import)."""
    global _PP5, _PP7, _PB
    _PP5 = [[a + b for b in _K5] for a in _K5]
    _PP7 = [[a + b for b in _K] for a in _K]
    _PB = [[x | y for y in _BV] for x in _BV]


def tables(p):
    t = _host.get(p)
    if t is None:
        if _PP5 is None:
            _pairs()
        t = _host[p] = _Host(p)
    return t


def score(p, cards):
    """evaluator.score() on the host: the same value, from the core's tables."""
    try:
        d = _G[p]  # the game's main table: one lookup decides the way
    except KeyError:  # (zero cost unless raised: only before the first hand)
        d = None
    if d is not None:
        if d.__class__ is list:  # a three-card game: d[a][b][c]
            try:
                a, b, c = cards
            except ValueError:  # (zero cost unless raised)
                return _first(p, cards)
            v = d[a][b][c]
            if v is not None:
                return v
            return evaluator._board_score(p, cards)  # not three different cards
        if len(cards) == 5:  # a five-card game's five cards
            a, b, c, d_, e = cards
            k = _PP5[a][b] + _PP5[c][d_] + _K5[e]
            if k & 2047 in _FLUSH5:
                return _F5[p][k >> 11]
            return d[k >> 11]
    n = len(cards)
    if n == 5:
        d = _P5.get(p)
        if d is not None:
            a, b, c, d_, e = cards
            k = _PP5[a][b] + _PP5[c][d_] + _K5[e]
            if k & 2047 in _FLUSH5:
                return _F5[p][k >> 11]
            return d[k >> 11]
    elif n == 7:
        d = _P7.get(p)
        if d is not None:
            a, b, c, d_, e, f, g = cards
            k = _PP7[a][b] + _PP7[c][d_] + _PP7[e][f] + _K[g]
            try:
                v = d[k >> 12]
            except KeyError:
                v = _miss(p, 7, d, k >> 12)
            s = _FL[p][k & 4095]
            if s < 4:
                x = _F7[p][_flush_mask(cards, s)]
                if x > v:
                    return x
            return v
    elif n == 6:  # the All-Six hand (its census: 20,358,520 hands)
        d = _P6.get(p)
        if d is not None:
            a, b, c, d_, e, f = cards
            k = _PP7[a][b] + _PP7[c][d_] + _PP7[e][f]
            v = d[k >> 12]
            s = _FL[p][k & 4095]
            if s < 4:
                x = _F6[p][_flush_mask(cards, s)]
                if x > v:
                    return x
            return v
    return _first(p, cards)


# per game (profile -> table), filled on first use by _first()
_P5, _F5, _P6, _F6, _P7, _F7, _D3, _FL = {}, {}, {}, {}, {}, {}, {}, {}
_G = {}  # the game's own size: its three-card table or its five-card plain dict


def _first(p, cards):
    """The first hand of a size (load its tables), or a size ranked by a generic fn."""
    t = _host.get(p) or tables(p)
    n = len(cards)
    if n == 5 and p not in _P5 and p.hand == 5:
        t.load5()
        _F5[p], _P5[p] = t.f5, t.p5
        if p.size == 5:
            _G[p] = t.p5
    elif n == 7 and p not in _P7 and p.hand == 5:
        t.load7()
        _FL[p], _F7[p], _P7[p] = t.fl, t.f7, t.p7
    elif n == 6 and p not in _P6 and p.hand == 5:
        _FL[p] = t.fl
        _P6[p], _F6[p] = load(p, 6)
    elif n == 3 and p not in _D3 and p.hand == 3:
        t.load3()
        _D3[p] = _G[p] = t.d3
    else:
        return t.fn(n)(cards)
    return score(p, cards)


score.__doc__ = evaluator._board_score.__doc__


def best(p, cards):
    """evaluator.best() on the host: the same (score, hand as played), ranked once.

    How the played hand is picked from the cards sorted high to low depends only on
    their ranks unless a suit may make a flush, so it is remembered per rank multiset
    (positions in that order, or the joker's literal text) from evaluator.played()
    itself; flush-capable hands go through evaluator.played()."""
    if p.t2:  # the two-card low game: its table is not a five-card one (issue 29)
        return evaluator._board_best(p, cards)
    t = _host.get(p) or tables(p)
    n = len(cards)
    if n == 7 and p in _P7:
        try:  # card ids, seven different (lists index only ints; ids 53.. poison)
            a, b, c, d, e, f, g = cards
            m = _PB[a][b] | _PB[c][d] | _PB[e][f] | _BV[g]
        except (IndexError, TypeError):  # not a card id: check() names it
            m = 0
        if m.bit_count() != 7 or m >> p.deck or a | b | c | d | e | f | g < 0 or \
                (m & 3 and bool in map(type, cards)):
            evaluator.check(p, cards, more=True)  # raises, naming the culprit
        k = _PP7[a][b] + _PP7[c][d] + _PP7[e][f] + _K[g]
        fs = t.fl[k & 4095]
        if fs > 3:  # no flush: score and how to pick the played cards, one lookup
            sp = t.tpl.get(k >> 12)
            if sp is None:
                s = score(p, cards)
                sp = t.tpl[k >> 12] = (s, _template(p, cards, s))
            s, pick = sp
            pool = sorted(cards)  # (positions count from the high end: see _template)
            if pick.__class__ is tuple:  # the joker's text in it (Jk=A, Jk=K)
                return s, [_NAMES[pool[i]] if i.__class__ is int else i for i in pick]
            a, b, c, d, e = pick(pool)
            N = _NAMES
            return s, [N[a], N[b], N[c], N[d], N[e]]
        s = score(p, cards)  # (the flush part included)
        x = _F7[p][_flush_mask(cards, fs)]
        if x < s or 52 in cards:
            if x > s:
                s = x
            return s, evaluator.played(p, cards, s)
        # a flush-kind of suit fs wins: its played cards follow from (score, suit)
        key = -(x << 2 | fs)
        out = t.tpl.get(key)
        if out is None:
            out = t.tpl[key] = tuple(evaluator.played(p, cards, x))
        return x, list(out)
    u = set(cards)
    if n < p.size or len(u) != n or not u <= t.ok or \
            ((0 in u or 1 in u) and any(x.__class__ is bool for x in cards)):
        evaluator.check(p, cards, more=True)  # raises, naming the culprit
    s = score(p, cards)
    k = 0
    for c in cards:
        k += _K[c]
    if t.fl[k & 4095] < 4:
        return s, evaluator.played(p, cards, s)
    key = k >> 12 | n << 26
    pick = t.tpl.get(key)
    if pick is None:
        pick = t.tpl[key] = _template(p, cards, s)
    pool = sorted(cards)
    if pick.__class__ is tuple:
        return s, [_NAMES[pool[i]] if i.__class__ is int else i for i in pick]
    return s, [_NAMES[i] for i in pick(pool)]


def _template(p, cards, s):
    """How evaluator.played() picks this hand's cards from the sorted cards:
    the same for every hand of this rank multiset that cannot flush. An itemgetter of
    five positions, or a tuple of positions and literal text (the joker's, or a hand
    other than five cards)."""
    out = evaluator.played(p, cards, s)
    # played() takes cards from the pool sorted high to low; best() sorts low to high
    # (no reverse= to parse), so a position is counted from the end: -1 the highest
    pos = {_NAMES[c]: i - len(cards) for i, c in enumerate(sorted(cards))}
    idx = tuple(pos.get(x, x) for x in out)
    if len(idx) == 5 and all(i.__class__ is int for i in idx):
        return itemgetter(*idx)
    return idx


_valid = {}
_NAMES = None


def install():
    """Make pitboss.rules.evaluator's score() and best() the host's (explicitly; never done at
    import). Everything that ranks through evaluator follows."""
    global _NAMES
    if _NAMES is None:
        from pitboss.rules.cards import name
        _NAMES = [name(c) for c in range(53)]
    evaluator.use(score, best)
    return score


def uninstall():
    evaluator.use(None)


def reset():
    """Forget every loaded table (tests: as a fresh process)."""
    for d in (_host, _P5, _F5, _P6, _F6, _P7, _F7, _D3, _FL, _SORTED, _G):
        d.clear()


def warm(gid, n=None):
    """Load a game's tables now (before timing, before forking workers)."""
    p = profiles.get(gid)
    n = p.size if n is None else n
    score(p, list(range(n)))
