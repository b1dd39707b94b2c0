"""Reference census tables, derived independently of the pitboss evaluator.

Every table in tests/census/*.json (hands per category over every hand of a
game's deck) is re-derived here in at least two independent ways, and the
module asserts each derivation equals the committed JSON:

* closed form: counting formulas written with math.comb, case by case;
* grouped enumeration: every multiset of ranks is visited once, and its suit
  assignments are counted combinatorially (how many put >= k cards in one
  suit, and which ranks those are), so C(52,6) = 20,358,520 six-card hands
  take a few thousand rank patterns, not 20 million iterations;
* where it is cheap, a direct card-by-card enumeration as a third check
  (three-card games, the joker hands of Pai Gow, the two-card low hand).

Published tables stored in the JSON files ("published" blocks) are compared
with the derivations too; the 53-card (joker) rules are additionally checked
against Alspach's published seven-card joker table (Pai Gow's seven cards).

Nothing here imports pitboss.  Rank numbering: 0..12 = deuce..ace.
Rule references are to the regulation texts named in README.md ("Games"):
NJ = N.J.A.C. poker ranks (a)-(e), PA = 58 Pa. Code
Three Card Prime (a)-(d), PR = Puerto Rico Pai Gow Poker A-E, QC = Quebec
Règlement sur les jeux de casino art. 67.11.
"""

import itertools
import json
import math
import os
from collections import Counter

import pytest

CENSUS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "census")

NRANKS = 13
ACE = 12
KING, QUEEN, JACK, TEN, NINE = 11, 10, 9, 8, 7
comb = math.comb


def load(game):
    with open(os.path.join(CENSUS_DIR, game + ".json"), encoding="utf-8") as f:
        return json.load(f)


# ---------------------------------------------------------------------------
# Straights.
# Five cards: A-K-Q-J-10 highest, A-2-3-4-5 lowest, no wrap-around
# (NJ (b), (c)2, (c)6; QC 67.11 2° and 6° "un as ne puisse être combiné avec
# une autre série"; PR A "un AS podrá ser utilizado ... con un dos, tres,
# cuatro y cinco", B.3, B.7; PA (a) for the All-Six Bonus (d)(3), (d)(7)).
# Where A-2-3-4-5 *ranks* (PR B.3/B.7 vs D) changes the order, never a count.
WINDOWS5 = [frozenset([ACE, 0, 1, 2, 3])] + [
    frozenset(range(lo, lo + 5)) for lo in range(0, 9)
]
ROYAL5 = frozenset([TEN, JACK, QUEEN, KING, ACE])
SIX_CARD_ROYAL = frozenset([NINE, TEN, JACK, QUEEN, KING, ACE])  # PA (d)(1)
# Three cards: A-K-Q highest, A-2-3 lowest, never K-A-2
# (NJ (b), (d)2, (d)4 "an ace may not be combined with a king and two";
# PA (a) "may not be combined with any other sequence ... king, ace and 2").
WINDOWS3 = [frozenset([ACE, 0, 1])] + [
    frozenset(range(lo, lo + 3)) for lo in range(0, 11)
]
MINI_ROYAL3 = frozenset([QUEEN, KING, ACE])

assert len(WINDOWS5) == 10 and len(set(WINDOWS5)) == 10 and ROYAL5 in WINDOWS5
assert len(WINDOWS3) == 12 and frozenset([KING, ACE, 0]) not in WINDOWS3


# ---------------------------------------------------------------------------
# Category orders (highest first), as in the rule texts.
FIVE_CARD_ORDER = [  # NJ (c)1-9 (+ high card, NJ (e)); QC 67.11 1°-9°
    "royal_flush", "straight_flush", "four_of_a_kind", "full_house", "flush",
    "straight", "three_of_a_kind", "two_pair", "one_pair", "high_card",
]
PAI_GOW_ORDER = ["five_aces"] + FIVE_CARD_ORDER  # PR B.1-B.10 (+ E)
NJ3_ORDER = [  # NJ (d)1-6: straight above flush, trips above straight
    "royal_flush", "straight_flush", "three_of_a_kind", "straight", "flush",
    "one_pair", "high_card",
]
PA3_ORDER = ["mini_royal"] + NJ3_ORDER[1:]  # PA (b)(1)-(6)
ALL_SIX_ORDER = [  # PA (d)(1)-(8); below three of a kind nothing qualifies
    "six_card_royal_flush", "royal_flush", "straight_flush", "four_of_a_kind",
    "full_house", "flush", "straight", "three_of_a_kind", "no_qualifying_hand",
]
LOW2_ORDER = ["one_pair", "high_card"]  # PR B.10 ("mano Menor"), E

STANDARD_RANK = {c: i for i, c in enumerate(PAI_GOW_ORDER)}  # lower = better


# ---------------------------------------------------------------------------
# Rank multisets and suit counting.

def rank_multisets(size):
    """Yield counts (tuple of 13) for every multiset of `size` ranks, each
    rank used at most four times (one deck, NJ (a), PR: 52 cards + joker)."""
    for combo in itertools.combinations_with_replacement(range(NRANKS), size):
        counts = [0] * NRANKS
        for r in combo:
            counts[r] += 1
        if max(counts) <= 4:
            yield tuple(counts)


def suit_patterns(counts, flush_min):
    """Split the suit assignments of a rank multiset.

    Returns (total, [(S, ways), ...]) where `total` = prod C(4, c_r) is the
    number of distinct card sets with these ranks, and each S is a set of
    distinct ranks that one suit holds, |S| >= flush_min, with `ways` the
    number of card sets in which some suit holds exactly the ranks S.  Suit
    s holding ranks S: a rank in S puts one card in s and its other c-1 cards
    in the 3 other suits; a rank outside S puts all c cards outside s.
    Requires 2 * flush_min > cards, so at most one suit can qualify and the
    cases are disjoint.
    """
    ncards = sum(counts)
    assert 2 * flush_min > ncards
    total = 1
    for c in counts:
        total *= comb(4, c)
    present = [r for r in range(NRANKS) if counts[r]]
    out = []
    for k in range(flush_min, len(present) + 1):
        for S in itertools.combinations(present, k):
            Sset = frozenset(S)
            ways = 4
            for r in present:
                ways *= comb(3, counts[r] - 1) if r in Sset else comb(3, counts[r])
            if ways:
                out.append((Sset, ways))
    return total, out


def grouped_census(ncards, flush_min, classify):
    """Census of `ncards` real cards: classify(counts, S) with S = None for
    card sets where no suit holds flush_min cards."""
    tally = Counter()
    for counts in rank_multisets(ncards):
        total, flushes = suit_patterns(counts, flush_min)
        rest = total
        for S, ways in flushes:
            tally[classify(counts, S)] += ways
            rest -= ways
        if rest:
            tally[classify(counts, None)] += rest
    return tally


# ---------------------------------------------------------------------------
# Best-five-card category, with or without the Pai Gow joker.
#
# Joker (PR A, B.1, C): it is an ace ("se utilizará como un AS"), or any card
# that completes a straight, flush, straight flush or royal flush.  So it
# never pairs another rank: joker+K+K is a pair of kings (ace kicker), joker+
# A is a pair of aces, joker+A+A+A is four aces, joker+A+A+K+K is aces full,
# joker+K+K+K+A is kings full of aces, four aces + joker are five aces.
# A hand takes its best reading (PR E compares hands; the player uses the
# cards to his best advantage).

def rank_family(counts, joker):
    """Best category from matching ranks (joker read as an ace)."""
    c = list(counts)
    if joker:
        c[ACE] += 1
    if c[ACE] == 5:
        return "five_aces"  # PR B.1
    groups = sorted((x for x in c if x), reverse=True)
    if groups[0] >= 4:
        return "four_of_a_kind"
    if groups[0] == 3 and len(groups) > 1 and groups[1] >= 2:
        return "full_house"  # includes 3+3 among six or seven cards
    if groups[0] == 3:
        return "three_of_a_kind"
    if groups[0] == 2 and len(groups) > 1 and groups[1] == 2:
        return "two_pair"
    if groups[0] == 2:
        return "one_pair"
    return "high_card"


def best5_category(counts, S, joker=False):
    """Best five-card category among the cards (5, 6 or 7 of them).

    counts: ranks of the real cards; S: ranks held by the one suit with at
    least 5 - joker cards, or None; joker: the Pai Gow joker is present.
    """
    need = 5 - (1 if joker else 0)  # real cards a five-card pattern needs
    best = [rank_family(counts, joker)]
    present = frozenset(r for r in range(NRANKS) if counts[r])
    if any(len(w & present) >= need for w in WINDOWS5):
        best.append("straight")
    if S is not None:
        assert len(S) >= need
        best.append("flush")
        sf = [w for w in WINDOWS5 if len(w & S) >= need]
        if sf:
            best.append("royal_flush" if ROYAL5 in sf else "straight_flush")
    return min(best, key=STANDARD_RANK.__getitem__)


def all_six_category(counts, S):
    """PA (d): six cards; the six-card royal, else the best five-card hand,
    counted only from three of a kind up."""
    if S is not None and S == SIX_CARD_ROYAL:
        return "six_card_royal_flush"  # PA (d)(1)
    cat = best5_category(counts, S)
    if STANDARD_RANK[cat] > STANDARD_RANK["three_of_a_kind"]:
        return "no_qualifying_hand"  # below PA (d)(8)
    return cat  # (d)(2) royal: A-K-Q-J-10 suited among the six, not (d)(1)


def three_card_category(counts, S, top_name):
    """NJ (d) / PA (b): three cards."""
    present = frozenset(r for r in range(NRANKS) if counts[r])
    straight = len(present) == 3 and present in WINDOWS3
    if S is not None and straight:
        return top_name if present == MINI_ROYAL3 else "straight_flush"
    groups = sorted((x for x in counts if x), reverse=True)
    if groups[0] == 3:
        return "three_of_a_kind"
    if straight:
        return "straight"  # PA (b)(4): "of more than one suit"
    if S is not None:
        return "flush"
    if groups[0] == 2:
        return "one_pair"
    return "high_card"


# ---------------------------------------------------------------------------
# Derivations, game by game.

def five_card_closed_form():
    """Textbook counts, NJ (c) / QC 67.11 / PR B (no joker)."""
    nonflush_suits = 4 ** 5 - 4
    high_rank_sets = comb(13, 5) - 10  # five distinct ranks, not a straight
    return {
        "royal_flush": 4,
        "straight_flush": 9 * 4,
        "four_of_a_kind": 13 * 48,
        "full_house": 13 * comb(4, 3) * 12 * comb(4, 2),
        "flush": 4 * high_rank_sets,
        "straight": 10 * nonflush_suits,
        "three_of_a_kind": 13 * comb(4, 3) * comb(12, 2) * 4 * 4,
        "two_pair": comb(13, 2) * comb(4, 2) ** 2 * 11 * 4,
        "one_pair": 13 * comb(4, 2) * comb(12, 3) * 4 ** 3,
        "high_card": high_rank_sets * nonflush_suits,
    }


def five_card_grouped():
    return grouped_census(5, 5, lambda c, S: best5_category(c, S))


def five_card_distinct_closed_form():
    """Distinct hand values (NJ (e): equal ranks tie, suits never break ties;
    within a category its own rank order comes first, NJ (c))."""
    nonstraight_sets = comb(13, 5) - 10
    return (10  # straight flushes incl. the royal
            + 13 * 12  # four of a kind + kicker
            + 13 * 12  # full house
            + nonstraight_sets  # flush
            + 10  # straight
            + 13 * comb(12, 2)  # trips + two kickers
            + comb(13, 2) * 11  # two pair + kicker
            + 13 * comb(12, 3)  # pair + three kickers
            + nonstraight_sets)  # high card


def five_card_value_keys(counts, S, joker=False):
    """Tie-class of a hand: (category, ranks as played).  Two hands tie
    exactly when these are equal (NJ (e), PA (c), PR E; suits never count)."""
    cat = best5_category(counts, S, joker)
    present = frozenset(r for r in range(NRANKS) if counts[r])
    if cat in ("straight", "straight_flush", "royal_flush"):
        need = 5 - (1 if joker else 0)
        pool = S if cat != "straight" else present
        # any window the hand can complete; the hand takes one of them (which
        # one only reorders within the category, the set of values is what
        # is counted)
        wins = sorted(sorted(w) for w in WINDOWS5 if len(w & pool) >= need)
        return (cat, tuple(wins[-1]))
    if cat == "flush":
        ranks = set(S)
        if joker and len(ranks) == 4:
            # pitboss reading (README): the highest card of that suit missing
            ranks.add(max(r for r in range(NRANKS) if r not in ranks))
        return (cat, tuple(sorted(ranks, reverse=True)))
    c = list(counts)
    if joker:
        c[ACE] += 1
    if cat == "five_aces":
        return (cat, ())
    played = sorted((r for r in range(NRANKS) for _ in range(c[r])),
                    key=lambda r: (c[r], r), reverse=True)
    return (cat, tuple(played))


def five_card_distinct_enumerated(with_joker=False):
    keys = set()
    for joker in ([False, True] if with_joker else [False]):
        n = 4 if joker else 5
        for counts in rank_multisets(n):
            total, flushes = suit_patterns(counts, n)
            if total > sum(ways for _, ways in flushes):  # some hand is no flush
                keys.add(five_card_value_keys(counts, None, joker))
            for S, _ in flushes:
                keys.add(five_card_value_keys(counts, S, joker))
    return len(keys)


def three_card_closed_form(top_name):
    return {
        top_name: 4,  # A-K-Q suited
        "straight_flush": 11 * 4,  # 12 windows incl. A-2-3, minus A-K-Q
        "three_of_a_kind": 13 * comb(4, 3),
        "straight": 12 * (4 ** 3 - 4),
        "flush": 4 * (comb(13, 3) - 12),
        "one_pair": 13 * comb(4, 2) * 12 * 4,
        "high_card": (comb(13, 3) - 12) * (4 ** 3 - 4),
    }


def three_card_grouped(top_name):
    return grouped_census(3, 3, lambda c, S: three_card_category(c, S, top_name))


def three_card_brute(top_name):
    """Card by card, written straight from NJ (d) / PA (b)."""
    tally = Counter()
    for hand in itertools.combinations(range(52), 3):
        ranks = sorted(c // 4 for c in hand)
        suits = {c % 4 for c in hand}
        rs = frozenset(ranks)
        straight = len(rs) == 3 and rs in WINDOWS3
        if len(suits) == 1 and straight:
            cat = top_name if rs == MINI_ROYAL3 else "straight_flush"
        elif len(rs) == 1:
            cat = "three_of_a_kind"
        elif straight:
            cat = "straight"
        elif len(suits) == 1:
            cat = "flush"
        elif len(rs) == 2:
            cat = "one_pair"
        else:
            cat = "high_card"
        tally[cat] += 1
    return tally


def three_card_distinct():
    keys = set()
    for counts in rank_multisets(3):
        _, flushes = suit_patterns(counts, 3)
        for S in [None] + [S for S, _ in flushes]:
            cat = three_card_category(counts, S, "top")
            keys.add((cat, counts))  # one value per category and rank multiset
    return len(keys)


def all_six_grouped():
    return grouped_census(6, 5, all_six_category)


def six_card_standard_grouped():
    """Best five of six with the ten standard categories (for comparing with
    the published six-card table)."""
    return grouped_census(6, 5, lambda c, S: best5_category(c, S))


def six_card_standard_closed_form():
    """Best five of six cards, case by case."""
    def contains_window(ranks):
        return any(w <= ranks for w in WINDOWS5)
    six_sets_with_straight = sum(
        1 for s in itertools.combinations(range(13), 6) if contains_window(frozenset(s)))
    assert six_sets_with_straight == 10 * comb(8, 1) - 9  # 9 six-card runs counted twice
    six_distinct_nonflush = 4 ** 6 - (4 + 6 * 4 * 3)  # no suit holding 5 or 6
    pair_plus4_nonflush = comb(4, 2) * 4 ** 4 - 4 * 3  # 5 distinct ranks + pair
    royal_any = 4 * 47  # A-K-Q-J-10 suited + any sixth card
    return {
        "royal_flush": royal_any,  # incl. the 4 six-card royals
        # best straight flush tops at 5..K: the sixth card is any but the
        # suited card one above (which would make a higher straight flush)
        "straight_flush": 9 * 4 * 46,
        "four_of_a_kind": 13 * comb(48, 2),
        "full_house": comb(13, 2) * 4 * 4 + 13 * 4 * 12 * 6 * 44,
        "flush": (4 * (comb(13, 6) - six_sets_with_straight)
                  + 4 * (comb(13, 5) - 10) * 39),
        "straight": (six_sets_with_straight * six_distinct_nonflush
                     + 10 * 5 * pair_plus4_nonflush),
        "three_of_a_kind": 13 * 4 * comb(12, 3) * 4 ** 3,
        "two_pair": comb(13, 3) * 6 ** 3 + comb(13, 2) * 36 * comb(11, 2) * 16,
        "one_pair": (13 * comb(12, 4) - 10 * 5) * pair_plus4_nonflush,
        "high_card": (comb(13, 6) - six_sets_with_straight) * six_distinct_nonflush,
    }


def all_six_from_standard(std):
    out = {
        "six_card_royal_flush": 4,
        "royal_flush": std["royal_flush"] - 4,
        "no_qualifying_hand": std["two_pair"] + std["one_pair"] + std["high_card"],
    }
    for c in ("straight_flush", "four_of_a_kind", "full_house", "flush",
              "straight", "three_of_a_kind"):
        out[c] = std[c]
    return out


def joker_four_closed_form():
    """The C(52,4) = 270,725 Pai Gow hands holding the joker (PR A, B, C)."""
    # 4-rank sets that lie inside some five-rank straight window: each window
    # has 5 such subsets; consecutive windows share one (9 pairs)
    in_window = 10 * 5 - 9
    royal_sets = 5  # inside A-K-Q-J-10: the royal reading wins
    ace_in_window = 4 + 4  # inside A-2-3-4-5 or A-K-Q-J-10
    unsuited4 = 4 ** 4 - 4
    return {
        "five_aces": 1,
        "royal_flush": royal_sets * 4,
        "straight_flush": (in_window - royal_sets) * 4,
        # joker+A+A+A+x: four aces; joker+X+X+X+X: quads, ace kicker
        "four_of_a_kind": 4 * 48 + 12,
        # joker+A+A+X+X: aces full; joker+X+X+X+A: X full of aces
        "full_house": comb(4, 2) * 12 * comb(4, 2) + 12 * 4 * 4,
        "flush": (comb(13, 4) - in_window) * 4,
        "straight": in_window * unsuited4,
        # joker+A+A+x+y: three aces; joker+X+X+X+y (y not an ace): trips X
        "three_of_a_kind": comb(4, 2) * comb(12, 2) * 16 + 12 * 4 * 11 * 4,
        # joker+A+X+X+y: aces and X's; joker+X+X+Y+Y: two pair, ace kicker
        "two_pair": 4 * 12 * comb(4, 2) * 11 * 4 + comb(12, 2) * 36,
        # joker+A+x+y+z (no straight, no flush): pair of aces;
        # joker+X+X+y+z (no ace): pair of X with an ace kicker
        "one_pair": ((comb(12, 3) - ace_in_window) * unsuited4
                     + 12 * comb(4, 2) * comb(11, 2) * 16),
        # joker+w+x+y+z, four different ranks below the ace, no straight, no
        # flush: the joker is the ace, so A-w-x-y-z, ace high (PR A)
        "high_card": (comb(12, 4) - (in_window - ace_in_window)) * unsuited4,
    }


def joker_four_grouped():
    return grouped_census(4, 4, lambda c, S: best5_category(c, S, joker=True))


def joker_four_brute():
    """Card by card over the 270,725 joker hands; the joker is tried as an
    ace (no suit) and as each of the 52 cards, the latter kept only when it
    makes a straight, flush, straight flush or royal flush (PR C)."""
    memo = {}

    def classify(ranks, suited):
        key = (ranks, suited)
        if key not in memo:
            real = Counter(ranks)
            cands = []
            as_ace = Counter(real)
            as_ace[ACE] += 1
            groups = sorted(as_ace.values(), reverse=True)
            if as_ace[ACE] == 5:
                cands.append("five_aces")
            elif groups[0] == 4:
                cands.append("four_of_a_kind")
            elif groups[:2] == [3, 2]:
                cands.append("full_house")
            elif groups[0] == 3:
                cands.append("three_of_a_kind")
            elif groups[:2] == [2, 2]:
                cands.append("two_pair")
            elif groups[0] == 2:
                cands.append("one_pair")
            else:
                cands.append("high_card")
            for r in range(NRANKS):  # the joker as a card of rank r ...
                five = frozenset(ranks) | {r}
                straight = len(five) == 5 and five in WINDOWS5
                for same_suit in (False, True):  # ... off-suit or in-suit
                    flush = suited and same_suit
                    if straight and flush:
                        cands.append("royal_flush" if five == ROYAL5 else "straight_flush")
                    elif flush:
                        cands.append("flush")
                    elif straight:
                        cands.append("straight")
            memo[key] = min(cands, key=STANDARD_RANK.__getitem__)
        return memo[key]

    tally = Counter()
    for hand in itertools.combinations(range(52), 4):
        ranks = tuple(sorted(c // 4 for c in hand))
        suited = len({c % 4 for c in hand}) == 1
        tally[classify(ranks, suited)] += 1
    return tally


def pai_gow_high_census(joker_part):
    out = Counter(five_card_closed_form())
    out.update(joker_part)
    return {c: out[c] for c in PAI_GOW_ORDER}


def seven_card_joker_grouped():
    """Best five of seven from 53 cards (Pai Gow's seven), for comparison
    with Alspach's published table: no-joker 7-card hands + joker + 6."""
    plain = grouped_census(7, 5, lambda c, S: best5_category(c, S))
    with_joker = grouped_census(6, 4, lambda c, S: best5_category(c, S, joker=True))
    return plain, with_joker


def low_hand_brute():
    """PR B.10, E: two-card low hand, 53 cards; the joker is an ace (A)."""
    JOKER = 52
    tally = Counter()
    for a, b in itertools.combinations(range(53), 2):
        ra = ACE if a == JOKER else a // 4
        rb = ACE if b == JOKER else b // 4
        tally["one_pair" if ra == rb else "high_card"] += 1
    return tally


def low_hand_closed_form():
    pairs = 13 * comb(4, 2) + 4  # + joker with one of the four aces
    return {"one_pair": pairs, "high_card": comb(53, 2) - pairs}


def low_hand_distinct():
    return 13 + comb(13, 2)  # pairs; two different ranks (joker = ace)


# ---------------------------------------------------------------------------
# The tests.

GAMES = {
    "nj-5card": (FIVE_CARD_ORDER, 5, 52),
    "qc-caribbean": (FIVE_CARD_ORDER, 5, 52),
    "nj-3card": (NJ3_ORDER, 3, 52),
    "pa-three-card-prime": (PA3_ORDER, 3, 52),
    "pa-all-six": (ALL_SIX_ORDER, 6, 52),
    "pr-pai-gow": (PAI_GOW_ORDER, 5, 53),
    "pr-pai-gow-a5-low": (PAI_GOW_ORDER, 5, 53),
    "pr-pai-gow-low": (LOW2_ORDER, 2, 53),
}


def as_table(tally, order):
    extra = set(tally) - set(order)
    assert not extra, f"categories outside the game: {extra}"
    return {c: tally.get(c, 0) for c in order}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_census_file_well_formed(game):
    order, size, deck = GAMES[game]
    data = load(game)
    assert data["game"] == game
    assert data["cards"] == size and data["deck"] == deck
    assert data["total"] == comb(deck, size)
    assert list(data["counts"]) == order  # every category, highest first
    assert sum(data["counts"].values()) == data["total"]
    assert isinstance(data["source"], str) and len(data["source"]) > 40


@pytest.mark.parametrize("game", ["nj-5card", "qc-caribbean"])
def test_five_card(game):
    data = load(game)
    closed = five_card_closed_form()
    assert closed == data["counts"]
    assert as_table(five_card_grouped(), FIVE_CARD_ORDER) == data["counts"]
    assert five_card_distinct_closed_form() == data["distinct_scores"] == 7462
    assert five_card_distinct_enumerated() == data["distinct_scores"]
    pub = data["published"]["counts"]
    assert {c: closed[c] for c in pub} == pub


@pytest.mark.parametrize("game,top", [("nj-3card", "royal_flush"),
                                      ("pa-three-card-prime", "mini_royal")])
def test_three_card(game, top):
    data = load(game)
    order = NJ3_ORDER if top == "royal_flush" else PA3_ORDER
    closed = three_card_closed_form(top)
    assert as_table(closed, order) == data["counts"]
    assert as_table(three_card_grouped(top), order) == data["counts"]
    assert as_table(three_card_brute(top), order) == data["counts"]
    sub = data["subcounts"]
    assert sub["straight_flush_including_ace_king_queen_suited"] == (
        data["counts"][top] + data["counts"]["straight_flush"]) == 48
    assert sub["ace_king_queen_suited"] == data["counts"][top] == 4
    assert three_card_distinct() == data["distinct_scores"]
    pub = data["published"]["counts"]
    merged = dict(data["counts"])
    merged["straight_flush_including_ace_king_queen_suited"] = 48
    assert {c: merged[c] for c in pub} == pub


def test_all_six_bonus():
    data = load("pa-all-six")
    std_closed = six_card_standard_closed_form()
    std_grouped = as_table(six_card_standard_grouped(), FIVE_CARD_ORDER)
    assert std_closed == std_grouped
    assert sum(std_closed.values()) == comb(52, 6)
    assert as_table(all_six_grouped(), ALL_SIX_ORDER) == data["counts"]
    assert as_table(all_six_from_standard(std_closed), ALL_SIX_ORDER) == data["counts"]
    assert data["subcounts"]["best_five_of_six"] == std_closed
    # the published table lists straight flushes with the royals folded in
    pub = data["published"]["counts"]
    merged = dict(std_closed)
    merged["straight_flush_including_royal"] = (
        std_closed["straight_flush"] + std_closed["royal_flush"])
    assert {c: merged[c] for c in pub} == pub


@pytest.mark.parametrize("game", ["pr-pai-gow", "pr-pai-gow-a5-low"])
def test_pai_gow_high(game):
    data = load(game)
    closed = joker_four_closed_form()
    grouped = as_table(joker_four_grouped(), PAI_GOW_ORDER)
    assert as_table(closed, PAI_GOW_ORDER) == grouped
    assert sum(grouped.values()) == comb(52, 4)
    assert grouped == as_table(data["subcounts"]["with_joker"], PAI_GOW_ORDER)
    no_joker = as_table(five_card_grouped(), FIVE_CARD_ORDER)
    assert no_joker == data["subcounts"]["without_joker"]
    assert pai_gow_high_census(grouped) == data["counts"]
    assert five_card_distinct_enumerated(with_joker=True) == data["distinct_scores"]


def test_pai_gow_joker_hands_card_by_card():
    data = load("pr-pai-gow")
    brute = as_table(joker_four_brute(), PAI_GOW_ORDER)
    assert brute == as_table(data["subcounts"]["with_joker"], PAI_GOW_ORDER)


def test_pai_gow_a5_low_same_counts():
    # PR D only moves A-2-3-4-5 within straight / straight flush
    a, b = load("pr-pai-gow"), load("pr-pai-gow-a5-low")
    assert a["counts"] == b["counts"] and a["distinct_scores"] == b["distinct_scores"]


def test_joker_rules_match_published_seven_card_table():
    """Same joker semantics, seven cards: Alspach's published 53-card table."""
    pub = load("pr-pai-gow")["crosscheck_seven_card"]
    plain, with_joker = seven_card_joker_grouped()
    assert sum(plain.values()) == comb(52, 7)
    assert sum(with_joker.values()) == comb(52, 6)
    total = Counter(plain)
    total.update(with_joker)
    derived = {
        "five_aces": total["five_aces"],
        "straight_flush_including_royal": total["royal_flush"] + total["straight_flush"],
    }
    for c in FIVE_CARD_ORDER[2:]:
        derived[c] = total[c]
    assert derived == pub["counts"]
    # Royal flushes among them: four royal cards of one suit + the joker, or
    # all five.  The publication's sub-split (26,124) is 8 lower; recorded in
    # the JSON as a known difference of the source, not reproduced.
    royal = 4 * comb(47, 2) + 4 * (comb(47, 1) + 5 * comb(47, 2))
    assert total["royal_flush"] == royal == pub["royal_flush_derived"]
    assert pub["royal_flush_published"] == royal - 8
    std7 = {c: plain[c] for c in FIVE_CARD_ORDER[2:]}
    std7["straight_flush_including_royal"] = plain["royal_flush"] + plain["straight_flush"]
    assert std7 == pub["no_joker_counts"]


def test_pai_gow_low_hand():
    data = load("pr-pai-gow-low")
    assert as_table(low_hand_brute(), LOW2_ORDER) == data["counts"]
    assert low_hand_closed_form() == data["counts"]
    assert low_hand_distinct() == data["distinct_scores"]
