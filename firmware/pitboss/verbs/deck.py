# RFID deck registration (authenticated: it decides what every tag means) and its
# progress, answered by the App, which owns the reader and the deck map
# (pitboss.store.deckmap; docs/shoe-protocol.md).
from pitboss.errors import Refused
from pitboss.hw.serialshoe import SerialShoe


def deck_register(ctl, args):
    a = ctl.app
    if a.reader is None:
        raise Refused("no_reader", "this board has no RFID reader")
    if not ctl.between_rounds():
        raise Refused("wrong_phase", "register a deck between rounds")
    size = 52
    if args:
        if not args[0].isdigit():
            raise Refused("bad_args", "usage: deck-register [52|53], got %r" % args[0])
        size = int(args[0])
    from pitboss.store.deckmap import DeckMap, Registration

    if a.deckmap is None:
        a.deckmap = DeckMap()
    a.registration = Registration(a.deckmap, size=size)
    return deck(ctl, ())


def deck(ctl, args):
    """Registration progress, or the registered decks."""
    a = ctl.app
    from pitboss.rules.cards import name

    reg = a.registration
    if reg is not None:
        nxt = reg.expected()
        return {"registering": True, "read": reg.count(), "of": len(reg.order),
                "next": name(nxt) if nxt is not None else None}
    n = len(a.deckmap) if a.deckmap is not None else 0
    return {"registering": False, "decks": n,
            "shoe": "serial" if isinstance(a.shoe, SerialShoe) else "rfid"}


def register_poll(a):
    """While a deck is being registered, the App's poll takes the next tag instead of
    dealing: a reply per tag read (registered, or why not), the deck saved when done."""
    from pitboss.rules.cards import name
    from pitboss.store.deckmap import DeckError, uid_hex

    reader, reg, dm, path = a.reader, a.registration, a.deckmap, a.deck_path
    if reader is None or reg is None or dm is None or path is None:
        return []
    try:
        uid = reader.read_uid()
    except OSError as e:
        return [{"ok": False, "error": {"code": "read_error", "message": str(e)}}]
    if uid is None:
        return []
    try:
        card = reg.add(uid)
    except DeckError as e:  # read twice / another deck's tag: present the right card
        return [{"ok": False, "error": {"code": e.code, "message": str(e)}}]
    reply = {"ok": True, "registered": name(card), "uid": uid_hex(uid)}
    if reg.done():
        reply["deck"] = reg.commit()
        dm.save(path)  # atomic: temp, sync, rename
        a.registration = None
        a.shoe = a.make_shoe()
    return [reply]
