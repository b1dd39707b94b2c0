# The rule core's verbs: rank, best, games, version (no table needed: a board answers
# them in the raw REPL too, pitboss.verbs.batch).
from pitboss.errors import Refused
from pitboss.rules import profiles
from pitboss.rules.cards import names, parse_hand


def rank_reply(gid, cards, best=False):
    """The reply to `rank`/`best`; the host's `pitboss rank` prints the same fields."""
    # Imported here: a board boots without the evaluator until a game or `rank` needs it.
    from pitboss.rules import evaluator

    p = profiles.get(gid)
    ids = parse_hand(cards)
    if best:
        s, hand = evaluator.best(p, ids)
    else:
        s = evaluator.rank(p, ids)
        hand = evaluator.played(p, ids)
    return {"game": gid, "cards": names(ids), "category": p.category(s), "score": s,
            "hand": hand}


def rank(ctl, args, best=False):
    if not args:
        raise Refused("bad_args", "usage: rank GAME CARD...")
    return rank_reply(args[0], args[1:], best)


def best(ctl, args):
    return rank(ctl, args, True)


def games(ctl, args):
    return {"games": [{"game": g, "cards": profiles.get(g).size,
                       "source": profiles.get(g).source} for g in profiles.GAMES]}


def version(ctl, args):
    import sys

    from pitboss.protocol import VERSION

    reply = {"version": VERSION, "implementation": sys.implementation.name}  # type: dict
    app = ctl.app if ctl is not None else None
    if app is not None:
        from pitboss import service

        reply["mode"] = "service" if service.requested(app.hw) else "production"
        # Who this board is, for the host's key store: the chip's unique id (boards/)
        # and its key's fingerprint (never the key).
        # (Keys of more than 10 characters, and names MicroPython has in ROM: no new
        # interned names, DEVELOPERS.md.)
        u = getattr(app.hw, "unique_id", None)
        try:
            reply["unique_id"] = u() if u is not None else None
        except Exception:  # noqa: BLE001  (a board without one still answers)
            reply["unique_id"] = None
        reply["key_fingerprint"] = getattr(app.ctl.auth, "id", None)
    return reply
