# Showdown (nj-5card, nj-3card): N seats, the best hand wins the pot, ties split it.
#
# Ranks: shared/rules/ (beside the repository) new-jersey-poker-ranks.txt (b)-(e). NJ (e): "If the hands
# are of identical rank after the application of this subsection, the hands shall be
# considered tied and the pot shall be equally divided among the players with the tied
# hands." A pot that does not divide evenly in the table's smallest unit leaves odd
# units: they go one each to the tied seats in seat order, lowest seat number first
# (seat 1 sits first to the dealer's left). Seats holding more cards than a hand (a
# "best five of seven" table) play their best hand (evaluator.best).
from pitboss.rules import evaluator
from pitboss.compat import const
from pitboss.errors import Refused

WAGERS = ("ante",)
MAIN = "ante"
PAYTABLES = ()
HOUSE = ("hole",)
MAX_SEATS = const(7)
DICE = False
AFTER_DEAL = "ready"
FACE_UP = ()  # no dealer hand
DECISIONS = ()


def hand_score(p, cards):
    if len(cards) == p.size:
        return evaluator.score(p, cards)
    return evaluator.best(p, cards)[0]


def winners(scores):
    """Seats holding the highest score, in seat order. scores: {seat: score}."""
    top = None
    for s in scores:
        if top is None or scores[s] > top:
            top = scores[s]
    return sorted(s for s in scores if scores[s] == top)


def split_pot(pot, seats):
    """Equal shares of `pot` among `seats` (in seat order); odd units one each to the
    lowest seat numbers first. Returns {seat: share}; the shares add up to the pot."""
    seats = sorted(seats)
    share, odd = divmod(pot, len(seats))
    out = {}
    for i in range(len(seats)):
        out[seats[i]] = share + (1 if i < odd else 0)
    return out


def settle(p, hands, antes):
    """hands: {seat: card ids}; antes: {seat: amount put in the pot}. Returns
    {"pot": pot, "winners": [...], "seats": {seat: {...}}} with every amount an int
    (share won less the ante; they sum to zero)."""
    scores = {}
    for s in hands:
        scores[s] = hand_score(p, hands[s])
    pot = 0
    for s in antes:
        pot += antes[s]
    won = winners(scores)
    shares = split_pot(pot, won)
    out = {}
    for s in sorted(hands):
        sc = scores[s]
        share = shares.get(s, 0)
        out[s] = {"category": p.category(sc),
                  "hand": evaluator.best(p, hands[s])[1],
                  "outcome": ("win" if len(won) == 1 else "split") if s in shares
                  else "lose",
                  "share": share, "amount": share - antes[s]}
    return {"pot": pot, "winners": won, "seats": out}


# ---- the game interface (pitboss.games) ----------------------------------------------
def house(p, given):
    """hole: the cards dealt to each seat (default the hand size; up to 7, "best five of
    seven"). 7 seats x 7 cards = 49: a 52-card deck always suffices."""
    v = given.get("hole", p.size)
    if type(v) is not int or not p.size <= v <= 7:
        raise Refused("bad_config", "hole must be an int in %d..7, got %r" % (p.size, v))
    return {"hole": v}


def deal_order(t, dice):
    """One card at a time to each seat in seat order, `hole` rounds; no dealer."""
    seats = t.seats_in_play()
    order = []
    for _ in range(t.house["hole"]):
        order += seats
    return order, None, None


def decide(t, seat, verb, ev):
    raise Refused("wrong_phase", "a showdown has no decisions")  # DECISIONS is empty


def settle_round(t):
    hands = {}
    antes = {}
    for s in t.seats_in_play():
        hands[s] = t.hand(s)
        antes[s] = t.wagers(s)["ante"]
    x = settle(t.profile, hands, antes)
    seats = []
    for s in t.seats_in_play():
        d = t.seat_head(s)
        d.update(x["seats"][s])
        seats.append(d)
    return {"pot": x["pot"], "winners": x["winners"], "seats": seats}


def sim_wagers(rng):
    return {"ante": 5 + rng.below(496)}


def sim_decision(t, seat):
    return None
