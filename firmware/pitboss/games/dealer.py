# What the dealer games (Three Card Prime, Caribbean) share: every seat plays a hand
# against the dealer's, dealt one card at a time around the table; after the deal each
# seat plays or folds; each seat is settled against the dealer's hand.
from pitboss.rules import evaluator
from pitboss.rules.cards import name
from pitboss.errors import Refused


def pays(amount, odds):
    """Winnings (not counting the returned stake) of `amount` at odds (N, D) of a
    paytable (pitboss.rules.paytables), rounded down to the table's smallest unit. Here, not
    in paytables: the games settle with it, and the paytable registry is dropped once
    a configuration is taken (table.py)."""
    return amount * odds[0] // odds[1]


# deal_order and decide have the game interface's signatures (games/__init__.py), so a
# dealer game imports them as its own.
def deal_order(t, dice):
    """One card at a time to each seat in seat order, then the dealer, until each has a
    hand (three cards at Three Card Prime, five at Caribbean)."""
    seats = t.seats_in_play()
    order = []
    for _ in range(t.profile.size):
        order += seats + [0]
    return order, None, None


def decide(t, seat, verb, ev):
    """After the deal each seat plays or folds: True plays (Play = ante; Caribbean's
    Call = 2 x ante), False folds."""
    play = ev.get("play")
    if type(play) is not bool:
        raise Refused("bad_decision", "seat %d: play must be True (play/call) or False "
                      "(fold), got %r" % (seat, play))
    return play, {"seat": seat, "play": play}


def settle_round(t, qualifies, seat_result):
    """Each seat against the dealer's hand: seat_result(t, seat, dealer cards) settles
    one seat's wagers; qualifies(dealer score) says whether the dealer qualifies."""
    p = t.profile
    dealer = t.hand(0)
    ds = evaluator.score(p, dealer)
    seats = []
    for s in t.seats_in_play():
        x = seat_result(t, s, dealer)
        d = t.seat_head(s)
        d["hand"] = evaluator.played(p, t.hand(s))
        d["decision"] = "play" if t.choice(s) else "fold"
        d.update(x)
        seats.append(d)
    return {"dealer": {"cards": [name(c) for c in dealer],
                       "hand": evaluator.played(p, dealer),
                       "category": p.category(ds), "qualifies": qualifies(ds)},
            "seats": seats}
