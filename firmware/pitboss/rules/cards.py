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


# Every card's name by id (RANKS[id >> 2] + SUITS[id & 3], then the joker's): string
# constants, so each is an interned name (a qstr) the compiler emits, in the image's flash
# on the release image. name() built each from two one-character strings instead: three
# strings made per name, each made string looked up among every interned name first
# (qstr_find_strn): the 49 names of a six-seat Pai Gow settlement took 17.9 ms on the
# emulated Pico with the app loaded; a dealt card's reply names one (issue 27).
NAMES = ("2s", "2h", "2d", "2c", "3s", "3h", "3d", "3c", "4s", "4h", "4d", "4c", "5s",
          "5h", "5d", "5c", "6s", "6h", "6d", "6c", "7s", "7h", "7d", "7c", "8s", "8h",
          "8d", "8c", "9s", "9h", "9d", "9c", "Ts", "Th", "Td", "Tc", "Js", "Jh", "Jd",
          "Jc", "Qs", "Qh", "Qd", "Qc", "Ks", "Kh", "Kd", "Kc", "As", "Ah", "Ad", "Ac",
          "Jk")


def name(cid):
    if not 0 <= cid <= JOKER:
        raise Refused("unknown_card", "unknown card id %r" % (cid,))
    return NAMES[cid]


def parse_hand(cards):
    """A string of space/comma separated tokens, or a sequence of tokens or IDs."""
    if isinstance(cards, str):
        cards = cards.replace(",", " ").split()
    return [parse(t) for t in cards]


def names(ids):
    return [name(c) for c in ids]
