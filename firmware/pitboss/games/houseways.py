# Pai Gow Poker house ways as data: the published ways, and the check every way (a
# published one or a casino's own, submitted as data) goes through before a table uses
# it. pitboss.games.paigow_way.house_way() is the one engine that interprets them. Imported
# only when the configured game is Pai Gow (games/paigow.py imports it).
#
# A WAY is bytes: rules of 16 small ints each, tried in order. The hand's CLASS comes
# from its rank pattern, the joker counted as an ace (PR A: puerto-rico-pai-gow-poker-
# ranks.es.txt): _CLASSES below. For that class the first rule whose conditions all hold
# and whose action finds a setting sets the hand:
#   [0] class  [1] rule name (index into paigow_rules._RULES: what the result reports)
#   [2..13] four conditions (subject, lo, hi): the subject's rank (deuce 0 .. ace 12)
#       lies in lo..hi; subject 0 = no condition. Subjects (SUBJECTS): Q the four of a
#       kind, T0 the highest three of a kind, P0 the highest pair, PL the lowest pair, S0
#       and S1 the highest single cards, SF 0 no straight or better can stay behind /
#       1 one can, but never with an ace in front / 2 one can with an ace in front. A
#       subject the hand lacks fails every condition on it.
#   [14] action: 1 FRONT: the ranks PICK names go in front (the best such setting by
#       its high hand, then its low: which suit, and where the joker goes, is chosen to
#       make the best hand); 2 SF_PAIR: among the settings that keep a straight or better
#       behind, one with PICK's pair in front (fails if none); 3 SF_BEST: among those,
#       the best low hand (fails if none); 4 FRONT_IF_BETTER: FRONT, but where a straight
#       or better can stay behind only if PICK's low hand beats SF_BEST's (else fails).
#   [15] PICK: 0 S0+S1, 1 S1+S2, 2 P0 pair, 3 PL pair, 4 T0 pair, 5 one of T0 + S0,
#       6 Q pair, 7 two aces.
# The precedence of classes is the poker rank of their patterns (five aces first); what
# overrides what (a straight over a pair, the two-pair rule over a straight) is the
# order of a class's rules. check() refuses a way that can foul or leaves a hand of
# some class without a setting, naming the class.
from pitboss.compat import const
from pitboss.errors import Refused

_SIZE = const(16)  # bytes per rule
_NCLASS = const(12)
_NSUBJ = const(8)
_NPICK = const(8)

# (Private const tuples: no global name is interned on the board; the host reads them as
# houseways._CLASSES and houseways._WAYS.)
_CLASSES = const(("five_aces", "quads_trips", "quads_pair", "quads", "two_trips",
                  "full_house_two_pairs", "full_house", "three_pair", "two_pair", "trips",
                  "one_pair", "no_pair"))
# The rule names (rule byte 1) are paigow_rules._RULES: _NNAMES of them.
_NNAMES = const(24)

# What a pick needs of each class, and whether FRONT with it can foul. One byte per
# (class, pick) at [class * 8 + pick]: 0 always available and never fouls; 1 available
# but can foul (the high hand can rank below the low); 2 not always available: allowed
# only when a condition of the rule names the subject(s) the pick takes (bit 3 of the
# byte below). Worked out from each class's pattern (its counts of quads, trips, pairs
# and singles) and the foul rule of paigow_rules.outranks; tests/host/test_houseways.py checks every
# entry against every rank pattern of seven cards.
_PICKABLE = const(
    # S0S1 S1S2 P0  PL  T0 T0S0  Q  AA
    b"\x02\x02\x02\x02\x02\x02\x02\x00"  # five_aces: AAAAA + a pair or two singles
    b"\x02\x02\x02\x02\x00\x02\x00\x02"  # quads_trips
    b"\x02\x02\x00\x00\x02\x02\x00\x02"  # quads_pair: QQQQ PP s
    b"\x00\x00\x02\x02\x02\x02\x00\x02"  # quads: QQQQ s s s
    b"\x02\x02\x02\x02\x00\x00\x02\x02"  # two_trips: TTT ttt s
    b"\x02\x02\x00\x00\x00\x02\x02\x02"  # full_house_two_pairs: TTT PP pp
    b"\x00\x02\x00\x00\x01\x00\x02\x02"  # full_house: TTT PP s s (T0 front fouls over a lower pair)
    b"\x02\x02\x00\x00\x02\x02\x02\x02"  # three_pair: PP pp qq s
    b"\x00\x00\x01\x00\x02\x02\x02\x02"  # two_pair: PP pp s s s
    b"\x00\x00\x02\x02\x01\x00\x02\x02"  # trips: TTT s s s s
    b"\x00\x00\x01\x01\x02\x02\x02\x02"  # one_pair: PP s s s s s
    b"\x01\x00\x02\x02\x02\x02\x02\x02"  # no_pair
)
# The subjects each pick takes, as bits (1 << subject): a rule whose conditions name
# them all may use a pick its class does not always have.
_NEEDS = const((96, 255, 8, 16, 4, 36, 2, 255))  # S0|S1, -, P0, PL, T0, T0|S0, Q, -


# ---- the published ways ---------------------------------------------------------------
# Each is a bytes constant, one rule of 16 bytes a line (the layout above); way(...,
# two_pair) puts another two-pair rule into the Gold Star way.
#
# GOLD STAR: Gold Star School of Gaming, Las Vegas, "House Ways"
# (http://www.goldstarschool.com/house-ways/): "the standard house ways we teach at our
# dealing school for setting hands in Pai Gow Poker ... Most casino house ways are
# standard, but they vary their 'two pair' rule, and it typically trumps other rules."
# The bullet each rule encodes is quoted in docs/games.md (House ways) and cited by the
# vectors (tests/vectors/houseway-*.vec). The readings pitboss chose where the page is
# silent (three of a kind with a straight: the straights bullet; "pair/ace" only when
# the straight cannot be kept with the ace in front) are those of issue 7, unchanged.
_GOLD_STAR = const(
    # five aces: "If you have five aces and a pair of kings, then play five aces in back
    # and kings in front." / "Split aces and play three aces in back and two in front."
    b"\x00\x14\x03\x0b\x0b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02"
    b"\x00\x13\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x07"
    # "Four of a kind and three of a kind: Play pair in front from the three of a kind."
    b"\x01\x12\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x04"
    # "Four of a kind and a pair: Play pair in front."
    b"\x02\x11\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02"
    # "Four of a kind ... 2-6: Always keep together. 7-10: Split unless an ace or better
    # can be played in front. J-A: Always split."
    b"\x03\x0e\x01\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00"
    b"\x03\x0f\x01\x05\x08\x05\x0c\x0c\x00\x00\x00\x00\x00\x00\x01\x00"
    b"\x03\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x06"
    # "Three of a kind twice: Play lowest trips in the back and highest pair in front."
    b"\x04\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x04"
    # "Full house with three of a kind and two pairs: Play the highest pair in front."
    b"\x05\x0d\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02"
    # "Full house: ... If the full house includes a pair of twos and kickers are A-K,
    # keep full house together." / "Play the three of a kind in back and pair up front."
    b"\x06\x0c\x03\x00\x00\x05\x0c\x0c\x06\x0b\x0b\x00\x00\x00\x01\x00"
    b"\x06\x0b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02"
    # "Three pair: Play the highest pair in front."
    b"\x07\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02"
    # two pair: the casino's two-pair rule, here Trump Plaza's (see below; the
    # other Gold Star ways and issue 7's configurable rule replace these: _with())
    b"\x08\x03\x04\x00\x04\x03\x00\x04\x05\x0b\x0c\x00\x00\x00\x01\x00"
    b"\x08\x03\x04\x00\x04\x03\x05\x08\x05\x0b\x0c\x00\x00\x00\x01\x00"
    b"\x08\x03\x04\x00\x04\x03\x09\x0b\x05\x0c\x0c\x00\x00\x00\x01\x00"
    b"\x08\x03\x04\x05\x08\x03\x05\x08\x05\x0c\x0c\x00\x00\x00\x01\x00"
    b"\x08\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x03"
    # "Straights, flushes ...: With no pair: Play the way that will allow the highest
    # two cards in front" (applied to three of a kind too: issue 7's reading), then
    # "Three of a kind: Play three of a kind in back. If three aces, split them."
    b"\x09\x08\x07\x01\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00"
    b"\x09\x06\x02\x0c\x0c\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x05"
    b"\x09\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00"
    # "With one pair: Play pair in the front if a straight or flush can be maintained in
    # back. If pair is 10's+ and you have an ace, play pair/ace." then "One pair: Play
    # the pair in back and the next two highest cards in the front."
    b"\x0a\x09\x07\x01\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x02"
    b"\x0a\x0a\x07\x01\x01\x03\x08\x0b\x05\x0c\x0c\x00\x00\x00\x01\x00"
    b"\x0a\x08\x07\x01\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00"
    b"\x0a\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00"
    # "No pair: Play the highest card in the back and the next two highest in the front."
    b"\x0b\x08\x07\x01\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00"
    b"\x0b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01"
)

# Two-pair rules (class 8 only: _with() puts them in place of the Gold Star way's): a
# rule named two_pair_keep (3) puts the two highest singles in front, both pairs behind;
# two_pair_split (2) the lower pair in front; the first whose conditions hold applies,
# the last has none.
#
# TRUMP PLAZA (the pitboss default since issue 7): Wizard of Odds, "Pai Gow Poker",
# Appendix 2 (https://wizardofodds.com/games/pai-gow-poker/, "This is very typical. Most
# other casinos use this exact rule or something similar"): low 2-6, medium 7-10, high
# J-K. "Low pair and low pair: Split unless holding a king or better. Low and medium:
# Split unless holding a king or better. Low and high: Split unless holding an ace.
# Medium and medium: Split unless holding an ace. Medium and high: Always split. High and
# high: Always split. Pair of aces and any other pair: Always split." It is expressed as
# data by two_pair_rule() in paigow.py (the configurable "two_pair" of issue 7), which
# compiles to this table.
#
# FRIXO: "Pai Gow Poker House Way", frixo.com (https://www.frixo.com/sbook/articles/
# pai-gow-poker-house-way.asp): "Split Aces and any other pair between the two hands.
# Always split a pair of face cards and any pair of 6s or higher. Never split two pairs
# of 6s or lower. With any other combination of two pairs, split them when there is no
# Ace; when there is an Ace, set it in the 2-card Low Hand and keep the two pair in the
# 5-card High Hand." (The rest of that page's way is the Gold Star standard's in
# substance; its text was not complete in the copy we read, so only the two-pair rule
# is taken from it.)
_FRIXO_2P = const(
    b"\x08\x02\x03\x0c\x0c\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x03"
    b"\x08\x02\x03\x09\x0b\x04\x04\x0b\x00\x00\x00\x00\x00\x00\x01\x03"
    b"\x08\x03\x03\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00"
    b"\x08\x03\x05\x0c\x0c\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00"
    b"\x08\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x03"
)
# ICB: "Pai Gow Poker Rules", i-casinobonus.com (https://www.i-casinobonus.com/
# pai-gow-poker-rules/), 'House Way' Rules: "Two pair: Place to two pairs in the back.
# However, in the following situations they should be split: If one pair consists of at
# least sevens and there is no single ace. If you have a pair of jacks or better and 6's
# or better and a single ace. If you have a pair of aces and any other pair." (Only the
# two-pair rule is taken from it, as for frixo.)
_ICB_2P = const(
    b"\x08\x02\x03\x0c\x0c\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x03"
    b"\x08\x02\x03\x09\x0b\x04\x04\x0b\x05\x0c\x0c\x00\x00\x00\x01\x03"
    b"\x08\x02\x03\x05\x0b\x05\x00\x0b\x00\x00\x00\x00\x00\x00\x01\x03"
    b"\x08\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00"
)
# (Trump Plaza's rule is in _GOLD_STAR above: paigow_rules.two_pair_rule(paigow_rules.TRUMP_PLAZA)
# compiles to the same bytes; low+low and low+medium kept with a king or better,
# low+high and medium+medium with an ace; everything else split.)

# FOXWOODS: Wizard of Odds, "Foxwoods Pai Gow Poker House Way"
# (https://wizardofodds.com/games/pai-gow-poker/house-way/foxwoods/), bullet by bullet.
_FOXWOODS = const(
    # "Five Aces: Place pair of Aces in front, unless a pair of Kings can be played in
    # front."
    b"\x00\x14\x03\x0b\x0b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02"
    b"\x00\x13\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x07"
    # "Four of a Kind with a Pair (or Three of a Kind): Play the pair in front."
    b"\x01\x12\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x04"
    b"\x02\x11\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02"
    # "Aces, Kings, Queens, Jacks: Always split. 10s, 9s, 8s, 7s: Play four of a kind in
    # back if you can; put at least a King up front; otherwise split. 6s and below: never
    # split."
    b"\x03\x10\x01\x09\x0c\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x06"
    b"\x03\x15\x01\x05\x08\x05\x0b\x0c\x00\x00\x00\x00\x00\x00\x01\x00"
    b"\x03\x10\x01\x05\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x06"
    b"\x03\x0e\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00"
    # "Two Sets: Place pair from higher set in front."
    b"\x04\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x04"
    # "Full House: Put highest permissible pair in front." (trips + two pairs: the
    # higher pair; the pair of the trips is never permissible: it fouls, see check())
    b"\x05\x0d\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02"
    b"\x06\x0b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02"
    # "Three Pair: Place high pair in front."
    b"\x07\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02"
    # "Two Pair: Big Pair is Aces, Kings, Queens, Jacks: Place small pair in front. Big
    # Pair is 10s, 9s, 8s, 7s: Place both pair in back if you can: Put an Ace in front,
    # otherwise split. Big Pair is 6s, 5s, 4s, 3s: Place both pair in back if you can:
    # place a King or higher in front: otherwise split." "With Two Pair: Play according
    # to two-pair strategy." (so no straight rule in this class)
    b"\x08\x02\x03\x09\x0c\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x03"
    b"\x08\x03\x03\x05\x08\x05\x0c\x0c\x00\x00\x00\x00\x00\x00\x01\x00"
    b"\x08\x03\x03\x01\x04\x05\x0b\x0c\x00\x00\x00\x00\x00\x00\x01\x00"
    b"\x08\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x03"
    # "Straight, Flush, Straight Flush: ... With Three of a Kind: Place complete hand in
    # back, pair in front." then "Three of a Kind: Aces: Place an Ace and the next
    # highest card in front. Kings and below: Place three of a kind in back, two highest
    # cards in front."
    b"\x09\x16\x07\x01\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x04"
    b"\x09\x08\x07\x01\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00"
    b"\x09\x06\x02\x0c\x0c\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x05"
    b"\x09\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00"
    # "With One Pair: Place highest possible two cards (pair or no pair) in front that
    # will leave any complete hand in back. Exception: With an Ace and a pair of Kings,
    # Queens, Jacks or 10s, play the Ace in front and pair in back if front hand can be
    # improved." then "One Pair: Pair in back, highest two other cards in front."
    b"\x0a\x0a\x07\x01\x02\x03\x08\x0b\x05\x0c\x0c\x00\x00\x00\x04\x00"
    b"\x0a\x08\x07\x01\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00"
    b"\x0a\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00"
    # "With No Pair: Place the two highest cards in front that will leave any complete
    # hand in back." then "No Pair: Place the second and third highest cards in front."
    b"\x0b\x08\x07\x01\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00"
    b"\x0b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01"
)

# The published ways by name (their sources: the comments above, docs/games.md and
# host_tools/houseway_check.SOURCES; the text stays off the chip's heap).
_WAYS = const(("gold-star", "foxwoods", "gold-star-frixo", "gold-star-icb"))


# The keys of a way given as data (a const tuple: its strings are not interned names)
_KEYS = const(("name", "rules", "source", "base"))


def way(v, two_pair=None):
    """A house way, checked, as bytes: v is a published way's name (_WAYS; None: the
    default, gold-star), or a
    casino's own as data {"name": str, "rules": [[16 small ints], ...]} (layout above),
    optionally with "base": a published way whose rules it keeps for every class the
    given rules do not mention (an authenticated command is at most 512 characters: a
    whole way of ~25 rules does not fit one, a casino's own two-pair rule on a published
    way does). two_pair (with "gold-star" only): another two-pair rule for the Gold Star
    way, as (conditions, keep) pairs: keep True puts both pairs behind and the two
    highest singles in front, False splits (the lower pair in front); the first whose
    conditions hold applies, the last has none (paigow_rules.two_pair_rule builds them)."""
    ways = _WAYS
    if v is None:  # the default
        v = ways[0]
    if isinstance(v, str):
        if two_pair is not None:
            if v != ways[0]:
                raise Refused("bad_config", "two_pair applies to the gold-star way only, "
                              "not %r (a way's two-pair rule is part of its table)" % (v,))
            b = bytearray()
            for conds, keep in two_pair:
                r = [8, 3 if keep else 2]
                for i in range(4):
                    r += conds[i] if i < len(conds) else (0, 0, 0)
                b.extend(bytes(r + [1, 0 if keep else 3]))
            a, name = _GOLD_STAR, v
        elif v == ways[0]:
            return check(_GOLD_STAR, v)
        elif v == ways[1]:
            return check(_FOXWOODS, v)
        elif v == ways[2]:
            a, b, name = _GOLD_STAR, _FRIXO_2P, v
        elif v == ways[3]:
            a, b, name = _GOLD_STAR, _ICB_2P, v
        else:
            raise Refused("bad_config", "unknown house way %r (ways: %s, or a table: "
                          "{'name': ..., 'rules': [[16 ints], ...]})"
                          % (v, ", ".join(ways)))
    else:  # a casino's own way as data
        keys = _KEYS
        if not isinstance(v, dict) or not isinstance(v.get(keys[1]), (list, tuple)):
            raise Refused("bad_config", "house way must be one of %s or a dict with 'name' "
                          "and 'rules' (lists of 16 ints), got %r" % (", ".join(ways), v))
        name = v.get("name", "way")
        if not isinstance(name, str):
            raise Refused("bad_config", "house way name must be a string, got %r" % (name,))
        for k in v:
            if k not in keys:
                raise Refused("bad_config", "house way %s has no setting %r" % (name, k))
        out = bytearray()
        for i, r in enumerate(v[keys[1]]):
            if not isinstance(r, (list, tuple)) or len(r) != _SIZE:
                raise Refused("bad_config", "house way %s rule %d must be 16 ints, got %r"
                              % (name, i + 1, r))
            for x in r:
                if type(x) is not int or not 0 <= x <= 255:
                    raise Refused("bad_config", "house way %s rule %d: %r is not an int in "
                                  "0..255" % (name, i + 1, x))
            out.extend(bytes(r))
        base = v.get(keys[3])
        if base is not None:
            if not isinstance(base, str) or base not in ways:
                raise Refused("bad_config", "house way %s: base must be a published way's "
                              "name (%s), got %r" % (name, ", ".join(ways), base))
            a, b = way(base), bytes(out)
        else:
            a, b = None, bytes(out)
    if a is None:
        return check(b, name)
    # Way a with its rules for the classes b holds rules for replaced by b's (where the
    # first of them stood): a way's order matters only within a class.
    classes = set(b[i] for i in range(0, len(b), _SIZE))
    out = bytearray()
    done = False
    for i in range(0, len(a), _SIZE):
        if a[i] in classes:
            if not done:
                out.extend(b)
                done = True
        else:
            out.extend(a[i:i + _SIZE])
    if not done:
        out.extend(b)
    return check(bytes(out), name)


def check(w, name="way"):
    """Refuse (bad_config, naming the class) a way that can foul, or that leaves a hand of
    some class without a setting; returns w. The same check on the host and the board."""
    if not isinstance(w, (bytes, bytearray)) or not w or len(w) % _SIZE:
        raise Refused("bad_config", "house way %s: rules must be 16 bytes each" % name)
    last = bytearray(b"\xff" * _NCLASS)  # each class's last rule
    for i in range(0, len(w), _SIZE):
        n = i // _SIZE + 1
        cls = w[i]
        if cls >= _NCLASS:
            raise Refused("bad_config", "house way %s rule %d: no hand class %d (classes "
                          "0..11: %s)" % (name, n, cls, ", ".join(_CLASSES)))
        cname = _CLASSES[cls]
        if w[i + 1] >= _NNAMES:
            raise Refused("bad_config", "house way %s rule %d (%s): no rule name %d"
                          % (name, n, cname, w[i + 1]))
        named = 0
        for j in range(2, 14, 3):
            s, lo, hi = w[i + j], w[i + j + 1], w[i + j + 2]
            if s >= _NSUBJ or lo > hi or hi > (2 if s == 7 else 12):
                raise Refused("bad_config", "house way %s rule %d (%s): bad condition "
                              "%d %d..%d" % (name, n, cname, s, lo, hi))
            if s:
                named |= 1 << s
        act, pick = w[i + 14], w[i + 15]
        if not 1 <= act <= 4 or pick >= _NPICK:
            raise Refused("bad_config", "house way %s rule %d (%s): bad action %d or "
                          "pick %d" % (name, n, cname, act, pick))
        if act != 3:  # SF_BEST names no ranks
            how = _PICKABLE[cls * _NPICK + pick]
            if how == 2 and named & _NEEDS[pick] != _NEEDS[pick]:
                raise Refused("bad_config", "house way %s leaves class %s without a "
                              "setting: rule %d puts pick %d in front, which a %s hand "
                              "may not hold" % (name, cname, n, pick, cname))
            if how == 1 and act != 2:
                raise Refused("bad_config", "house way %s can foul in class %s: rule %d "
                              "puts pick %d in front" % (name, cname, n, pick))
            if act == 2 and pick not in (2, 3, 4, 6, 7):
                raise Refused("bad_config", "house way %s rule %d (%s): sf_pair needs a "
                              "pair pick (2, 3, 4, 6, 7), got %d" % (name, n, cname, pick))
        last[cls] = i // _SIZE
    for c in range(_NCLASS):
        if last[c] == 255:
            raise Refused("bad_config", "house way %s leaves class %s without a setting "
                          "(no rule)" % (name, _CLASSES[c]))
        i = last[c] * _SIZE
        if w[i + 14] != 1 or w[i + 2] or w[i + 5] or w[i + 8] or w[i + 11]:
            raise Refused("bad_config", "house way %s leaves class %s without a setting "
                          "for some hands (its last rule must be an unconditional "
                          "'front')" % (name, _CLASSES[c]))
    return w
