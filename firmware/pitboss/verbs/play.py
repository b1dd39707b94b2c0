# The round's verbs: status, wagers, the deal, cards, decisions, settlement, the next
# round. Each builds an event and hands it to the controller (Controller.apply), which
# checks it against the table and journals it.
from pitboss.errors import Refused, arg_int, arg_one
from pitboss.games.table import CONFIGURED, SETTLED
from pitboss.rules.cards import parse


def status(ctl, args):
    st = {}  # type: dict
    t = ctl.table
    st.update(t.status() if t else {"phase": "unconfigured"})
    st["tilts"] = ctl.active_tilts()
    if ctl._lost:
        st["lost"] = ctl._lost  # the round lost a card: tilt-clear voids it
    st["journal_seq"] = ctl.journal.last_seq
    if t is not None and t.unverified:
        # issue 30: a placeholder paytable is in use (only service mode lets one in)
        st["unverified"] = t.unverified
    if t is not None:
        # What each seat holds so far: dealt cards only. Undealt cards and the shoe
        # order are never known here, so they can never be revealed.
        # Face-down cards (the dealer's, the banker's, empty positions' packets) are
        # None until the game shows them (Table.shown).
        st["hands"] = {str(r): t.shown_hand(r) for r in t.recipients()}
    return st


def wager(ctl, args):
    t = ctl.configured()
    if len(args) < 1:
        raise Refused("bad_args", "usage: wager SEAT KIND=AMOUNT...")
    seat = arg_int(args[0], "seat")
    w = {}
    for a in args[1:]:
        k, _, v = a.partition("=")
        w[k] = arg_int(v, k)
    if t.phase == SETTLED:
        # Checked first: a refused wager must not open the next round.
        t.check_wager(seat, w)
        ctl.apply({"ev": "new"})
    return ctl.apply({"ev": "wager", "seat": seat, "w": w})


def deal(ctl, args):
    ctl.configured()
    ev = {"ev": "deal"}  # type: dict
    if args:
        ev["dice"] = arg_int(args[0], "dice")
    return ctl.apply(ev)


def card(ctl, args):
    ctl.configured()
    if len(args) != 1:
        raise Refused("bad_args", "usage: card CARD (As, 48...)")
    c = args[0]
    return ctl.apply({"ev": "card", "c": parse(int(c) if c.isdigit() else c)})


def hand(ctl, args):
    ctl.configured()
    if "/" not in args or len(args) < 2:
        raise Refused("bad_args", "usage: hand SEAT HIGH... / LOW...")
    seat = arg_int(args[0], "seat")
    i = args.index("/")
    high = [parse(c) for c in args[1:i]]
    low = [parse(c) for c in args[i + 1:]]
    return ctl.apply({"ev": "set", "seat": seat, "high": high, "low": low})


def houseway(ctl, args):
    ctl.configured()
    return ctl.apply({"ev": "hw", "seat": arg_int(arg_one(args, "houseway SEAT"), "seat")})


def decide(ctl, args):
    ctl.configured()
    if len(args) != 2 or args[1] not in ("play", "fold"):
        raise Refused("bad_args", "usage: decide SEAT play|fold")
    return ctl.apply({"ev": "decide", "seat": arg_int(args[0], "seat"),
                      "play": args[1] == "play"})


def settle(ctl, args):
    ctl.configured()
    return ctl.apply({"ev": "settle"})


def newround(ctl, args):
    t = ctl.configured()
    if t.phase == CONFIGURED:
        return t.status()  # nothing to close: nothing changes, nothing journalled
    return ctl.apply({"ev": "new"})
