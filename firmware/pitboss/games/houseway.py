# Pai Gow Poker's house way (pr-pai-gow, pr-pai-gow-a5-low): the 21 ways to set seven
# cards, the foul rule (which setting is legal), and the one engine that sets a hand the
# way a house way says (the ways themselves are data: pitboss.games.houseways);
# pitboss.games.paigow holds the two-pair rule's configuration and settles. Released
# with paigow (games._HELPERS).
#
# Rule texts: shared/rules/ (beside the repository) puerto-rico-pai-gow-poker-ranks.es.txt (PR A-E): the
# five-card high hand is ranked by the game's profile, the two-card low hand by the
# pr-pai-gow-low profile (PR B.10: a pair or not; PR A: the joker is an ace in it).
#
# HOUSE WAY. The "standard house ways" published by the Gold Star School of Gaming, Las
# Vegas (goldstarschool.com/house-ways/, "the standard house ways we teach at our dealing
# school for setting hands in Pai Gow Poker"), bullet by bullet. That page says casinos
# vary their two-pair rule and that it "typically trumps other rules"; the two-pair rule
# is therefore configuration, by default the Trump Plaza rule as published by the Wizard
# of Odds (Pai Gow Poker, Appendix 2: "This is very typical. Most other casinos use this
# exact rule or something similar"). Each rule below quotes its bullet; the rule name it
# returns is what results and tests cite. docs/games.md lists every reading we chose.
from array import array

from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.rules import evaluator
from pitboss.rules.cards import JOKER, name
from pitboss.rules.profiles import HIGH, PAIR, STRAIGHT, get

_ACE = const(12)  # rank index (deuce = 0); the joker counts here (PR A)
_KING = const(11)
_MASK = const(0x1FFF)
_RUNG = const(26)

# The 21 ways to set seven cards: the index pairs (i, j) that form the low hand.
SPLITS = ((0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (1, 2), (1, 3), (1, 4), (1, 5),
          (1, 6), (2, 3), (2, 4), (2, 5), (2, 6), (3, 4), (3, 5), (3, 6), (4, 5), (4, 6),
          (5, 6))

_low = None
# The rule names a house way's rules report (houseways.py, rule byte 1; a const tuple:
# its strings are objects, not interned names). The first 21 are issue 7's.
_RULES = const(("no_pair", "one_pair", "two_pair_split", "two_pair_keep", "three_pair",
                "trips", "three_aces_split", "two_trips", "straight_best_front",
                "straight_pair_front", "straight_pair_ace", "full_house",
                "full_house_deuces_ak", "full_house_two_pairs", "quads_keep",
                "quads_keep_ace", "quads_split", "quads_pair", "quads_trips",
                "five_aces_split", "five_aces_kings", "quads_keep_king",
                "straight_trips_pair", "way"))


def low():
    """The two-card low hand's profile (PR B.10)."""
    global _low
    if _low is None:
        _low = get("pr-pai-gow-low")
    return _low

# Trump Plaza two-pair rule (Wizard of Odds, Pai Gow Poker, Appendix 2):
#   low 2-6, medium 7-10, high J-K;  "Low pair and low pair: Split unless holding a king
#   or better. Low and medium: Split unless holding a king or better. Low and high: Split
#   unless holding an ace. Medium and medium: Split unless holding an ace. Medium and


# ---- the foul rule -------------------------------------------------------------------

def outranks(p, hs, ls):
    """Does a high hand scoring hs (profile p) outrank a low hand scoring ls (low())?

    The texts compare high with high and low with low (PR E); the foul rule compares a
    five-card hand with a two-card one. Our reading: anything above one pair outranks
    every low hand; pair against pair goes by the pair's rank; high card against high
    card goes by PR E, "the hand holding the highest card the other does not hold", so
    when the low hand's cards are all matched (same pair, or its two ranks are the high
    hand's top two) the five-card hand still holds cards the other does not, and wins.
    Splitting four of a kind (7-7 low, 7-7-x-y-z high) is therefore legal, as house ways
    require. Relies on the score layout documented in evaluator.py (rung << 26 | upper
    13-bit rank mask << 13 | lower mask)."""
    hk = p.ladder[hs >> _RUNG]  # p.kind_of(hs), without the method call
    if hk != HIGH and hk != PAIR:
        return True
    lk = (_low or low()).ladder[ls >> _RUNG]
    if hk == PAIR:
        if lk == HIGH:
            return True
        return (hs >> 13) & _MASK >= (ls >> 13) & _MASK
    if lk == PAIR:
        return False
    # The highest rank one hand holds and the other does not is the high hand's exactly
    # when its ranks the low hand lacks make the larger mask (disjoint masks compare by
    # their top bit); never equal: five ranks against two.
    hm = hs & _MASK
    lm = ls & _MASK
    return hm & ~lm > lm & ~hm


def check_setting(seven, high, low):
    """Refused unless high (5) + low (2) are exactly the seven cards dealt."""
    if len(high) != 5:
        raise Refused("wrong_count", "the high hand takes 5 cards, got %d" % len(high))
    if len(low) != 2:
        raise Refused("wrong_count", "the low hand takes 2 cards, got %d" % len(low))
    both = list(high) + list(low)
    seen = {}
    for c in both:
        if c in seen:
            raise Refused("duplicate_card", "card %s is set twice" % name(c))
        seen[c] = 1
        if c not in seven:
            raise Refused("not_dealt", "card %s was not dealt to this hand" % name(c))


def is_foul(p, high, lo):
    return not outranks(p, evaluator.score(p, high), evaluator.score(low(), lo))


def settings(cards):
    """The 21 ways to set seven cards, as [(high five, low two), ...] in SPLITS order."""
    out = []
    for i, j in SPLITS:
        out.append(([cards[k] for k in range(7) if k != i and k != j], [cards[i], cards[j]]))
    return out


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
# then i and j (tests/test_paigow.py derives it from SPLITS).
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
    _W[21 + k] = evaluator.score(_low, lo)
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
        r = _ACE if c == JOKER else c >> 2
        rk[i] = r
        cnt[r] += 1
    for r in range(12, -1, -1):
        n = cnt[r]
        if n:
            by[n].append(r)


def house_way(p, cards, way):
    """Set seven cards the house way: (high, low, rule name). `way` is a checked house
    way (houseways.py: bytes; paigow.house_way() gives the default, Gold Star with the
    Trump Plaza two-pair rule), the one engine below interprets it. Refused for a bad
    hand."""
    evaluator.check(p, cards, more=True)
    if len(cards) != 7:
        raise Refused("wrong_count", "a Pai Gow hand is 7 cards, got %d" % len(cards))
    global _done, _top
    w = way
    if type(cards) is not list:  # (read only here: a list is used as it is)
        cards = list(cards)
    lp = _low or low()
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
    if cnt[_ACE] == 5:
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
    return high, lo, _RULES[name_]


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
        a = b = _ACE
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
    floor = p.order[STRAIGHT] << _RUNG
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
        if rk[x[k * 7 + 5]] == _ACE or rk[x[k * 7 + 6]] == _ACE:
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
