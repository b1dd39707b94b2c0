# The hand as played: which cards make a hand's score, best first, by name (what
# results, recalls and the rank verb show). Split from pitboss.rules.evaluator, which
# scores hands and re-exports it as evaluator.played(); a settlement calls as_played()
# directly with the scores it took (issue 27: one call, one heap frame, per hand).
from pitboss.compat import const
from pitboss.rules.cards import RANKS, SUITS, name
from pitboss.rules.profiles import (
    HIGH, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL, QUADS, SF, ROYAL, FIVE_ACES,
    SIX_ROYAL, NO_QUALIFY,
)

# As in pitboss.rules.evaluator (a score's layout: rung << 26 | two 13-bit rank masks)
_ACE = const(0x1000)
_JK = const(52)  # cards.JOKER
_ALL = const(0x1FFF)
_SIX_ROYAL = const(0x1F80)  # A K Q J 10 9: PA (d)(1)
_TB = const(0x3FFFFFF)


def as_played(p, cards, s, ids=(), names=None):
    """The hand as played, best card first: ['Ah', 'Kh', 'Jk=Qh', ...]. Where the caller
    has the cards' names already (names[i] the name of ids[i], ids holding every card of
    `cards`), the list holds those strings rather than new ones.

    It reads the score s (evaluator.score() of the cards) to pick the cards that make it. The
    joker is written Jk=<card> where it completes a flush, Jk=<rank> where it completes
    a straight (any suit) and Jk=A where it plays as an ace.

    One function, no helpers, lists or closures: a six-seat Pai Gow settlement calls it
    14 times, and on a Pico every call of a function whose frame is over 44 bytes
    allocates that frame on the heap (MicroPython's VM_MAX_STATE_ON_STACK), which counts
    toward the collector's threshold like any garbage (issue 27)."""
    kind = p.kind_of(s)
    tb = s & _TB
    jk = 0
    for c in cards:
        if c == _JK:
            jk = 1
    out = []
    used = 0  # bit i: cards[i] is played (the joker is never marked)
    if kind == NO_QUALIFY:
        # every card, highest id first (ids sort by rank, then suit), then the joker
        while True:
            bi = -1
            b = -1
            i = 0
            for c in cards:
                if c != _JK and c > b and not used >> i & 1:
                    b = c
                    bi = i
                i += 1
            if bi < 0:
                break
            out.append(name(b) if names is None else names[ids.index(b)])
            used |= 1 << bi
        if jk:
            out.append("Jk")
        return out
    # What is played, as up to two passes over rank masks, highest rank first: pass 1
    # takes t1 cards of each rank of m1 (in suit st where st >= 0; top_last: the top rank
    # of m1 last, the ace of a wheel playing low: 5-4-3-2-A), pass 2 t2 of each of m2.
    st = -1
    top_last = False
    m2 = 0
    t1 = t2 = 1
    if kind == SIX_ROYAL or kind == ROYAL or kind == SF or kind == FLUSH or \
            kind == STRAIGHT:
        if kind == SIX_ROYAL:
            m1 = _SIX_ROYAL
        elif kind == ROYAL:
            m1 = p.top_window
        elif kind == FLUSH:
            m1 = tb
        else:
            # the window's ranks; a straight that is no window is the wheel
            m1 = tb
            top_last = True
            for w in p.windows:  # (MicroPython arrays have no `in`)
                if w == tb:
                    top_last = False
            if top_last:
                m1 = p.wheel
        if kind != STRAIGHT:
            # the first suit holding every rank but at most one (the joker's)
            st = 0
            while st < 4:
                missing = 0
                r = 0
                while r < 13:
                    if m1 >> r & 1:
                        have = 0
                        for c in cards:
                            if c != _JK and c >> 2 == r and c & 3 == st:
                                have = 1
                        if not have:
                            missing += 1
                    r += 1
                if missing <= jk:
                    break
                st += 1
            if st == 4:
                st = -1
    elif kind == FIVE_ACES:
        m1 = _ACE
        t1 = 5
    else:
        m1 = tb >> 13
        m2 = tb & _ALL
        if kind == HIGH:
            m1 = m2
            m2 = 0
        if kind == QUADS:
            t1 = 4
        elif kind == FULL or kind == TRIPS:
            t1 = 3
        elif kind == TWO_PAIR or kind == PAIR:
            t1 = 2
        if kind == FULL:
            t2 = 2
    m = m1 & _ALL
    times = t1
    top = 12
    while top >= 0 and not m >> top & 1:
        top -= 1
    k = 0
    while True:
        if k < 13:
            r = 12 - k
            k += 1
            if not m >> r & 1 or (top_last and r == top):
                continue
        elif k == 13 and top_last and top >= 0:
            r = top
            k += 1
        else:
            if m2 == 0:
                break
            # the second pass
            m = m2 & _ALL
            m2 = 0
            times = t2
            top_last = False
            k = 0
            continue
        # the highest cards of rank r (of suit st in a flush; `times` is 1 there) by a
        # membership test per suit, highest suit first (ids sort by rank, then suit),
        # and the joker for any missing: a rank is in one pass only, so no card is
        # taken twice
        n = times
        sc = 3
        while n > 0:
            c = -1
            if st >= 0:
                if r * 4 + st in cards:
                    c = r * 4 + st
            else:
                while sc >= 0:
                    x = r * 4 + sc
                    sc -= 1
                    if x in cards:
                        c = x
                        break
            if c < 0:
                out.append("Jk=" + RANKS[r] + (SUITS[st] if st >= 0 else ""))
            else:
                out.append(name(c) if names is None else names[ids.index(c)])
            n -= 1
    return out
