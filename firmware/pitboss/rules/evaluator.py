# The one hand evaluator: every game is a Profile (pitboss.rules.profiles), never a code path.
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
# score() allocates nothing (tested under micropython.heap_lock() and by counting
# gc.mem_alloc() with the collector off): masks are small ints, the suit masks live in
# one preallocated array. Nothing is built at import.
import sys
from array import array

from pitboss.compat import const
from pitboss.rules.asplayed import as_played
from pitboss.rules.cards import CardError, JOKER, name
from pitboss.rules.profiles import (
    HIGH, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL, QUADS, SF, ROYAL, FIVE_ACES,
    SIX_ROYAL, get,  # noqa: F401  (get: re-exported for callers)
)

_ACE = const(0x1000)
_JK = const(52)  # cards.JOKER (a const here: read on every card check() sees)
_ALL = const(0x1FFF)
_SIX_ROYAL = const(0x1F80)  # A K Q J 10 9: PA (d)(1)
_RUNG = const(26)

_sm = array("H", (0, 0, 0, 0))


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
# second copy of the rules: its tables are _eval()'s own output, one hand per class,
# computed at build time by host_tools/fast/gentables.py and shipped as one `bytes` constant
# per distinct table in pitboss/rules/tables/t5_<hash>.py, named by the profile (p.t5; games whose
# rules give the same table share it; tests/host/test_tables.py rebuilds them from _eval and
# compares). A board loads only the tables of the games it ranks, on first use: one
# memcpy into an array, no ranking at boot.
# With b = 1 << rank per card, m = OR, s = SUM, x = XOR of the five b:
#   s == m    five different ranks: the score is m (high card), or a flush, or one of a
#             few exceptions (the straights) found in a small table;
#   otherwise d = s - m (the extra cards of each rank, spread by carries) and
#             e = m ^ x (the ranks held an even number of times) name the hand's class
#             (which ranks are paired, tripled...) whatever the kickers, and
#             score = T[(d + 54 e) % 1057] ^ m: the kickers are the tie-break's low mask,
#             m without the ranked part. (d + 54 e) % 1057 is a perfect hash of the 273
#             classes (found by search; the generator checks it).
# The table is one array("I") (little-endian uint32 in the bytes constant):
#   [0, 53)            rank bit of each card id (joker: bit 13, so m > _ALL flags it)
#   [_T, _T + 1057)    the class table T
#   _FB                the flush base: a flush scores m | base, unless an exception
#   _QX, then qx masks, then qx scores       distinct-rank exceptions (by m % qx)
#   qf (after those), qf masks, qf scores    flush exceptions (by m % qf)
# pitboss/rules/native5.py reads the same array from native code where the port has an
# emitter; tests/host/test_fastpath.py checks every class of every profile against _eval().
_HC = const(54)  # class hash: (d + _HC * e) % _HP
_HP = const(1057)
_T = const(53)
_FB = const(1110)  # _T + _HP
_QX = const(1111)
_NONE = array("I")  # p.fast for a profile without a fast path (falsy)
# Two-card table (Pai Gow's low hand, PR B.10; pitboss/rules/tables/t2_<hash>.py, Profile.t2): the
# score of two cards is T2[(a >> 2) * 14 + (b >> 2)] (the joker, id 52, is rank 13),
# each entry _eval()'s own score of two cards of those ranks (gentables.two_table).
_T2N = const(196)


def _load(p):
    """p's fast-path table (an array, empty if p has none), loaded on first use from
    its generated module, which is then dropped: the heap keeps only the array."""
    t = _NONE
    mod = p.t5 or p.t2
    if mod:
        from pitboss.rules.profiles import made
        for q in made():  # a game sharing this table loaded it already: share it
            if (q.t5 == mod or q.t2 == mod) and q.fast:
                p.fast = q.fast
                return q.fast
        full = "pitboss.rules.tables." + mod
        raw = _import_table(full)
        if raw is not None:
            t = _array_or_none(raw)
        sys.modules.pop(full, None)
        from pitboss.rules import tables
        if hasattr(tables, mod):
            delattr(tables, mod)
    p.fast = t
    return t


def _import_table(full):
    """The generated module's table (bytes), or None: not generated for this profile, or
    no block for it in the heap even after a collection (_eval() then ranks every hand,
    same results). On the stock image the module's .mpy is loaded into the heap, and its
    4,757-byte table found no block after a replay (emulated Pico, 2026-12-05)."""
    for attempt in (0, 1):
        try:
            return __import__(full, None, None, ("T",)).T
        except ImportError:
            return None
        except MemoryError:
            sys.modules.pop(full, None)
            if attempt:
                return None
            import gc

            gc.collect()
    return None


def _array_or_none(raw):
    """The table as an array, or _NONE (_eval() then ranks every hand, same results) if
    the heap has no block for its copy even after a collection: the stock image's boot
    after a six-seat Pai Gow round failed so, the replay's copy needing 4,756 B in one
    block of a fragmented heap (emulated Pico, 2026-12-04)."""
    try:
        return _array_from(raw)
    except MemoryError:
        import gc

        gc.collect()
        try:
            return _array_from(raw)
        except MemoryError:
            return _NONE


def _array_from(raw):
    try:
        return array("I", raw)  # MicroPython: a copy of the raw bytes
    except TypeError:  # CPython builds arrays from bytes with frombytes()
        a = array("I")
        a.frombytes(raw)
        if sys.byteorder != "little":
            a.byteswap()
        return a


def score(p, cards):
    """Score of a hand already checked: the hot path (no validation, no allocation)."""
    t = p.fast  # (this bytecode version stays reachable as _score_bc)
    if t and len(cards) == 5:
        a, b, c, d, e = cards  # one opcode for a list, tuple or bytes (no allocation)
        ra = t[a]
        rb = t[b]
        rc = t[c]
        rd = t[d]
        re = t[e]
        m = ra | rb | rc | rd | re
        s = ra + rb + rc + rd + re - m
        if m > _ALL:  # the joker
            return _eval(p, cards, 5)
        if s:
            return t[(s + _HC * (m ^ ra ^ rb ^ rc ^ rd ^ re)) % _HP + _T] ^ m
        if a & 3 == b & 3 == c & 3 == d & 3 == e & 3:  # a flush
            i = _QX + 1 + 2 * t[_QX]
            q = t[i]
            s = i + 1 + m % q
            if t[s] == m:
                return t[s + q]
            return m | t[_FB]
        q = t[_QX]
        s = _QX + 1 + m % q
        if t[s] == m:
            return t[s + q]
        return m
    return _slow(p, cards)


def _slow(p, cards):
    """Every hand the fast path does not take (also native5's way out)."""
    t = p.fast
    if t is None:  # first hand of this game: load its table
        _load(p)
        return _board_score(p, cards)
    if len(cards) == 2 and len(t) == _T2N:  # the two-card table (native5 reads it too)
        return t[(cards[0] >> 2) * 14 + (cards[1] >> 2)]
    return _eval(p, cards, len(cards))


def _native():
    """pitboss/native5 (@micropython.viper) where it was flashed: only on a port with a
    native emitter (pitboss flash builds it for the board's arch); the WebAssembly board
    and CPython keep the bytecode score() above."""
    if sys.implementation.name != "micropython":
        return None
    try:
        from pitboss.rules import native5
    except (ImportError, SyntaxError):  # not flashed / no native emitter on this port
        return None
    native5.init(_slow)
    return native5


_score_bc = score
_n5 = _native()
if _n5:
    score = _n5.score  # noqa: F811  (the same tables, read by native code)
    score_frame = _n5.score_frame
else:
    _fr = bytearray(5)

    def score_frame(p, buf, off):
        """score() of the five card ids buf[off:off + 5] (a shoe frame, a bytes of
        hands): copied into one preallocated buffer, not sliced (no allocation)."""
        f = _fr
        f[0] = buf[off]
        f[1] = buf[off + 1]
        f[2] = buf[off + 2]
        f[3] = buf[off + 3]
        f[4] = buf[off + 4]
        return score(p, f)
_board_score = score  # the board's score() (tests run it on CPython too)


def use(fast=None, fast_best=None):
    """Install a faster score() and best() (the host's tables: host_tools/fast/hostfast.py)
    or, with None, the board's own. Called explicitly by the host side, never at import;
    every function here (rank, played) and every caller of evaluator.score() follows."""
    global score, best
    score = fast or _board_score
    best = fast_best or _board_best


def score_core(p, cards):
    """The core alone (no fast path, no host tables): what a census or a lab uses to rank
    every hand through the rules themselves. Same scores as score()."""
    return _eval(p, cards, len(cards))


def check(p, cards, more=False):
    """Raise CardError naming what is wrong; `more`: a superset to pick the best from."""
    if _n5 is None or not _n5.valid(cards, p.joker):  # native: the good hands, fast
        _check_cards(p, cards)
    n = len(cards)
    if more:
        if n < p.size:
            raise CardError("wrong_count", "%s needs at least %d cards, got %d"
                            % (p.id, p.size, n))
    elif n != p.size:
        raise CardError("wrong_count", "%s takes %d cards, got %d" % (p.id, p.size, n))


def _check_cards(p, cards):
    """Raise CardError for the first card that is not a card id, a joker the game has
    not, a second joker or a duplicate."""
    # Cards seen so far as two bit masks (ids 0-25, 26-52: small ints everywhere), so
    # nothing is left to clean up whatever is raised. Checked in this order per card:
    # an unknown id, the joker (allowed? one only), a duplicate.
    lo = hi = 0
    jokers = 0
    for c in cards:
        if type(c) is not int or not 0 <= c <= _JK:
            raise CardError("unknown_card", "unknown card id %r" % (c,))
        if c == _JK:
            if not p.joker:
                raise CardError("joker_not_allowed", "%s is played without a joker"
                                % p.id)
            jokers += 1
            if jokers > 1:
                raise CardError("two_jokers", "two jokers in one hand (the %s deck "
                                "has one)" % p.id)
        elif c < 26:
            b = 1 << c
            if lo & b:
                raise CardError("duplicate_card", "duplicate card %s" % name(c))
            lo |= b
        else:
            b = 1 << (c - 26)
            if hi & b:
                raise CardError("duplicate_card", "duplicate card %s" % name(c))
            hi |= b


def rank(p, cards):
    check(p, cards)
    return score(p, cards)


def category(p, s):
    return p.category(s)


def played(p, cards, s=None):
    """The hand as played, best card first: ['Ah', 'Kh', 'Jk=Qh', ...], from the score (s,
    or score() of the cards): pitboss.rules.asplayed, which a settlement calls directly
    with the scores it has."""
    if s is None:
        s = score(p, cards)
    return as_played(p, cards, s)


def best(p, cards):
    """Best hand of the game's size from more cards: (score, hand as played)."""
    check(p, cards, more=True)
    if p.t2 and len(cards) != p.size:
        # score()'s fast paths read a five-card table for five or seven cards (native5
        # unchecked); the two-card game's table is the low-hand one: the core ranks it.
        s = _eval(p, cards, len(cards))
    else:
        s = score(p, cards)
    return s, played(p, cards, s)


_board_best = best
