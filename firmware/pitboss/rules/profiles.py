# Rule profiles: everything one jurisdiction's ranking text decides, as data.
#
# A game is a ladder of hand kinds (lowest first), a name for each rung, where
# A-2-3-4-5 sits, whether a joker plays, and a few flags for the All-Six bonus. The
# evaluator has one code path; adding a jurisdiction means adding a Profile below.
from array import array

from pitboss.compat import const
from pitboss.errors import Refused

# Hand kinds: internal codes, never shown to users (profiles name them).
HIGH = const(0)
PAIR = const(1)
TWO_PAIR = const(2)
TRIPS = const(3)
STRAIGHT = const(4)
FLUSH = const(5)
FULL = const(6)
QUADS = const(7)
SF = const(8)
ROYAL = const(9)
FIVE_ACES = const(10)
SIX_ROYAL = const(11)
NO_QUALIFY = const(12)
_KINDS = const(13)

KIND_NAMES = (
    "high_card", "one_pair", "two_pair", "three_of_a_kind", "straight", "flush",
    "full_house", "four_of_a_kind", "straight_flush", "royal_flush", "five_aces",
    "six_card_royal_flush", "no_qualifying_hand",
)

NOT_IN_GAME = const(255)
RANK_MASK = const(0x1FFF)  # one bit per rank, deuce = bit 0, ace = bit 12
ACE_BIT = const(0x1000)

# Ace-low straights: the texts disagree on where A-2-3-4-5 (A-2-3) sits. Natural
# straights compare by their rank mask (a higher window is a bigger number), so a
# profile places the wheel by giving it a value on the same scale:
WHEEL_LOWEST = const(0)  # NJ (c)2,(c)6, (d)2,(d)4; PA (a),(b)(2),(b)(4); QC 2°,6°; PR D
# PR B.7: A-2-3-4-5 is the second-highest straight: its own mask 0x100F already lies
# between K-Q-J-10-9 (0x0F80) and A-K-Q-J-10 (0x1F00).
WHEEL_SECOND = const(0x100F)
# PR B.3: A-2-3-4-5 suited is the highest straight flush (the royal is its own kind).
WHEEL_TOP = const(0x1FFF)


def _windows(h):
    """Masks of h consecutive ranks, highest first (no wrap-around: NJ (c)2)."""
    w = (1 << h) - 1
    return array("H", [w << lo for lo in range(13 - h, -1, -1)])


class Profile:
    def __init__(self, gid, size, hand, deck, source, ladder, names=None,
                 wheel_straight=WHEEL_LOWEST, wheel_sf=WHEEL_LOWEST, floor=False, t5=None,
                 t2=None):
        self.id = gid
        self.size = size  # cards that make up one hand of this game
        self.hand = hand  # cards in the poker hand ranked (5 of the All-Six's 6)
        self.deck = deck
        self.joker = deck == 53
        self.source = source
        self.wheel_straight = wheel_straight
        self.wheel_sf = wheel_sf
        self.floor = floor  # kinds below the ladder's second rung all rank as rung 0
        self.straights = hand >= 3
        self.flushes = hand >= 3
        self.six_royal = SIX_ROYAL in ladder
        self.five_aces = FIVE_ACES in ladder
        if self.straights:
            self.windows = _windows(hand)
            self.top_window = self.windows[0]
            self.wheel = ACE_BIT | ((1 << (hand - 1)) - 1)
        # order[kind] = rung on this game's ladder; a score is rung << 26 | tie-break.
        order = bytearray(_KINDS)
        for k in range(_KINDS):
            order[k] = NOT_IN_GAME
        for pos, kind in enumerate(ladder):
            order[kind] = pos
        if floor:
            for kind in (HIGH, PAIR, TWO_PAIR):
                order[kind] = 0
        self.order = bytes(order)
        self.ladder = bytes(ladder)
        names = names or {}
        # highest first, as users read a paytable
        self.categories = tuple(names.get(k, KIND_NAMES[k]) for k in reversed(ladder))
        self._names = tuple(names.get(k, KIND_NAMES[k]) for k in ladder)
        # The five-card fast path's table (pitboss.rules.evaluator): None until the game's
        # first hand loads it from its generated module (t5: pitboss/<t5>.py, named by
        # the table's content, shared by games whose rules give the same table;
        # host_tools/fast/gentables.py checks the name), an empty array if it has none.
        self.t5 = t5
        self.t2 = t2  # the same for a two-card game (Pai Gow's low hand)
        self.fast = None

    def kind_of(self, score):
        return self.ladder[score >> 26]

    def category(self, score):
        return self._names[score >> 26]

    def __repr__(self):
        return "<Profile %s>" % self.id


_FIVE = (HIGH, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL, QUADS, SF, ROYAL)
# NJ (d), PA (b): in three-card hands a straight outranks a flush and trips outrank both.
_THREE = (HIGH, PAIR, FLUSH, STRAIGHT, TRIPS, SF, ROYAL)
_PR_HIGH = _FIVE + (FIVE_ACES,)  # PR B.1: five aces above the royal flush
_NJ5 = "new-jersey-poker-ranks.txt (b), (c), (e)"
_PR = "puerto-rico-pai-gow-poker-ranks.es.txt A, B, C, E"
# The five-card fast-path tables (generated: host_tools/fast/gentables.py). Five aces need the
# joker, which the fast path hands to the core, so below it these ladders are _FIVE's:
_T5_LOW = "t5_30a28e9b"  # the wheel the lowest straight (NJ (c)2, QC, PR D's option)
_T5_PR = "t5_e7fb9024"  # the wheel the second straight, top straight flush (PR B.3, B.7)

GAMES = ("nj-5card", "nj-3card", "qc-caribbean", "pa-three-card-prime", "pa-all-six",
         "pr-pai-gow", "pr-pai-gow-a5-low", "pr-pai-gow-low")
# The profiles built so far, by id. A profile is built on its game's first use, not at
# import: eight of them held ~5.4 KB of a Pico's heap for good (measured on the emulated
# Pico, 2026-12-04), and a table plays one game (one or two profiles).
_made = {}


def _make(gid):
    if gid == "nj-5card":
        return Profile(gid, 5, 5, 52, _NJ5, _FIVE, t5=_T5_LOW)
    if gid == "nj-3card":
        return Profile(gid, 3, 3, 52, "new-jersey-poker-ranks.txt (b), (d), (e)", _THREE)
    if gid == "qc-caribbean":
        return Profile(gid, 5, 5, 52, "quebec-caribbean-poker-ranks.fr.txt art. 67.11",
                       _FIVE, t5=_T5_LOW)
    if gid == "pa-three-card-prime":
        return Profile(gid, 3, 3, 52, "pennsylvania-three-card-prime-ranks.txt (a)-(c)",
                       _THREE, names={ROYAL: "mini_royal"})  # PA (b)(1)
    if gid == "pa-all-six":
        # PA (d): six cards, the best five of them, three of a kind the lowest paying rank.
        return Profile(gid, 6, 5, 52, "pennsylvania-three-card-prime-ranks.txt (a), (d)",
                       (NO_QUALIFY, TRIPS, STRAIGHT, FLUSH, FULL, QUADS, SF, ROYAL,
                        SIX_ROYAL), floor=True)
    if gid == "pr-pai-gow":
        return Profile(gid, 5, 5, 53, _PR, _PR_HIGH, wheel_straight=WHEEL_SECOND,
                       wheel_sf=WHEEL_TOP, t5=_T5_PR)  # PR B.3, B.7
    if gid == "pr-pai-gow-a5-low":
        return Profile(gid, 5, 5, 53, _PR + "; licensee option D", _PR_HIGH, t5=_T5_LOW)
    # PR B.10: the low hand can only be a pair or not; A: the joker is an ace in it.
    return Profile(gid, 2, 2, 53, _PR + " (two-card low hand)", (HIGH, PAIR),
                   t2="t2_743d1441")  # its two-card table (gentables.two_table)





def release(keep=()):
    """Forget every profile not in `keep` (ids), with its five-card fast-path table: the
    game's next hand builds it again and the evaluator loads its table again
    (pitboss.games.release, when the configured game changes)."""
    for gid in list(_made):
        if gid not in keep:
            del _made[gid]


def made():
    """The profiles built so far (the evaluator shares a table among them)."""
    return _made.values()


def peek(gid):
    """The profile of `gid` (one of GAMES) without keeping it: what the `games` verb
    lists of every game."""
    return _made.get(gid) or _make(gid)


def get(gid):
    """The profile of game `gid`, built on its first use."""
    p = _made.get(gid) if type(gid) is str else None
    if p is None:
        if gid not in GAMES:
            raise Refused("unknown_game", "unknown game %r (games: %s)"
                          % (gid, ", ".join(GAMES)))
        p = _made[gid] = _make(gid)
    return p
