# pyright: reportUndefinedVariable=false, reportOptionalCall=false
# (ptr8/ptr32 are viper's compiler built-ins; _slow is set by init() before any call)
#
# The five-card fast path of pitboss.evaluator.score() in native code, for ports with a
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
    if t and int(len(cards)) == 5:
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
