# Pai Gow Poker (pr-pai-gow, pr-pai-gow-a5-low): the foul rule, the 21 ways to set seven
# cards, the house way that sets the banker's hand, and settlement.
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
from pitboss.rules.cards import JOKER, RANKS, name, parse_hand
from pitboss.compat import const, forget
from pitboss.errors import Refused
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
_default_two_pair = None
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
#   high: Always split. High and high: Always split. Pair of aces and any other pair:
#   Always split."
# `keep` names the singles that must be playable in the low hand to keep both pairs in
# the high hand: "K" = a king or better, "AJ" = an ace with a jack or better (as in
# Canterbury Park's "Ace with a Face"); None = always split.
TRUMP_PLAZA = {
    "name": "trump-plaza",
    "source": "Wizard of Odds, Pai Gow Poker, Appendix 2 (Trump Plaza house way)",
    "low_max": "6",
    "medium_max": "T",
    "keep": {"low-low": "K", "low-medium": "K", "low-high": "A", "medium-medium": "A",
             "medium-high": None, "high-high": None, "aces": None},
}
# per _PAIR_KEYS entry: the lower pair's class and the higher's (0 low, 1 medium, 2 high)
_TWO_PAIR_CLASSES = const(b"\x00\x00\x00\x01\x00\x02\x01\x01\x01\x02\x02\x02")
_PAIR_KEYS = ("low-low", "low-medium", "low-high", "medium-medium", "medium-high",
              "high-high", "aces")


def _rank(c):
    return _ACE if c == JOKER else c >> 2


def _bad(message):
    return Refused("bad_config", message)


def _rank_char(cfg, key, v):
    r = RANKS.find(v.upper()) if isinstance(v, str) and len(v) == 1 else -1
    if r < 0:
        raise _bad("two-pair rule %s: %s must be one rank of %s, got %r"
                          % (cfg, key, RANKS, v))
    return r


def two_pair_rule(cfg=None, way=None):
    """A two-pair rule of TRUMP_PLAZA's shape, validated, as the Gold Star house way
    (houseways.py) holding it: the way's bytes, for house_way(). `way`: the house way
    configured with it (None or gold-star; another is refused)."""
    global _default_two_pair
    if cfg is None:
        if way is None and _default_two_pair is not None:
            return _default_two_pair  # the default way, cached
        # A way by name or as data (None: the default, Gold Star with the Trump Plaza
        # rule), from houseways.py, which is dropped again once the way's bytes are made:
        # its code and tables are needed at configuration only (about 4 KB of a Pico's
        # heap while Pai Gow is played, measured in the survive session); the engine
        # here reads the bytes.
        from pitboss.games import houseways
        try:
            w = houseways.way(way)
        finally:
            forget("pitboss.games.houseways")
        if way is None:
            _default_two_pair = w
        return w
    if not isinstance(cfg, dict):
        raise _bad("two-pair rule must be a dict like paigow.TRUMP_PLAZA, got %r"
                          % (cfg,))
    for k in cfg:
        if k not in ("name", "source", "low_max", "medium_max", "keep"):
            raise _bad("two-pair rule has no setting %r" % (k,))
    label = cfg.get("name", "?")
    low_max = _rank_char(label, "low_max", cfg.get("low_max"))
    medium_max = _rank_char(label, "medium_max", cfg.get("medium_max"))
    if not low_max < medium_max < _ACE:
        raise _bad("two-pair rule %s: need low_max < medium_max < A" % label)
    keep_in = cfg.get("keep")
    if not isinstance(keep_in, dict):
        raise _bad("two-pair rule %s: keep must be a dict of %s"
                          % (label, ", ".join(_PAIR_KEYS)))
    for k in keep_in:
        if k not in _PAIR_KEYS:
            raise _bad("two-pair rule %s: unknown pair class %r (classes: %s)"
                              % (label, k, ", ".join(_PAIR_KEYS)))
    # The pair classes as rank ranges (low 0..low_max, medium, high up to the king);
    # each kept class becomes one rule "keep if the singles reach `need`", the rest
    # split (houseways.way(..., two_pair): (conditions, keep) pairs).
    ranges = ((0, low_max), (low_max + 1, medium_max), (medium_max + 1, _KING))
    rules = []
    for n in range(len(_PAIR_KEYS)):
        k = _PAIR_KEYS[n]
        if k not in keep_in:
            raise _bad("two-pair rule %s: missing %s" % (label, k))
        v = keep_in[k]
        if v is None:
            continue
        if not (isinstance(v, str) and 1 <= len(v) <= 2):
            raise _bad("two-pair rule %s: %s must be None or 1-2 ranks like "
                              "'K' or 'AJ', got %r" % (label, k, v))
        if k == "aces":
            conds = [(3, _ACE, _ACE)]
        else:
            lc, hc = _TWO_PAIR_CLASSES[2 * n], _TWO_PAIR_CLASSES[2 * n + 1]
            conds = [(4,) + ranges[lc], (3,) + ranges[hc]]
        for i in range(len(v)):
            conds.append((5 + i, _rank_char(label, k, v[i]), _ACE))
        rules.append((conds, True))
    rules.append(((), False))
    from pitboss.games import houseways
    try:
        return houseways.way(way, rules)
    finally:
        forget("pitboss.games.houseways")  # as above


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


# ---- settlement ----------------------------------------------------------------------

def commission(win, bps, rounding="down", unit=1):
    """Commission on a win of `win` units at `bps` basis points (500 = 5%), rounded to
    a multiple of the table's `unit`: "down" (default: never more than the posted rate)
    or "up" (never less)."""
    exact = win * bps  # in units / 10000
    step = unit * 10000
    if rounding == "up":
        return -(-exact // step) * unit
    return exact // step * unit


def hand_result(mine, banker):
    """One hand against the banker's: copies (equal hands, PR E) go to the banker."""
    return "win" if mine > banker else ("copy" if mine == banker else "lose")


# settle_seats()' rows: one preallocated list per seat, reused every round (made on the
# first settlement, not at import). Their slots (const: inlined, not looked up):
_HS = const(0)  # the high hand's score
_LS = const(1)  # the low hand's score
_LOSE = const(2)  # the seat lost on a foul
_OUTCOME = const(3)  # then what settle() returns, in its order
_HIGH = const(4)
_LOW = const(5)
_COMM = const(6)
_AMOUNT = const(7)
_rows = None  # type: list[list] | None


def seat_rows():
    global _rows
    if _rows is None:
        _rows = [[0] * 8 for _ in range(MAX_SEATS)]
    return _rows


def settle_seats(p, seats, bhs, bls, bps=500, rounding="down", unit=1):
    """Every seat against the banker's hands (scores bhs, bls) in one call: seats is
    [(wager, high, low, lose)], lose True (a foul that loses), False, or None (check the
    setting here: it loses if the high hand does not outrank the low, PR's foul rule).
    Returns seat_rows(), row i filled for seat i: the hands' scores, lose, and what
    settle() returns. Why one call: a call per seat to settle() (9 arguments) takes a
    frame too large for the C stack, which MicroPython then allocates on the heap: 500
    to 800 us a seat on a Pico's fragmented heap (issue 13). Nothing is allocated here."""
    rows = seat_rows()
    lp = _low or low()
    score = evaluator.score  # looked up once, not per seat
    ladder = p.ladder
    i = 0
    for wager, high, lo, lose in seats:
        r = rows[i]
        hs = score(p, high)
        ls = score(lp, lo)
        if lose is None:
            # outranks(), its first answer inline: a high hand above one pair outranks
            # every low hand (a call per seat is most of a seat's time on a board)
            hk = ladder[hs >> _RUNG]
            lose = (hk == HIGH or hk == PAIR) and not outranks(p, hs, ls)
        r[_HS] = hs
        r[_LS] = ls
        r[_LOSE] = lose
        if lose:
            r[_OUTCOME] = "foul"
            r[_HIGH] = r[_LOW] = "lose"
            r[_COMM] = 0
            r[_AMOUNT] = -wager
        else:
            # settle() below, inline
            r[_HIGH] = "win" if hs > bhs else ("copy" if hs == bhs else "lose")
            r[_LOW] = "win" if ls > bls else ("copy" if ls == bls else "lose")
            if hs > bhs and ls > bls:
                c = commission(wager, bps, rounding, unit)
                r[_OUTCOME] = "win"
                r[_COMM] = c
                r[_AMOUNT] = wager - c
            elif hs > bhs or ls > bls:
                r[_OUTCOME] = "push"
                r[_COMM] = r[_AMOUNT] = 0
            else:
                r[_OUTCOME] = "lose"
                r[_COMM] = 0
                r[_AMOUNT] = -wager
        i += 1
    return rows


def settle(wager, hs, ls, bhs, bls, foul, bps=500, rounding="down", unit=1):
    """One player's wager against the banker. A foul hand loses. Both hands win: paid
    even money less commission; one wins: push; none: lose (copies count as lost)."""
    if foul:
        return {"outcome": "foul", "high_result": "lose", "low_result": "lose",
                "commission": 0, "amount": -wager}
    # hand_result() inline (a call each costs as much as the rest on a board)
    h = "win" if hs > bhs else ("copy" if hs == bhs else "lose")
    lw = "win" if ls > bls else ("copy" if ls == bls else "lose")
    if hs > bhs and ls > bls:
        c = commission(wager, bps, rounding, unit)
        out, amount = "win", wager - c
    elif hs > bhs or ls > bls:
        c, out, amount = 0, "push", 0
    else:
        c, out, amount = 0, "lose", -wager
    return {"outcome": out, "high_result": h, "low_result": lw, "commission": c,
            "amount": amount}


# ---- the game interface (pitboss.games) ----------------------------------------------
WAGERS = ("wager",)
MAIN = "wager"
PAYTABLES = ()
HOUSE = ("commission_bps", "commission_rounding", "commission_unit", "foul", "two_pair",
         "way")
MAX_SEATS = const(6)  # positions 2-7; position 1 is the banker's
DICE = True
AFTER_DEAL = "setting"
FACE_UP = ()  # the banker's seven cards stay face down while players set their hands
DECISIONS = ("set", "hw")  # the player's own setting; the house way, asked for


def _int_in(what, v, lo, hi):
    if type(v) is not int or not lo <= v <= hi:
        raise _bad("%s must be an int in %d..%d, got %r" % (what, lo, hi, v))
    return v


def _choice(what, v, options):
    if v not in options:
        raise _bad("%s must be one of %s, got %r" % (what, ", ".join(options), v))
    return v


def house(p, given):
    """The house rules with their defaults: 5% commission rounded down to the unit of 1,
    a foul hand loses, the house way "way" (houseways._WAYS, or a casino's own as data;
    None, the default: gold-star with the Trump Plaza two-pair rule, "two_pair" its
    configurable rule as in issue 7); "_two_pair": the checked way's bytes (the key issue 7 gave the
    two-pair rule, which the way now holds: one interned name less)."""
    h = {"commission_bps": _int_in("commission_bps", given.get("commission_bps", 500),
                                   0, 10000),
         "commission_rounding": _choice("commission_rounding",
                                        given.get("commission_rounding", "down"),
                                        ("down", "up")),
         "commission_unit": _int_in("commission_unit", given.get("commission_unit", 1),
                                    1, 1000000),
         "foul": _choice("foul", given.get("foul", "lose"), ("lose", "house_way", "reject"))}
    # The way as configured (None: the default), kept so a restored or replayed
    # configuration builds the same way again; issue 7's two-pair rule, if given, goes
    # into the Gold Star way (houseways.way refuses it with another way).
    way = given.get("way")
    h["way"] = way
    if "two_pair" in given:
        h["two_pair"] = given["two_pair"]
        h["_two_pair"] = two_pair_rule(given["two_pair"], way)
    else:
        h["_two_pair"] = two_pair_rule(None, way)
    return h


def deal_order(t, dice):
    """Positions 1-7 counted counter-clockwise from the banker's (1); the dice total
    counted from the banker's position picks the first packet's position; seven packets
    of seven follow in position order, empty positions included (their packets go to the
    discards); four cards are left over. Without `dice` the table's rng rolls them."""
    if dice is None:
        rng = t.rng
        if rng is None:
            raise Refused("no_dice", "Pai Gow needs the dice total (deal(dice=)) or an "
                          "injected rng")
        dice = rng(6) + rng(6) + rng(6) + 3
    if type(dice) is not int or not 3 <= dice <= 18:
        raise Refused("bad_dice", "dice total must be an int in 3..18, got %r" % (dice,))
    start = (dice - 1) % 7 + 1
    order = []
    for i in range(7):
        pos = (start - 1 + i) % 7 + 1
        order += [pos - 1] * 7  # position 1 -> 0 (banker), k -> seat k-1
    return order, start, dice


def _names(cards):
    return [name(c) for c in cards]


def decide(t, seat, verb, ev):
    """"set": the player's setting (ev: "high" five cards, "low" two, as names or ids);
    "hw": the house way, asked for. A foul setting is refused, reset by the house way or
    kept to lose, as the house rule "foul" says."""
    p = t.profile
    h = t.house
    seven = t.hand(seat)
    if verb == "hw":
        high, lo, rule = house_way(p, seven, h["_two_pair"])
        return ((high, lo, False, "house_way"),
                {"seat": seat, "foul": False, "set_by": "house_way", "rule": rule,
                 "high": _names(high), "low": _names(lo)})
    high = parse_hand(ev.get("high", ()))  # "As Kd ..." or a sequence of names / ids
    lo = parse_hand(ev.get("low", ()))
    check_setting(seven, high, lo)
    foul = is_foul(p, high, lo)
    set_by = "player"
    if foul and h["foul"] == "reject":
        raise Refused("foul", "seat %d: the high hand %s does not outrank the low hand %s"
                      % (seat, " ".join(_names(high)), " ".join(_names(lo))))
    if foul and h["foul"] == "house_way":
        high, lo, _ = house_way(p, seven, h["_two_pair"])
        set_by = "house_way"
    return ((high, lo, foul, set_by),
            {"seat": seat, "foul": foul, "set_by": set_by, "high": _names(high),
             "low": _names(lo)})


def settle_round(t):
    """The banker's hand set the house way; each seat against it (settle())."""
    p = t.profile
    lp = low()
    h = t.house
    bh, bl, brule = house_way(p, t.hand(0), h["_two_pair"])
    bhs = evaluator.score(p, bh)
    bls = evaluator.score(lp, bl)
    in_play = t.seats_in_play()
    choices = [t.choice(s) for s in in_play]
    # A foul hand reset by the house way is settled as reset (foul rule "house_way");
    # under "lose" it loses whatever it holds.
    lose_foul = h["foul"] == "lose"
    rows = settle_seats(p, [(t.wagers(s)["wager"], c[0], c[1], c[2] and lose_foul)
                            for s, c in zip(in_play, choices)], bhs, bls,
                        h["commission_bps"], h["commission_rounding"], h["commission_unit"])
    seats = []
    for i in range(len(in_play)):
        high, lo, foul, set_by = choices[i]
        r = rows[i]
        d = t.seat_head(in_play[i])
        d.update({"high": evaluator.played(p, high), "low": evaluator.played(lp, lo),
                  "high_category": p.category(r[_HS]),
                  "low_category": lp.category(r[_LS]), "foul": foul, "set_by": set_by,
                  "outcome": r[_OUTCOME], "high_result": r[_HIGH],
                  "low_result": r[_LOW], "commission": r[_COMM],
                  "amount": r[_AMOUNT]})
        seats.append(d)
    discards = []
    for r in t.recipients():  # sorted: the same order on every port
        if r != 0 and not t.in_play(r):
            discards += _names(t.hand(r))
    banker = {"cards": _names(t.hand(0)),
              "high": evaluator.played(p, bh), "low": evaluator.played(lp, bl),
              "high_category": p.category(bhs), "low_category": lp.category(bls),
              "rule": brule}
    return {"dice": t.dice, "start": t.start, "banker": banker, "discards": discards,
            "seats": seats}


def sim_wagers(rng):
    # Odd amounts on purpose: they exercise the rounding of commission.
    return {"wager": 5 + rng.below(996)}


def sim_decision(t, seat):
    """The simulated player takes the house way."""
    return "hw", {}
