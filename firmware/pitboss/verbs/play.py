# The verbs that play a round: what the table shows, wagers, the deal, hands and
# decisions, settlement and the next round (docs/protocol.md). Each handler takes the
# controller and the line's words, checks everything, then applies one event
# (Controller.apply: journalled, then answered); a refusal changes nothing.
from pitboss.errors import Refused
from pitboss.games.table import CONFIGURED, SETTLED
from pitboss.rules.cards import parse
from pitboss.protocol import int_arg, one_arg


def status(ctl, args):
    st = {}  # type: dict
    st.update(ctl.table.status() if ctl.table else {"phase": "unconfigured"})
    st["tilts"] = ctl.active_tilts()
    if ctl._lost:
        st["lost"] = ctl._lost  # the round lost a card: tilt-clear voids it
    st["journal_seq"] = ctl.journal.last_seq
    if ctl.table is not None and ctl.table.unverified:
        # issue 30: a placeholder paytable is in use (only service mode lets one in)
        st["unverified"] = ctl.table.unverified
    if ctl.table is not None:
        # The seats configured, so a host tool can deal to this table as it stands
        # (`pitboss shoe` keeps the configuration when it plays the same game).
        st["table_seats"] = ctl.table.seat_count
        # What each seat holds so far: dealt cards only. Undealt cards and the shoe
        # order are never known here, so they can never be revealed.
        # Face-down cards (the dealer's, the banker's, empty positions' packets) are
        # None until the game shows them (Table.shown).
        st["hands"] = {str(r): ctl.table.shown_hand(r)
                       for r in ctl.table.recipients()}
    return st


def wager(ctl, args):
    t = ctl.require_table()
    if len(args) < 1:
        raise Refused("bad_args", "usage: wager SEAT KIND=AMOUNT...")
    seat = int_arg(args[0], "seat")
    w = {}
    for a in args[1:]:
        k, _, v = a.partition("=")
        w[k] = int_arg(v, k)
    if t.phase == SETTLED:
        # Checked first: a refused wager must not open the next round.
        t.check_wager(seat, w)
        ctl.apply({"ev": "new"})
    return ctl.apply({"ev": "wager", "seat": seat, "w": w})


def deal(ctl, args):
    ctl.require_table()
    ev = {"ev": "deal"}  # type: dict
    if args:
        ev["dice"] = int_arg(args[0], "dice")
    return ctl.apply(ev)


def card(ctl, args):
    ctl.require_table()
    if len(args) != 1:
        raise Refused("bad_args", "usage: card CARD (As, 48...)")
    c = args[0]
    cid = parse(int(c) if c.isdigit() else c)
    return ctl.apply({"ev": "card", "c": cid})


def hand(ctl, args):
    ctl.require_table()
    if "/" not in args or len(args) < 2:
        raise Refused("bad_args", "usage: hand SEAT HIGH... / LOW...")
    seat = int_arg(args[0], "seat")
    i = args.index("/")
    high = [parse(c) for c in args[1:i]]
    low = [parse(c) for c in args[i + 1:]]
    return ctl.apply({"ev": "set", "seat": seat, "high": high, "low": low})


def houseway(ctl, args):
    ctl.require_table()
    return ctl.apply({"ev": "hw", "seat": int_arg(one_arg(args, "houseway SEAT"), "seat")})


def decide(ctl, args):
    ctl.require_table()
    if len(args) != 2 or args[1] not in ("play", "fold"):
        raise Refused("bad_args", "usage: decide SEAT play|fold")
    return ctl.apply({"ev": "decide", "seat": int_arg(args[0], "seat"),
                        "play": args[1] == "play"})


def settle(ctl, args):
    ctl.require_table()
    return ctl.apply({"ev": "settle"})


def newround(ctl, args):
    t = ctl.require_table()
    if t.phase == CONFIGURED:
        return t.status()  # nothing to close: nothing changes, nothing journalled
    return ctl.apply({"ev": "new"})
