# Pai Gow Poker's setting rules (pitboss.games.paigow): the 21 ways to split seven
# cards, the two-card low hand's ranking, the foul rule (PR C: the five-card hand must
# outrank the two-card hand) and the two-pair rule the house way is configured with
# (pitboss.games.paigow's header cites the sources).
from pitboss.compat import const, forget
from pitboss.errors import Refused
from pitboss.rules import evaluator
from pitboss.rules.cards import JOKER, RANKS, name
from pitboss.rules.profiles import HIGH, PAIR, get

ACE = const(12)  # rank index (deuce = 0); the joker counts here (PR A)
_KING = const(11)
_MASK = const(0x1FFF)
RUNG = const(26)

# The 21 ways to set seven cards: the index pairs (i, j) that form the low hand.
SPLITS = ((0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (1, 2), (1, 3), (1, 4), (1, 5),
          (1, 6), (2, 3), (2, 4), (2, 5), (2, 6), (3, 4), (3, 5), (3, 6), (4, 5), (4, 6),
          (5, 6))

_low = None
_default_two_pair = None
# The rule names a house way's rules report (houseways.py, rule byte 1; a const tuple:
# its strings are objects, not interned names). The first 21 are issue 7's.
RULES = const(("no_pair", "one_pair", "two_pair_split", "two_pair_keep", "three_pair",
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
    return ACE if c == JOKER else c >> 2


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
        raise _bad("two-pair rule must be a dict like paigow_rules.TRUMP_PLAZA, got %r"
                          % (cfg,))
    for k in cfg:
        if k not in ("name", "source", "low_max", "medium_max", "keep"):
            raise _bad("two-pair rule has no setting %r" % (k,))
    label = cfg.get("name", "?")
    low_max = _rank_char(label, "low_max", cfg.get("low_max"))
    medium_max = _rank_char(label, "medium_max", cfg.get("medium_max"))
    if not low_max < medium_max < ACE:
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
            conds = [(3, ACE, ACE)]
        else:
            lc, hc = _TWO_PAIR_CLASSES[2 * n], _TWO_PAIR_CLASSES[2 * n + 1]
            conds = [(4,) + ranges[lc], (3,) + ranges[hc]]
        for i in range(len(v)):
            conds.append((5 + i, _rank_char(label, k, v[i]), ACE))
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
    hk = p.ladder[hs >> RUNG]  # p.kind_of(hs), without the method call
    if hk != HIGH and hk != PAIR:
        return True
    lk = (_low or low()).ladder[ls >> RUNG]
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
