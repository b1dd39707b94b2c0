# The RFID deck's verbs: registration (authenticated: it decides what every tag means)
# and its progress; the App's reader, deck map and shoe (pitboss.app).
from pitboss.errors import Refused
from pitboss.games.table import SETTLED


def register(ctl, args):
    app = ctl.app
    if app.reader is None:
        raise Refused("no_reader", "this board has no RFID reader")
    t = ctl.table
    if t is not None and t.phase not in ("configured", SETTLED):  # a round in play
        raise Refused("wrong_phase", "register a deck between rounds")
    size = 52
    if args:
        if not args[0].isdigit():
            raise Refused("bad_args", "usage: deck-register [52|53], got %r" % args[0])
        size = int(args[0])
    from pitboss.store.deckmap import DeckMap, Registration

    if app.deckmap is None:
        app.deckmap = DeckMap()
    app.registration = Registration(app.deckmap, size=size)
    return deck(ctl, ())


def deck(ctl, args):
    """Registration progress, or the registered decks."""
    from pitboss.hw.shoes import SerialShoe
    from pitboss.rules.cards import name

    app = ctl.app
    reg = app.registration
    if reg is not None:
        nxt = reg.expected()
        return {"registering": True, "read": reg.count(), "of": len(reg.order),
                "next": name(nxt) if nxt is not None else None}
    n = len(app.deckmap) if app.deckmap is not None else 0
    return {"registering": False, "decks": n,
            "shoe": "serial" if isinstance(app.shoe, SerialShoe) else "rfid"}
