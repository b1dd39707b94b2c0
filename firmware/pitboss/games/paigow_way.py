# Pai Gow Poker's house way (pitboss.games.paigow): how the house sets seven cards into a
# five-card high hand and a two-card low hand (the banker's hand, a seat that asks for
# it, a foul reset): the "standard house ways" of the Gold Star School of Gaming bullet
# by bullet, with the configured two-pair rule (pitboss.games.paigow's header cites the
# sources; docs/games.md lists every reading we chose).
from array import array

from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.games.paigow_rules import ACE, RULES, RUNG, low, outranks, two_pair_rule
from pitboss.rules import evaluator
from pitboss.rules.cards import JOKER, name
from pitboss.rules.profiles import STRAIGHT

# ---- the house way -------------------------------------------------------------------
#
# The rules below name the low hand's ranks; only the settings holding those ranks in
# front are ranked (usually one to four of the 21), and all 21 only when a straight or
# better can be kept behind (the "Straights, flushes..." bullet). Nothing is built per
# setting: the five and two cards are copied into two preallocated buffers, the high
# hand ranked from its bytes frame (evaluator.score_frame: native5 on the chip), the low
# hand from the two-card table (evaluator.score: one table read), and both scores kept
# in two preallocated lists, marked computed in one bitmask.

# _PICK[7k:7k + 7]: for SPLITS[k] = (i, j), the indices of the five high cards (in order),
# then i and j (tests/host/test_paigow.py derives it from SPLITS).
_PICK = (b"\x02\x03\x04\x05\x06\x00\x01\x01\x03\x04\x05\x06\x00\x02\x01\x02\x04\x05\x06\x00\x03"
         b"\x01\x02\x03\x05\x06\x00\x04\x01\x02\x03\x04\x06\x00\x05\x01\x02\x03\x04\x05\x00\x06"
         b"\x00\x03\x04\x05\x06\x01\x02\x00\x02\x04\x05\x06\x01\x03\x00\x02\x03\x05\x06\x01\x04"
         b"\x00\x02\x03\x04\x06\x01\x05\x00\x02\x03\x04\x05\x01\x06\x00\x01\x04\x05\x06\x02\x03"
         b"\x00\x01\x03\x05\x06\x02\x04\x00\x01\x03\x04\x06\x02\x05\x00\x01\x03\x04\x05\x02\x06"
         b"\x00\x01\x02\x05\x06\x03\x04\x00\x01\x02\x04\x06\x03\x05\x00\x01\x02\x04\x05\x03\x06"
         b"\x00\x01\x02\x03\x06\x04\x05\x00\x01\x02\x03\x05\x04\x06\x00\x01\x02\x03\x04\x05\x06")
_HI = bytearray(5)  # the setting being ranked: its high hand ...
_LO = bytearray(2)  # ... and its low hand
_RK = bytearray(7)  # the seven cards' ranks, the joker an ace (PR A)
# The high score of setting k at _W[k], its low score at _W[21 + k], once computed (bit
# k of _done); native5.seven() fills all 21 at once where the board has native code.
_W = array("I", [0] * 42)
_done = 0
_ALL = const(0x1FFFFF)  # _done with all 21 settings ranked
_top = 0  # with all 21 ranked in one call: the best high score among them
# _groups()' answer, reused by every house_way() call: the count of each rank, and by[n]
# the ranks held exactly n times. The lists are emptied with `del l[:]`, which keeps
# their storage (list.clear() gives it back): after the first hands a house way
# allocates only the two hands it returns (issue 13: each allocation costs more as the
# heap fragments, and a Pai Gow round sets seven hands).
_CNT = bytearray(13)
_BY = ([], [], [], [], [], [])
_KEEP = []  # _straights()' settings that keep a straight or better behind
# The subjects a house way's conditions test (houseways.py), filled per hand: [1] the four
# of a kind's rank, [2] the highest trips', [3] the highest pair's, [4] the lowest
# pair's, [5] [6] the two highest singles', [7] SF (0 no straight or better can stay
# behind, 1 it can, 2 it can with an ace in front; _UNKNOWN until a rule asks); _NONE
# where the hand has none.
_V = bytearray(8)
_NONE = const(255)
_UNKNOWN = const(254)


def _rank_way(p, cards, k):
    """Score setting k of `cards` (cached): its high score goes to _W[k], its low to
    _W[21 + k]."""
    global _done
    if _done >> k & 1:
        return
    x = _PICK
    o = k * 7
    h = _HI
    h[0] = cards[x[o]]
    h[1] = cards[x[o + 1]]
    h[2] = cards[x[o + 2]]
    h[3] = cards[x[o + 3]]
    h[4] = cards[x[o + 4]]
    lo = _LO
    lo[0] = cards[x[o + 5]]
    lo[1] = cards[x[o + 6]]
    _W[k] = evaluator.score_frame(p, h, 0)
    _W[21 + k] = evaluator.score(low(), lo)
    _done |= 1 << k


def _setting(cards, k):
    """Setting k as (high five, low two) lists of `cards`, in SPLITS order."""
    x = _PICK
    o = k * 7
    return ([cards[x[o]], cards[x[o + 1]], cards[x[o + 2]], cards[x[o + 3]], cards[x[o + 4]]],
            [cards[x[o + 5]], cards[x[o + 6]]])


def _ways(p, cards):
    """The 21 settings as (high score, low score, high cards, low cards) (tests, bench)."""
    global _done
    low()
    _done = 0
    out = []
    for k in range(21):
        _rank_way(p, cards, k)
        hi, lo = _setting(cards, k)
        out.append((_W[k], _W[21 + k], hi, lo))
    return out


def _front(p, cards, a, b):
    """Best setting (index) whose low hand holds ranks a and b (the joker counting as
    an ace), by its high hand, then its low one; the first in SPLITS order on a tie; -1
    if none. The rules name ranks; which suit (or the joker) goes where is chosen to make
    the best high hand, e.g. keeping a flush the joker can complete."""
    rk = _RK  # (all 21 ranked natively: house_way() asks native5.front instead)
    best = -1
    bh = bl = 0
    k = 0
    for i in range(6):
        ri = rk[i]
        if ri != a and ri != b:
            k += 6 - i
            continue
        want = b if ri == a else a
        for j in range(i + 1, 7):
            if rk[j] == want:
                _rank_way(p, cards, k)
                h = _W[k]
                if best < 0 or h > bh or (h == bh and _W[21 + k] > bl):
                    best, bh, bl = k, h, _W[21 + k]
            k += 1
    return best


def _groups(cards, cnt, by):
    """Rank counts into cnt with the joker as an ace (PR A), and each rank held appended
    to the (empty) by[its count], highest first; the ranks also land in _RK. Bytecode:
    where the board has native code, native5.ranks7 does the same."""
    rk = _RK
    for r in range(13):
        cnt[r] = 0
    for i in range(7):
        c = cards[i]
        r = ACE if c == JOKER else c >> 2
        rk[i] = r
        cnt[r] += 1
    for r in range(12, -1, -1):
        n = cnt[r]
        if n:
            by[n].append(r)


def house_way(p, cards, way=None):
    """Set seven cards the house way: (high, low, rule name). `way` is a checked house
    way (houseways.py: bytes; default Gold Star with the Trump Plaza two-pair rule), the
    one engine below interprets it. Refused for a bad hand."""
    evaluator.check(p, cards, more=True)
    if len(cards) != 7:
        raise Refused("wrong_count", "a Pai Gow hand is 7 cards, got %d" % len(cards))
    global _done, _top
    w = two_pair_rule() if way is None else way
    if type(cards) is not list:  # (read only here: a list is used as it is)
        cards = list(cards)
    lp = low()
    _done = 0  # no setting ranked yet (_rank_way)
    n5 = evaluator._n5
    if n5:  # native code: the 21 settings ranked in one call (no joker among the seven)
        if p.fast is None:
            evaluator._load(p)
        if lp.fast is None:
            evaluator._load(lp)
        if p.fast and lp.fast:
            _top = n5.seven(p.fast, cards, _W, lp.fast)
            if _top >= 0:
                _done = _ALL
    # The helpers below are called only where they have work to do: a call to a function
    # with more than ~11 words of frame allocates that frame on the heap (ports without
    # a Python stack), and on the fragmented heap of a running table each such
    # allocation searches for room (issue 13; measured on the emulated Pico).
    cnt = _CNT
    by = _BY  # by[n]: the ranks held exactly n times
    for x in by:
        del x[:]
    if n5:
        n5.ranks7(cards, _RK, cnt, by)  # cnt cleared there
    else:
        _groups(cards, cnt, by)
    quads, trips, pairs, singles = by[4], by[3], by[2], by[1]
    # The hand's class (houseways._CLASSES), by its rank pattern, the joker an ace (PR A)
    if cnt[ACE] == 5:
        cls = 0
    elif quads:
        cls = 1 if trips else (2 if pairs else 3)
    elif len(trips) >= 2:
        cls = 4
    elif trips and pairs:
        cls = 5 if len(pairs) >= 2 else 6
    elif len(pairs) >= 3:
        cls = 7
    elif len(pairs) == 2:
        cls = 8
    else:
        cls = 9 if trips else (10 if pairs else 11)
    v = _V
    v[1] = quads[0] if quads else _NONE
    v[2] = trips[0] if trips else _NONE
    v[3] = pairs[0] if pairs else _NONE
    v[4] = pairs[-1] if pairs else _NONE
    v[5] = singles[0] if singles else _NONE
    v[6] = singles[1] if len(singles) > 1 else _NONE
    v[7] = _UNKNOWN
    k = -1
    name_ = 0
    i = 0
    n = len(w)
    while i < n:
        if w[i] == cls:
            j = i + 2
            while j < i + 14:
                s = w[j]
                if s:
                    if s == 7 and v[7] == _UNKNOWN:
                        v[7] = _sf(p, cards)
                    x = v[s]
                    if x < w[j + 1] or x > w[j + 2]:
                        break
                j += 3
            if j >= i + 14:  # every condition holds: the action
                k = _act(p, cards, w[i + 14], w[i + 15], v, trips, pairs, singles)
                if k >= 0:
                    name_ = w[i + 1]
                    break
        i += 16
    if k < 0 or not outranks(p, _W[k], _W[21 + k]):
        # houseways.check() refuses a way that can foul or leaves a class without a
        # setting (tests run every way over every rank pattern): reaching here is a bug,
        # never bad input.
        raise RuntimeError("house way gave no legal setting for %s (class %d)"
                           % (" ".join(name(c) for c in cards), cls))
    high, lo = _setting(cards, k)
    return high, lo, RULES[name_]


def _act(p, cards, kind, r, v, trips, pairs, singles):
    """One rule's action `kind` with its pick `r` (houseways.py): the setting (index
    into SPLITS) it gives, or -1 if it gives none (the next rule is tried). (Argument
    names that are interned anyway: each new name costs the chip's qstr pools.)"""
    if kind == 3 or kind == 2 or (kind == 4 and v[7] != 0):
        if v[7] == _UNKNOWN:
            v[7] = _sf(p, cards)
        if v[7] == 0:
            return -1
        # the best low hand among the settings keeping a straight or better behind,
        # then the best high ("Play the way that will allow the highest two cards in
        # front")
        best = -1
        for k in _KEEP:
            if best < 0 or _W[21 + k] > _W[21 + best] or (
                    _W[21 + k] == _W[21 + best] and _W[k] > _W[best]):
                best = k
        if kind == 3:
            return best
    # the ranks the pick r puts in front
    if r == 0:
        a, b = singles[0], singles[1]
    elif r == 1:
        a, b = singles[1], singles[2]
    elif r == 2:
        a = b = pairs[0]
    elif r == 3:
        a = b = pairs[-1]
    elif r == 4:
        a = b = trips[0]
    elif r == 5:
        a, b = trips[0], singles[0]
    elif r == 6:
        a = b = v[1]
    else:
        a = b = ACE
    if kind == 2:
        # among the settings keeping a straight or better behind, the best (by the high
        # hand, then the low) with the pair in front
        rk = _RK
        x = _PICK
        k = -1
        for q in _KEEP:
            if rk[x[q * 7 + 5]] == a and rk[x[q * 7 + 6]] == a:
                if k < 0 or _W[q] > _W[k] or (_W[q] == _W[k] and _W[21 + q] > _W[21 + k]):
                    k = q
        return k
    if _done == _ALL and evaluator._n5:  # all 21 ranked natively: chosen so too
        k = evaluator._n5.front(_RK, a, b, _W)
    else:
        k = _front(p, cards, a, b)
    if kind == 4 and v[7] != 0 and k >= 0 and not _W[21 + k] > _W[21 + best]:
        return -1  # the front hand is not improved: the straight's setting applies
    return k


def _sf(p, cards):
    """SF for the house way's conditions: 0 no setting keeps a straight or better behind,
    1 some do (kept in _KEEP), 2 some do with an ace in front."""
    floor = p.order[STRAIGHT] << RUNG
    if _top < floor if _done == _ALL else not _may_straight(p, cards):
        return 0  # (_top: the best of the 21 high hands, when all ranked)
    keep = _KEEP
    del keep[:]
    for k in range(21):
        _rank_way(p, cards, k)
        if _W[k] >= floor:
            keep.append(k)
    if not keep:
        return 0
    rk = _RK
    x = _PICK
    for k in keep:
        if rk[x[k * 7 + 5]] == ACE or rk[x[k * 7 + 6]] == ACE:
            return 2
    return 1


def _may_straight(p, cards):
    """Can five of the seven cards make a straight or better? Only a straight or a flush
    can be, on the hands the straight rules see (at most one pair or one three of a
    kind, the joker counted as an ace): a flush needs five cards of a suit, a straight
    five consecutive ranks, the joker completing either (PR C); the straight is the
    core's own test (evaluator._straight) on the seven cards' ranks. False means no
    setting keeps a straight or better behind, so the 21 need not be ranked."""
    m = jk = 0
    s0 = s1 = s2 = s3 = 0
    for i in range(7):
        c = cards[i]
        if c == JOKER:
            jk = 1
            continue
        m |= 1 << (c >> 2)
        s = c & 3
        if s == 0:
            s0 += 1
        elif s == 1:
            s1 += 1
        elif s == 2:
            s2 += 1
        else:
            s3 += 1
    need = p.hand - jk
    if s0 >= need or s1 >= need or s2 >= need or s3 >= need:
        return True
    return evaluator._straight(p, m, jk, False) >= 0
