"""Per-card keys whose sum keys a hand: the high part is its rank multiset (the joker a
fourteenth rank), the low bits count its cards of each suit. The one key scheme of the
host's rank tables: host_tools/fast/gentables.py keys the tables it builds with it, and
host_tools/fast/hostfast.py looks hands up by it.

Per-card key K[c] = W[rank] << 12 | 1 << 3 * suit (five cards: W5[rank] << 11 | 6 ** suit).
"""

# Rank weights whose sums over up to seven ranks (at most four alike) are unique
# (Kevin Suffecool's / SKPokerEval's sequence); the joker's weight lies above every
# sum of seven plain cards. Five cards use smaller weights (a greedy Sidon-type
# sequence) so that a five-card key stays below 2**30, CPython's one-digit ints.
W = (0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181, 7825760)
W5 = (0, 1, 5, 22, 94, 312, 992, 2422, 5624, 12522, 19998, 43258, 79415, 130285)
JOKER = 52


def _keys(w, suit, shift):
    return [w[c >> 2] << shift | suit[c & 3] for c in range(52)] + [w[13] << shift]


K = _keys(W, (1, 8, 64, 512), 12)  # low 12 bits: cards per suit, 3 bits each
# five cards: low 11 bits count suits in base 6; a flush is 5 (or 4 and the joker) of one
K5 = _keys(W5, (1, 6, 36, 216), 11)
FLUSH5 = frozenset(k * v for k in (4, 5) for v in (1, 6, 36, 216))


def rank_key(cards):
    """The multiset key of a hand: the sum of its cards' keys without the suit part
    (five cards or fewer: the five-card weights)."""
    if len(cards) <= 5:
        return sum(K5[c] for c in cards) >> 11
    return sum(K[c] for c in cards) >> 12
