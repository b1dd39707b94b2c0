# Pai Gow Poker's house way (pr-pai-gow, pr-pai-gow-a5-low): the 21 ways to set seven
# cards, which setting outranks which (the foul rule's core), the configurable two-pair
# rule, and the house way that sets the banker's hand; pitboss.games.paigow settles.
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

from pitboss.rules import evaluator
from pitboss.rules.cards import JOKER, name
from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.rules.profiles import HIGH, PAIR, STRAIGHT, get


_ACE = const(12)  # rank index (deuce = 0); the joker counts here (PR A)
_KING = const(11)
_TEN = const(8)
_SIX = const(4)
_DEUCE = const(0)
_MASK = const(0x1FFF)
_RUNG = const(26)

# The 21 ways to set seven cards: the index pairs (i, j) that form the low hand.
SPLITS = ((0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (1, 2), (1, 3), (1, 4), (1, 5),
          (1, 6), (2, 3), (2, 4), (2, 5), (2, 6), (3, 4), (3, 5), (3, 6), (4, 5), (4, 6),
          (5, 6))

_low = None
_default_two_pair = None


def low():
    """The two-card low hand's profile (PR B.10)."""
    global _low
    if _low is None:
        _low = get("pr-pai-gow-low")
    return _low

# A two-pair hand's class by its pairs' ranks (low, medium, high, aces): the two-pair
# rule (pitboss.games.paigow.two_pair_rule) says per class what keeps both pairs behind.
PAIR_KEYS = ("low-low", "low-medium", "low-high", "medium-medium", "medium-high",
             "high-high", "aces")


def _rank(c):
    return _ACE if c == JOKER else c >> 2


def _default_rule():
    """The default two-pair rule, Trump Plaza's, as pitboss.games.paigow.two_pair_rule
    reads it (tests/test_paigow.py checks they agree; paigow validates a configured one)."""
    global _default_two_pair
    if _default_two_pair is None:
        _default_two_pair = (_SIX, _TEN, {
            "low-low": (_KING,), "low-medium": (_KING,), "low-high": (_ACE,),
            "medium-medium": (_ACE,), "medium-high": None, "high-high": None, "aces": None})
    return _default_two_pair



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
# _two_pair(): the class pair (low 0, medium 1, high 2; the lower pair's class first)
# -> its key in _PAIR_KEYS, without building the key string.
_TWO_PAIR_KEY = b"\x00\x01\x02\x00\x03\x04\x00\x00\x05"


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


def _two_pair(rule, pairs, singles):
    low_max, medium_max, keep = rule
    hi, lo = pairs[0], pairs[1]
    if hi == _ACE:
        key = "aces"
    else:
        lc = 0 if lo <= low_max else (1 if lo <= medium_max else 2)
        hc = 0 if hi <= low_max else (1 if hi <= medium_max else 2)
        key = PAIR_KEYS[_TWO_PAIR_KEY[lc * 3 + hc]]  # e.g. "low-medium"
    need = keep[key]
    if need is not None:
        for i in range(len(need)):
            if singles[i] < need[i]:
                return "two_pair_split", lo, lo
        return "two_pair_keep", singles[0], singles[1]
    return "two_pair_split", lo, lo


def house_way(p, cards, two_pair=None):
    """Set seven cards the house way: (high, low, rule). `two_pair` is a validated
    two_pair_rule() (default Trump Plaza). Refused for a bad hand."""
    evaluator.check(p, cards, more=True)
    if len(cards) != 7:
        raise Refused("wrong_count", "a Pai Gow hand is 7 cards, got %d" % len(cards))
    global _done, _top
    rule = _default_rule() if two_pair is None else two_pair
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
    way = None
    if cnt[_ACE] == 5:
        # "Five aces: Split aces and play three aces in back and two aces in front. If
        # you have five aces and a pair of kings, then play five aces in back and kings
        # in front."
        if pairs and pairs[0] == _KING:
            name_, a, b = "five_aces_kings", _KING, _KING
        else:
            name_, a, b = "five_aces_split", _ACE, _ACE
    elif quads:
        q = quads[0]
        if trips:
            # "Four of a kind and three of a kind: Play pair in front from the three of
            # a kind."
            name_, a, b = "quads_trips", trips[0], trips[0]
        elif pairs:
            # "Four of a kind and a pair: Play pair in front."
            name_, a, b = "quads_pair", pairs[0], pairs[0]
        elif q <= _SIX:
            # "Four of a kind ... 2-6: Always keep together."
            name_, a, b = "quads_keep", singles[0], singles[1]
        elif q <= _TEN and singles[0] == _ACE:
            # "7-10: Split unless an ace or better can be played in front."
            name_, a, b = "quads_keep_ace", singles[0], singles[1]
        else:
            # "7-10: Split ..." / "J-A: Always split."
            name_, a, b = "quads_split", q, q
    elif len(trips) >= 2:
        # "Three of a kind twice: Play lowest trips in the back and highest pair in front."
        name_, a, b = "two_trips", trips[0], trips[0]
    elif trips and pairs:
        if len(pairs) >= 2:
            # "Full house with three of a kind and two pairs: Play the highest pair in
            # front."
            name_, a, b = "full_house_two_pairs", pairs[0], pairs[0]
        elif pairs[0] == _DEUCE and len(singles) == 2 and singles[0] == _ACE \
                and singles[1] == _KING:
            # "If the full house includes a pair of twos and kickers are A-K, keep full
            # house together."
            name_, a, b = "full_house_deuces_ak", _ACE, _KING
        else:
            # "Full house: Play the three of a kind in back and pair up front."
            name_, a, b = "full_house", pairs[0], pairs[0]
    elif len(pairs) >= 3:
        # "Three pair: Play the highest pair in front."
        name_, a, b = "three_pair", pairs[0], pairs[0]
    elif len(pairs) == 2:
        # The casino's two-pair rule, which "typically trumps other rules" (so two pair
        # with a straight or flush is set by it too).
        name_, a, b = _two_pair(rule, pairs, singles)
    else:
        floor = p.order[STRAIGHT] << _RUNG
        if _top < floor if _done == _ALL else not _may_straight(p, cards):
            name_ = None  # no straight or better can be kept behind (_top: the best of
            # the 21 high hands, when all ranked)
        else:
            name_, a, b, way = _straights(p, cards, pairs, singles, floor)
        if name_ is None:
            if trips and trips[0] == _ACE:
                # "Three of a kind: ... If three aces, split them." (pair of aces
                # behind, an ace and the next highest card in front)
                name_, a, b = "three_aces_split", _ACE, singles[0]
            elif trips:
                # "Three of a kind: Play three of a kind in back."
                name_, a, b = "trips", singles[0], singles[1]
            elif pairs:
                # "One pair: Play the pair in back and the next two highest cards in the
                # front."
                name_, a, b = "one_pair", singles[0], singles[1]
            else:
                # "No pair: Play the highest card in the back and the next two highest
                # in the front."
                name_, a, b = "no_pair", singles[1], singles[2]
    if way is None:
        if _done == _ALL and n5:  # all 21 ranked natively: chosen so too
            way = n5.front(_RK, a, b, _W)
        else:
            way = _front(p, cards, a, b)
    if way < 0 or not outranks(p, _W[way], _W[21 + way]):
        # Every rule above yields a legal setting (tests check many thousand hands):
        # reaching here is a bug, never bad input.
        raise RuntimeError("house way %s gave no legal setting for %s"
                           % (name_, " ".join(name(c) for c in cards)))
    high, lo = _setting(cards, way)
    return high, lo, name_


def _may_straight(p, cards):
    """Can five of the seven cards make a straight or better? Only a straight or a flush
    can be, on the hands _straights() gets (at most one pair or one three of a kind, the
    joker counted as an ace): a flush needs five cards of a suit, a straight five
    consecutive ranks, the joker completing either (PR C); the straight is the core's
    own test (evaluator._straight) on the seven cards' ranks. False means no setting keeps
    a straight or better behind, so the 21 need not be ranked."""
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


def _straights(p, cards, pairs, singles, floor):
    """"Straights, flushes, straight flushes, and royal flush" (hands with at most one
    pair or three of a kind; two pair goes by the two-pair rule). Returns (rule, a, b,
    way): rule None when no straight or better can be played in back; way (a setting's
    index) None when the rule names the low hand's ranks a, b instead. Called once
    house_way() has seen a straight or better (score >= floor) may be kept behind."""
    keep = _KEEP
    del keep[:]
    for k in range(21):
        _rank_way(p, cards, k)
        if _W[k] >= floor:
            keep.append(k)
    if not keep:
        return None, 0, 0, None
    rk = _RK
    x = _PICK
    if len(pairs) == 1:
        pr = pairs[0]
        # "With one pair: Play pair in the front if a straight or flush can be
        # maintained in back."
        best = -1
        for k in keep:
            if rk[x[k * 7 + 5]] == pr and rk[x[k * 7 + 6]] == pr:
                # by the high hand, then the low (compared without building tuples)
                if best < 0 or _W[k] > _W[best] or (
                        _W[k] == _W[best] and _W[21 + k] > _W[21 + best]):
                    best = k
        if best >= 0:
            return "straight_pair_front", 0, 0, best
        # "If pair is 10's+ and you have an ace, play pair/ace": the pair behind, the
        # ace (and the next highest card) in front, giving up the straight or flush.
        # Our reading: only when the straight or flush cannot be kept with the ace in
        # front; otherwise (e.g. Kh Kc 9h 7h 4h 2h As: flush behind, A-K in front) the
        # pair/ace setting would be worse in both hands, and the rule's point is to get
        # the ace up front.
        if pr >= _TEN and singles[0] == _ACE:
            ace_front = False
            for k in keep:
                if rk[x[k * 7 + 5]] == _ACE or rk[x[k * 7 + 6]] == _ACE:
                    ace_front = True
            if not ace_front:
                return "straight_pair_ace", _ACE, singles[1], None
    # "With no pair: Play the way that will allow the highest two cards in front."
    # Applied also to one pair (when the rules above do not) and to three of a kind,
    # for which the page gives no rule: the best low hand that still keeps a straight
    # or better behind.
    best = -1
    for k in keep:
        if best < 0 or _W[21 + k] > _W[21 + best] or (
                _W[21 + k] == _W[21 + best] and _W[k] > _W[best]):
            best = k
    return "straight_best_front", 0, 0, best


