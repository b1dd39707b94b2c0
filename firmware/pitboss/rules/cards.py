# Card notation and the canonical card ID used on the wire, by the shoe and in journals.
#
#   id = rank * 4 + suit      rank 0..12 = 2..A, suit 0..3 = s h d c;   joker = 52
#
# so `id >> 2` is the rank and `id & 3` the suit: the evaluator needs both per card and
# gets them with one shift or mask, no table. All IDs are small ints on every port.
from pitboss.compat import const
from pitboss.errors import Refused

JOKER = const(52)
DECK52 = const(52)
DECK53 = const(53)
RANKS = "23456789TJQKA"
SUITS = "shdc"


# The evaluator's and the parser's refusals: the one refusal type (pitboss.errors) under
# the name the evaluator API documents; `.code` is the stable code.
CardError = Refused


def parse(token):
    """'As', 'td', 'JK' -> card ID. Raises Refused('unknown_card') naming the token."""
    if isinstance(token, int):
        if 0 <= token <= JOKER:
            return token
        raise Refused("unknown_card", "unknown card id %r" % (token,))
    if len(token) == 2:
        t = token.upper()
        if t == "JK":
            return JOKER
        r = RANKS.find(t[0])
        s = SUITS.find(t[1].lower())
        if r >= 0 and s >= 0:
            return r * 4 + s
    raise Refused("unknown_card", "unknown card %r" % (token,))


def name(cid):
    if cid == JOKER:
        return "Jk"
    if not 0 <= cid < JOKER:
        raise Refused("unknown_card", "unknown card id %r" % (cid,))
    return RANKS[cid >> 2] + SUITS[cid & 3]


def parse_hand(cards):
    """A string of space/comma separated tokens, or a sequence of tokens or IDs."""
    if isinstance(cards, str):
        cards = cards.replace(",", " ").split()
    return [parse(t) for t in cards]


def names(ids):
    return [name(c) for c in ids]
