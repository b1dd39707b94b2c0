# Showdown (nj-5card, nj-3card): N seats, the best hand wins the pot, ties split it.
#
# Ranks: /work/shared/rules/new-jersey-poker-ranks.txt (b)-(e). NJ (e): "If the hands
# are of identical rank after the application of this subsection, the hands shall be
# considered tied and the pot shall be equally divided among the players with the tied
# hands." A pot that does not divide evenly in the table's smallest unit leaves odd
# units: they go one each to the tied seats in seat order, lowest seat number first
# (seat 1 sits first to the dealer's left). Seats holding more cards than a hand (a
# "best five of seven" table) play their best hand (evaluator.best).
from pitboss import evaluator
from pitboss.profiles import get

GAMES = ("nj-5card", "nj-3card")
WAGERS = ("ante",)
PAYTABLES = ()


def profile(game):
    if game not in GAMES:
        from pitboss.cards import CardError
        raise CardError("unknown_game", "%r is not a showdown game (%s)"
                        % (game, ", ".join(GAMES)))
    return get(game)


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
