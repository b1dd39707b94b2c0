# Bench protocol: one command line in, one JSON reply line out (docs/protocol.md).
#
# A refused command (unknown, bad argument, bad card) gets {"ok": false, "error": {...}}
# and changes nothing: handlers validate everything before they touch any state and
# raise pitboss.errors.Refused. Anything else a handler raises is a bug or a fault,
# never bad input: it is answered "internal_error" (the table controller also tilts).
import json

from pitboss.rules import profiles
from pitboss.rules.cards import names, parse_hand
from pitboss.errors import Refused

VERSION = "0.1.0"


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


def _rank(args, best=False):
    if not args:
        raise Refused("bad_args", "usage: rank GAME CARD...")
    return rank_reply(args[0], args[1:], best)


def _games(args):
    return {"games": [{"game": g, "cards": profiles.get(g).size,
                       "source": profiles.get(g).source} for g in profiles.GAMES]}


def _version(args):
    import sys
    return {"version": VERSION, "implementation": sys.implementation.name}


COMMANDS = {
    "rank": _rank,
    "best": lambda a: _rank(a, True),
    "games": _games,
    "version": _version,
}


def error(code, message):
    return {"ok": False, "error": {"code": code, "message": message}}


def _internal(e):
    return error("internal_error", "internal error: %s %s" % (type(e).__name__, e))


def call(fn, args, fault=_internal):
    """fn(args) -> its reply with "ok": true; a Refused -> its code and message; anything
    else -> fault(exception)'s reply."""
    try:
        reply = fn(args)
        reply["ok"] = True
    except Refused as e:
        return error(e.code, str(e))
    except Exception as e:
        return fault(e)
    return reply


def handle(line, commands=COMMANDS):
    """Run one command line; always returns a dict with "ok" (never raises)."""
    words = line.split()
    if not words:
        return error("empty", "empty command")
    fn = commands.get(words[0].lower())
    if fn is None:
        return error("unknown_command", "unknown command %r" % words[0][:32])
    return call(fn, words[1:])


def reply_line(line, commands=COMMANDS):
    return json.dumps(handle(line, commands))


def batch(lines, commands=COMMANDS):
    """Host-driven use over the raw REPL: print one reply line per command line."""
    for line in lines:
        print(reply_line(line, commands))
