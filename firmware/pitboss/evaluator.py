# The one hand evaluator: every game is a Profile (pitboss.profiles), never a code path.
#
# A hand of any size is reduced to rank bitmasks (bit r = rank r, deuce = bit 0):
#   m1 ranks held at least once, m2 at least twice, m3 thrice, m4 four times,
#   _sm[s] the ranks held in suit s.
# It scores the best `p.hand`-card poker hand those cards make (5 from 5, 5 from 7,
# 5 from the All-Six's 6, 3 from 3, 2 from 2) as
#   score = rung << 26 | tie-break          (0 <= score < 2**30: a small int on the board)
# where rung is the kind's place on the game's ladder and the tie-break is two 13-bit
# rank masks, the ranked part first (pair, trips, quads...) and the rest after. Comparing
# two masks holding the same number of ranks as integers is exactly the texts' tie rule:
# "the hand which contains the highest ranking card ... which is not contained in the
# other hand" (NJ (e), PA (c), PR E). Suits never enter a score (NJ (b), PA (a)).
#
# score() allocates nothing (tested under micropython.heap_lock()): masks are small ints,
# the suit masks live in one preallocated array.
import sys
from array import array

from pitboss.compat import const
from pitboss.cards import CardError, JOKER, RANKS, SUITS, name
from pitboss.profiles import (
    HIGH, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL, QUADS, SF, ROYAL, FIVE_ACES,
    SIX_ROYAL, NO_QUALIFY, get,  # noqa: F401  (get: re-exported for callers)
)

_ACE = const(0x1000)
_ALL = const(0x1FFF)
_SIX_ROYAL = const(0x1F80)  # A K Q J 10 9: PA (d)(1)
_RUNG = const(26)
_TB = const(0x3FFFFFF)

_sm = array("H", (0, 0, 0, 0))
_seen = bytearray(53)


def _hi(m):
    """The highest rank bit of m (0 if none)."""
    b = _ACE
    while b and not m & b:
        b >>= 1
    return b


def _top(m, k):
    """The k highest rank bits of m: kickers and the five best cards of a flush."""
    r = 0
    b = _ACE
    while k > 0 and b:
        if m & b:
            r |= b
            k -= 1
        b >>= 1
    return r


def _count(m):
    n = 0
    while m:
        m &= m - 1
        n += 1
    return n


def _straight(p, m, jk, sf):
    """Tie-break value of the best straight the ranks in m make, the joker filling at
    most one gap (PR C); -1 if none. No wrap-around: windows stop at the ace (NJ (c)2)."""
    best = -1
    for w in p.windows:
        x = w & ~m
        if not x or (jk and not x & (x - 1)):
            best = w
            break
    if best == p.top_window:
        return best
    x = p.wheel & ~m
    if not x or (jk and not x & (x - 1)):
        v = p.wheel_sf if sf else p.wheel_straight
        if v > best:
            best = v
    return best


def _eval(p, c, n):
    h = p.hand
    m1 = m2 = m3 = m4 = 0
    jk = 0
    sm = _sm
    sm[0] = sm[1] = sm[2] = sm[3] = 0
    for i in range(n):
        x = c[i]
        if x == JOKER:
            jk = 1
            continue
        b = 1 << (x >> 2)
        sm[x & 3] |= b
        if m1 & b:
            if m2 & b:
                if m3 & b:
                    m4 |= b
                else:
                    m3 |= b
            else:
                m2 |= b
        else:
            m1 |= b
    order = p.order
    best = 0
    if p.flushes:
        need = h - jk
        for s in range(4):
            f = sm[s]
            if f and _count(f) >= need:
                if p.six_royal and f & _SIX_ROYAL == _SIX_ROYAL:
                    return order[SIX_ROYAL] << _RUNG
                v = _straight(p, f, jk, True)
                if v == p.top_window:
                    kind = ROYAL
                    v = 0
                elif v >= 0:
                    kind = SF
                else:
                    # PR C + README: the joker is the highest card of the suit missing.
                    if jk:
                        f |= _hi(_ALL & ~f)
                    kind = FLUSH
                    v = _top(f, h)
                v |= order[kind] << _RUNG
                if v > best:
                    best = v
    if p.straights:
        v = _straight(p, m1, jk, False)
        if v >= 0:
            v |= order[STRAIGHT] << _RUNG
            if v > best:
                best = v
    if jk:
        # PR A: otherwise the joker is an ace; it pairs nothing else (PR C lists only
        # straights and flushes), and with four aces it makes five aces (PR B.1).
        if m4 & _ACE and p.five_aces:
            return order[FIVE_ACES] << _RUNG
        if m3 & _ACE:
            m4 |= _ACE
        elif m2 & _ACE:
            m3 |= _ACE
        elif m1 & _ACE:
            m2 |= _ACE
        else:
            m1 |= _ACE
    if h >= 5 and m4:
        q = _hi(m4)
        v = order[QUADS] << _RUNG | q << 13 | _top(m1 & ~q, h - 4)
    elif h >= 3 and m3:
        t = _hi(m3)
        pr = m2 & ~t
        if h >= 5 and pr:
            v = order[FULL] << _RUNG | t << 13 | _hi(pr)
        else:
            v = order[TRIPS] << _RUNG | t << 13 | _top(m1 & ~t, h - 3)
    elif m2:
        if h >= 4 and m2 & (m2 - 1):
            t = _top(m2, 2)
            v = order[TWO_PAIR] << _RUNG | t << 13 | _top(m1 & ~t, h - 4)
        else:
            t = _hi(m2)
            v = order[PAIR] << _RUNG | t << 13 | _top(m1 & ~t, h - 2)
    else:
        v = order[HIGH] << _RUNG | _top(m1, h)
    if v > best:
        best = v
    if p.floor and best >> _RUNG == 0:
        return 0  # PA (d): below three of a kind nothing ranks; all such hands equal
    return best


# Five-card fast path (five cards ranked as a five-card hand, no joker). It is not a
# second copy of the rules: _fast5() fills its tables from _eval() above, one hand per
# class, and declines (None: _eval() then ranks every hand) unless the profile fits it.
# With b = 1 << rank per card, m = OR, s = SUM, x = XOR of the five b:
#   s == m    five different ranks: the score is m (high card), or a flush, or one of a
#             few exceptions (the straights) found in a small table;
#   otherwise d = s - m (the extra cards of each rank, spread by carries) and
#             e = m ^ x (the ranks held an even number of times) name the hand's class
#             (which ranks are paired, tripled...) whatever the kickers, and
#             score = T[(d + 54 e) % 1057] ^ m: the kickers are the tie-break's low mask,
#             m without the ranked part. (d + 54 e) % 1057 is a perfect hash of the 273
#             classes (found by search; _fast5() checks it), so T is a plain tuple: no
#             dict probing, 4 KB. (T follows _RB in one tuple: see _fast5.)
# tests/test_fastpath.py checks every class of every profile against _eval().
_RB = tuple(1 << (i >> 2) for i in range(52)) + (0x2000,)  # rank bit; joker: bit 13
_DISTINCT_MAX = const(32)  # straights and the like: more exceptions than this -> decline
_HC = const(54)  # class hash: (d + _HC * e) % _HP
_HP = const(1057)


def _fast5(p):
    """(class table, distinct-rank exceptions, flush exceptions, flush base) for p, all
    from _eval(); None if p does not fit (not five from five, or its scores are not of
    the form above)."""
    if p.size != 5 or p.hand != 5:
        return None
    tab = [0] * _HP
    used = bytearray(_HP)
    ex, fl, bases = {}, {}, {}
    hand = bytearray(5)
    cnt = bytearray(13)
    # Every rank multiset of five cards, at most four of a rank: r0 <= r1 <= ... <= r4.
    for r0 in range(13):
        for r1 in range(r0, 13):
            for r2 in range(r1, 13):
                for r3 in range(r2, 13):
                    for r4 in range(r3, 13):
                        if r0 == r4:
                            continue
                        m = s = x = 0
                        i = 0
                        for r in (r0, r1, r2, r3, r4):
                            b = 1 << r
                            m |= b
                            s += b
                            x ^= b
                            hand[i] = r * 4 + cnt[r]  # suits by occurrence: no flush
                            cnt[r] += 1
                            i += 1
                        for r in (r0, r1, r2, r3, r4):
                            cnt[r] = 0
                        if s == m:
                            hand[0] |= 1  # five ranks, suits 1 0 0 0 0: no flush
                            v = _eval(p, hand, 5)
                            if v != m:
                                ex[m] = v
                            for i in range(5):
                                hand[i] &= ~3  # all spades: the flush
                            v = _eval(p, hand, 5)
                            fl[m] = v
                            b = v & ~_ALL
                            bases[b] = bases.get(b, 0) + 1
                            continue
                        k = (s - m + _HC * (m ^ x)) % _HP
                        if used[k]:
                            continue  # one hand per class: tests/test_fastpath.py
                            # ranks every class both ways (a first use costs less)
                        v = _eval(p, hand, 5) ^ m
                        if v & _ALL & ~m:
                            return None  # the kickers are not m without the ranked part
                        used[k] = 1
                        tab[k] = v
    fb = 0
    for b in bases:  # the flush: the base most flushes share
        if bases[b] > bases.get(fb, 0):
            fb = b
    fl = {m: v for m, v in fl.items() if v != m | fb}
    if len(fl) > _DISTINCT_MAX or len(ex) > _DISTINCT_MAX:
        return None
    # the exceptions in a tuple of 1 + 2q: (q, masks by m % q..., their scores...)
    q = max(1, len(ex))
    while len({m % q for m in ex}) < len(ex):
        q += 1
    sx = [q] + [-1] * q + [0] * q
    for m, v in ex.items():
        sx[1 + m % q] = m
        sx[1 + q + m % q] = v
    # one tuple: the rank bit of each card id (_RB: a local in score(), not a module
    # global, whose lookup costs), then the class table
    return _RB + tuple(tab), tuple(sx), fl, fb


def score(p, cards):
    """Score of a hand already checked: the hot path (no validation, no allocation)."""
    t = p._fast
    if t and len(cards) == 5:
        a, b, c, d, e = cards  # one opcode for a list or tuple (no allocation for any)
        ra = t[a]  # t[:53] is _RB
        rb = t[b]
        rc = t[c]
        rd = t[d]
        re = t[e]
        m = ra | rb | rc | rd | re
        s = ra + rb + rc + rd + re - m
        if not s:  # five ranks
            if m > _ALL:  # the joker
                return _rest(p, cards)
            if a & 3 == b & 3 == c & 3 == d & 3 == e & 3:
                return p._flush.get(m, m | p._fbase)
            x = p._ex
            s = m % x[0] + 1
            if x[s] == m:
                return x[s + x[0]]
            return m
        if m > _ALL:
            return _rest(p, cards)
        return t[(s + _HC * (m ^ ra ^ rb ^ rc ^ rd ^ re)) % _HP + 53] ^ m
    if t is not None and not t:  # first hand of this five-card game: build its tables
        _build(p)
        return score(p, cards)
    return _rest(p, cards)


def _rest(p, cards):
    """Every hand the fast path does not take (on CPython: through hostcache)."""
    return _eval(p, cards, len(cards))


_built = []


def _build(p):
    """Fill p's fast-path tables (shared with a game that ranks alike), or set
    `_fast = None` if p does not fit; built on first use, so a table holds only the
    tables of the games it plays."""
    f = _fast5(p)
    if f is None:
        setattr(p, "_fast", None)
        return
    for g in _built:
        if g == f:
            f = g
            break
    else:
        _built.append(f)
    setattr(p, "_ex", f[1])
    setattr(p, "_flush", f[2])
    setattr(p, "_fbase", f[3])
    setattr(p, "_fast", f[0])


def _pending():
    import pitboss.profiles as pr
    setattr(pr.Profile, "_fast", None)  # any other profile: no fast path
    for gid in pr.GAMES:
        p = get(gid)
        if p.size == 5 and p.hand == 5:
            setattr(p, "_fast", ())  # empty: built by the first score() of the game


_pending()

_score_bc = score  # the board's score(), bytecode (tests call it on CPython too)

if sys.implementation.name != "micropython":
    # CPython (host tools): scores are remembered, keyed by rank multiset (and the flush
    # suit's ranks where they matter), five-card ones in tables filled on a game's first
    # use. pitboss/hostcache.py; every value comes from _eval. Never on a board.
    from pitboss import hostcache

    _rest = hostcache.install(sys.modules[__name__])  # noqa: F811
    score = hostcache.make_score(score, _rest)  # noqa: F811


def score_core(p, cards):
    """The core alone (no fast path, no host cache): what a census or a lab uses to rank
    every hand through the rules themselves. Same scores as score()."""
    return _eval(p, cards, len(cards))


def check(p, cards, more=False):
    """Raise CardError naming what is wrong; `more`: a superset to pick the best from."""
    seen = _seen
    jokers = 0
    try:
        for c in cards:
            if type(c) is not int or not 0 <= c <= JOKER:
                raise CardError("unknown_card", "unknown card id %r" % (c,))
            if c == JOKER:
                if not p.joker:
                    raise CardError("joker_not_allowed", "%s is played without a joker"
                                    % p.id)
                jokers += 1
                if jokers > 1:
                    raise CardError("two_jokers", "two jokers in one hand (the %s deck "
                                    "has one)" % p.id)
            elif seen[c]:
                raise CardError("duplicate_card", "duplicate card %s" % name(c))
            seen[c] = 1
    finally:
        for c in cards:
            if type(c) is int and 0 <= c <= JOKER:
                seen[c] = 0
    n = len(cards)
    if more:
        if n < p.size:
            raise CardError("wrong_count", "%s needs at least %d cards, got %d"
                            % (p.id, p.size, n))
    elif n != p.size:
        raise CardError("wrong_count", "%s takes %d cards, got %d" % (p.id, p.size, n))


def rank(p, cards):
    check(p, cards)
    return score(p, cards)


def category(p, s):
    return p.category(s)


def _bits_down(m):
    """Ranks of mask m, highest first."""
    return [r for r in range(12, -1, -1) if m >> r & 1]


def played(p, cards):
    """The hand as played, best card first: ['Ah', 'Kh', 'Jk=Qh', ...].

    Not on the hot path: it re-reads the score to pick the cards that make it. The joker
    is written Jk=<card> where it completes a flush, Jk=<rank> where it completes a
    straight (any suit) and Jk=A where it plays as an ace."""
    s = _rest(p, cards)
    kind = p.kind_of(s)
    tb = s & _TB
    pool = sorted((c for c in cards if c != JOKER), reverse=True)
    jk = len(pool) < len(cards)
    out = []

    def take(r, suit=-1):
        for c in pool:
            if c >> 2 == r and (suit < 0 or c & 3 == suit):
                pool.remove(c)
                out.append(name(c))
                return
        out.append("Jk=" + RANKS[r] + (SUITS[suit] if suit >= 0 else ""))

    def window_ranks(v):
        if any(v == w for w in p.windows):  # (MicroPython arrays have no `in`)
            return _bits_down(v)
        w = _bits_down(p.wheel)  # the ace plays low: 5-4-3-2-A
        return w[1:] + w[:1]

    def suit_holding(ranks):
        for st in range(4):
            missing = [r for r in ranks if not any(c >> 2 == r and c & 3 == st for c in pool)]
            if len(missing) <= (1 if jk else 0):
                return st
        return -1

    if kind in (SIX_ROYAL, ROYAL, SF, FLUSH):
        if kind == SIX_ROYAL:
            ranks = _bits_down(_SIX_ROYAL)
        elif kind == ROYAL:
            ranks = _bits_down(p.top_window)
        elif kind == SF:
            ranks = window_ranks(tb)
        else:
            ranks = _bits_down(tb)
        st = suit_holding(ranks)
        for r in ranks:
            take(r, st)
    elif kind == STRAIGHT:
        for r in window_ranks(tb):
            take(r)
    elif kind == FIVE_ACES:
        for _ in range(5):
            take(12)
    elif kind == NO_QUALIFY:
        out = [name(c) for c in pool] + (["Jk"] if jk else [])
    else:
        upper, lower = tb >> 13, tb & _ALL
        if kind == HIGH:
            upper, lower = lower, 0
        times = {QUADS: 4, FULL: 3, TRIPS: 3, TWO_PAIR: 2, PAIR: 2, HIGH: 1}[kind]
        for r in _bits_down(upper):
            for _ in range(times):
                take(r)
        for r in _bits_down(lower):
            for _ in range(2 if kind == FULL else 1):
                take(r)
    return out


def best(p, cards):
    """Best hand of the game's size from more cards: (score, hand as played)."""
    check(p, cards, more=True)
    return _rest(p, cards), played(p, cards)
