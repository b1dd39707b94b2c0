# pyright: reportUndefinedVariable=false, reportOptionalCall=false
# (ptr8/ptr32 are viper's compiler built-ins; _slow is set by init() before any call)
#
# The five-card fast path of pitboss.rules.evaluator.score() in native code, for ports with a
# native emitter (the Pico's armv6m, the ESP32's xtensawin). Same tables, same
# arithmetic (the table layout is described in evaluator.py); every hand it does not
# take (not five cards, the joker, the game's table not yet loaded) goes back to the
# evaluator's bytecode (`_slow`). Never imported where `@micropython.viper` is a
# SyntaxError: `pitboss flash` builds this file only for a board with a native arch,
# and evaluator._native() imports it only if it is there.
#
# Viper: ints are machine words, the table is read through ptr32 (an array in the heap:
# word-aligned), the hand through ptr8 when it is a bytes frame. No Python frame is made
# and nothing is allocated (tests/mp/native_check.py counts gc.mem_alloc()).
import micropython

_slow = None


def init(slow):
    """evaluator._slow: what the native path hands back to (set once, at import)."""
    global _slow
    _slow = slow


_hand = bytearray(5)  # score_frame's way out: the five cards copied here, no slice


# The two entry points repeat the same arithmetic: a viper-to-viper call would cost
# a whole Python call (its arguments boxed), the very overhead this module removes.
@micropython.viper
def score(p, cards) -> int:
    """evaluator.score(p, cards) for a list or tuple (or bytes) of card ids."""
    t = p.fast
    n = int(len(cards))
    if t and n == 2 and int(len(t)) == 196:  # evaluator._T2N: the two-card table
        y0, y1 = cards
        return int(ptr32(t)[(int(y0) >> 2) * 14 + (int(y1) >> 2)])
    if t and n == 7:  # best five of seven: the 21 five-card subsets, natively
        v = int(seven(t, cards, None, None))
        if v >= 0:
            return v
    if t and n == 5:
        x0, x1, x2, x3, x4 = cards  # one unpack: cheaper than five subscripts
        a = int(x0)
        b = int(x1)
        c = int(x2)
        d = int(x3)
        e = int(x4)
        ra = 1 << (a >> 2)  # the joker (52) gets bit 13: m > 0x1FFF flags it
        rb = 1 << (b >> 2)
        rc = 1 << (c >> 2)
        rd = 1 << (d >> 2)
        re = 1 << (e >> 2)
        m = ra | rb | rc | rd | re
        if m > 0x1FFF:  # the joker (one: checked hands), the other four packed
            v = int(joker(t, _pack4(a, b, c, d, e)))
            if v >= 0:
                return v
        if m <= 0x1FFF:
            tp = ptr32(t)
            s = ra + rb + rc + rd + re - m
            if s:
                return int(tp[(s + 54 * (m ^ ra ^ rb ^ rc ^ rd ^ re)) % 1057 + 53]) ^ m
            i = 1111  # evaluator._QX: the distinct-rank exceptions
            a &= 3
            if a == (b & 3) and a == (c & 3) and a == (d & 3) and a == (e & 3):
                i = 1112 + 2 * int(tp[1111])  # the flush exceptions
                q = int(tp[i])
                s = i + 1 + m % q
                if int(tp[s]) == m:
                    return int(tp[s + q])
                return m | int(tp[1110])  # evaluator._FB
            q = int(tp[i])
            s = i + 1 + m % q
            if int(tp[s]) == m:
                return int(tp[s + q])
            return m
    return int(_slow(p, cards))


@micropython.viper
def score_frame(p, buf, off: int) -> int:
    """score() of the five card ids at buf[off:off + 5] (a shoe frame, a bytes of
    hands), read in place through ptr8: no slice, no boxing."""
    t = p.fast
    if t:
        h = ptr8(buf)
        a = h[off]
        b = h[off + 1]
        c = h[off + 2]
        d = h[off + 3]
        e = h[off + 4]
        ra = 1 << (a >> 2)  # the joker (52) gets bit 13: m > 0x1FFF flags it
        rb = 1 << (b >> 2)
        rc = 1 << (c >> 2)
        rd = 1 << (d >> 2)
        re = 1 << (e >> 2)
        m = ra | rb | rc | rd | re
        if m > 0x1FFF:  # the joker (one: checked hands), the other four packed
            v = int(joker(t, _pack4(a, b, c, d, e)))
            if v >= 0:
                return v
        if m <= 0x1FFF:
            tp = ptr32(t)
            s = ra + rb + rc + rd + re - m
            if s:
                return int(tp[(s + 54 * (m ^ ra ^ rb ^ rc ^ rd ^ re)) % 1057 + 53]) ^ m
            i = 1111  # evaluator._QX: the distinct-rank exceptions
            a &= 3
            if a == (b & 3) and a == (c & 3) and a == (d & 3) and a == (e & 3):
                i = 1112 + 2 * int(tp[1111])  # the flush exceptions
                q = int(tp[i])
                s = i + 1 + m % q
                if int(tp[s]) == m:
                    return int(tp[s + q])
                return m | int(tp[1110])  # evaluator._FB
            q = int(tp[i])
            s = i + 1 + m % q
            if int(tp[s]) == m:
                return int(tp[s + q])
            return m
    else:
        h = ptr8(buf)
    o = ptr8(_hand)
    o[0] = h[off]
    o[1] = h[off + 1]
    o[2] = h[off + 2]
    o[3] = h[off + 3]
    o[4] = h[off + 4]
    return int(_slow(p, _hand))


_c7 = bytearray(7)  # seven()'s copy of the seven card ids
_INT = int  # (in viper code `int` is the cast, not the type)
_ZERO = 0  # (objects: viper compares an object only with an object)
_JOKER = 52


@micropython.viper
def seven(t, cards, out, t2) -> int:
    """The best five-card score of seven cards (the joker among them: -1, the caller
    hands them to the core): each of the 21 five-card subsets scored by the five-card
    arithmetic above from its rank bits, the best kept in a register. With `out` (an
    array("I") of 42) and t2 (the two-card table, evaluator._T2N): setting k of
    paigow_rules.SPLITS (cards i, j left out: the low hand) gets its five-card score in
    out[k] and the score of cards i, j from t2 in out[21 + k] (Pai Gow's house way)."""
    x0, x1, x2, x3, x4, x5, x6 = cards
    c = ptr8(_c7)
    c[0] = int(x0)
    c[1] = int(x1)
    c[2] = int(x2)
    c[3] = int(x3)
    c[4] = int(x4)
    c[5] = int(x5)
    c[6] = int(x6)
    tp = ptr32(t)
    m1 = 0  # ranks held at least once, twice, thrice
    m2 = 0
    m3 = 0
    S = 0  # sum and xor of the seven rank bits
    X = 0
    n0 = 0  # cards per suit
    n1 = 0
    n2 = 0
    n3 = 0
    k = 0
    while k < 7:
        v = c[k]
        if v >= 52:
            return -1  # the joker: the core ranks it
        b = 1 << (v >> 2)
        if m1 & b:
            if m2 & b:
                m3 |= b
            else:
                m2 |= b
        else:
            m1 |= b
        S += b
        X ^= b
        u = v & 3
        if u == 0:
            n0 += 1
        elif u == 1:
            n1 += 1
        elif u == 2:
            n2 += 1
        else:
            n3 += 1
        k += 1
    fs = -1  # the suit a five-card subset can flush in (at most one of seven cards)
    fn = 0
    if n0 >= 5:
        fs = 0
        fn = n0
    elif n1 >= 5:
        fs = 1
        fn = n1
    elif n2 >= 5:
        fs = 2
        fn = n2
    elif n3 >= 5:
        fs = 3
        fn = n3
    qx = int(tp[1111])  # evaluator._QX: the distinct-rank exceptions
    qf_at = 1112 + 2 * qx  # the flush exceptions
    qf = int(tp[qf_at])
    fb = int(tp[1110])  # evaluator._FB
    store = 0
    if out:
        store = 1
        hp = ptr32(out)
        lp = ptr32(t2)
    best = 0
    kk = 0
    i = 0
    while i < 6:
        ci = c[i]
        bi = 1 << (ci >> 2)
        j = i + 1
        while j < 7:
            cj = c[j]
            bj = 1 << (cj >> 2)
            m = m1  # the five's ranks: a rank goes if all its cards are i and j
            if not bi & m2:
                m ^= bi
            if not bj & m2:
                m ^= bj
            if bi == bj and not bi & m3:
                m ^= bi
            s = S - bi - bj - m
            if s:
                v = int(tp[(s + 54 * (m ^ X ^ bi ^ bj)) % 1057 + 53]) ^ m
            else:
                f = fn
                if fs >= 0:
                    if (ci & 3) == fs:
                        f -= 1
                    if (cj & 3) == fs:
                        f -= 1
                if fs >= 0 and f == 5:
                    z = qf_at + 1 + m % qf
                    if int(tp[z]) == m:
                        v = int(tp[z + qf])
                    else:
                        v = m | fb
                else:
                    z = 1112 + m % qx
                    if int(tp[z]) == m:
                        v = int(tp[z + qx])
                    else:
                        v = m
            if v > best:
                best = v
            if store:
                hp[kk] = v
                hp[kk + 21] = lp[(ci >> 2) * 14 + (cj >> 2)]
            kk += 1
            j += 1
        i += 1
    return best


@micropython.viper
def _pack4(a: int, b: int, c: int, d: int, e: int) -> int:
    """The four card ids of a five-card hand that are not the joker (52), one per byte."""
    r = 0
    n = 0
    if a != 52:
        r |= a << n
        n += 8
    if b != 52:
        r |= b << n
        n += 8
    if c != 52:
        r |= c << n
        n += 8
    if d != 52:
        r |= d << n
        n += 8
    if e != 52:
        r |= e << n
        n += 8
    if n != 32:
        return -1  # not exactly one joker: never from a checked hand
    return r


@micropython.viper
def joker(t, four: int) -> int:
    """Score of four cards (ids packed one per byte by _pack4) and the joker, from the
    five-card table: the best of the hands the joker makes as an ace (PR A: it pairs
    only aces) or as the card of any rank the four lack, in the suit of the first
    (completing a straight, a flush or a straight flush: PR C; a flush's joker is then
    the highest card the suit lacks, as the core plays it). Any other card the joker
    could stand for would pair a rank, which only the ace may. -1 for four aces (five
    aces, PR B.1: the core's, as is every hand -1 returns for)."""
    if four < 0:
        return -1
    tp = ptr32(t)
    a = four & 0xFF
    b = (four >> 8) & 0xFF
    c = (four >> 16) & 0xFF
    d = (four >> 24) & 0xFF
    ra = 1 << (a >> 2)
    rb = 1 << (b >> 2)
    rc = 1 << (c >> 2)
    rd = 1 << (d >> 2)
    m4 = ra | rb | rc | rd
    S4 = ra + rb + rc + rd
    X4 = ra ^ rb ^ rc ^ rd
    if S4 == 4 * 0x1000:
        return -1
    u = a & 3
    suited = 0
    if u == (b & 3) and u == (c & 3) and u == (d & 3):
        suited = 1
    qx = int(tp[1111])
    qf_at = 1112 + 2 * qx
    qf = int(tp[qf_at])
    fb = int(tp[1110])
    best = 0
    r = 0
    while r < 13:
        bb = 1 << r
        r += 1
        if m4 & bb and bb != 0x1000:
            continue
        m = m4 | bb
        s = S4 + bb - m
        if s:
            v = int(tp[(s + 54 * (m ^ X4 ^ bb)) % 1057 + 53]) ^ m
        elif suited:
            z = qf_at + 1 + m % qf
            if int(tp[z]) == m:
                v = int(tp[z + qf])
            else:
                v = m | fb
        else:
            z = 1112 + m % qx
            if int(tp[z]) == m:
                v = int(tp[z + qx])
            else:
                v = m
        if v > best:
            best = v
    return best


@micropython.viper
def valid(cards, joker: int) -> int:
    """1 if every card is a card id (a small int 0..52), none twice and at most one
    joker, the joker only where the game has one (`joker`); else 0, and
    evaluator.check() walks the cards again in bytecode to name the culprit. Only what
    that walk accepts gets 1 (a bool, a large int or anything else: 0)."""
    lo = 0  # ids 0-29 seen, as bits (machine words: no boxing)
    hi = 0  # ids 30-52
    for x in cards:
        if type(x) is not _INT:
            return 0
        if x < _ZERO or x > _JOKER:  # as objects: a large int is never truncated here
            return 0
        v = int(x)
        if v == 52 and not joker:
            return 0
        if v < 30:
            b = 1 << v
            if lo & b:
                return 0
            lo |= b
        else:
            b = 1 << (v - 30)
            if hi & b:
                return 0
            hi |= b
    return 1


@micropython.viper
def ranks7(cards, rk, cnt, by) -> int:
    """Pai Gow's rank counts (paigow_way._groups) of seven checked cards, the joker an ace
    (PR A): rk[i] the rank of card i, cnt[r] how many of rank r (a bytearray of 13,
    cleared here), and each rank held appended to by[its count], highest first."""
    r = ptr8(rk)
    n = ptr8(cnt)
    k = 0
    while k < 13:
        n[k] = 0
        k += 1
    x0, x1, x2, x3, x4, x5, x6 = cards
    r[0] = int(x0) >> 2
    r[1] = int(x1) >> 2
    r[2] = int(x2) >> 2
    r[3] = int(x3) >> 2
    r[4] = int(x4) >> 2
    r[5] = int(x5) >> 2
    r[6] = int(x6) >> 2
    k = 0
    while k < 7:
        if r[k] == 13:  # the joker (52 >> 2): an ace
            r[k] = 12
        n[r[k]] += 1
        k += 1
    k = 12
    while k >= 0:
        c = int(n[k])
        if c:
            by[c].append(k)
        k -= 1
    return 7


@micropython.viper
def front(rk, a: int, b: int, w) -> int:
    """paigow_way._front() over settings seven() ranked into w: the setting (index k of
    paigow_rules.SPLITS) whose low hand's ranks (rk: the seven cards' ranks) are a and b,
    with the best high score w[k], then the best low score w[21 + k], the first in
    SPLITS order on a tie; -1 if none."""
    r = ptr8(rk)
    s = ptr32(w)
    best = -1
    bh = 0
    bl = 0
    k = 0
    i = 0
    while i < 6:
        ri = int(r[i])
        if ri != a and ri != b:
            k += 6 - i
            i += 1
            continue
        want = a
        if ri == a:
            want = b
        j = i + 1
        while j < 7:
            if int(r[j]) == want:
                h = int(s[k])
                lo = int(s[21 + k])
                if best < 0 or uint(h) > uint(bh) or (h == bh and uint(lo) > uint(bl)):
                    best = k
                    bh = h
                    bl = lo
            k += 1
            j += 1
        i += 1
    return best
