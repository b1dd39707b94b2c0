# Bench protocol: one command line in, one JSON reply line out (docs/protocol.md).
#
# A refused command (unknown, bad argument, bad card) gets {"ok": false, "error": {...}}
# and changes nothing: handlers validate everything before they touch any state.
import json

from pitboss import evaluator, profiles
from pitboss.cards import CardError, names, parse_hand

VERSION = "0.1.0"


class ProtocolError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def rank_reply(gid, cards, best=False):
    """The reply to `rank`/`best`; the host's `pitboss rank` prints the same fields."""
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
        raise ProtocolError("bad_args", "usage: rank GAME CARD...")
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


def handle(line, commands=COMMANDS):
    """Run one command line; always returns a dict with "ok" (never raises)."""
    words = line.split()
    if not words:
        return {"ok": False, "error": {"code": "empty", "message": "empty command"}}
    fn = commands.get(words[0].lower())
    if fn is None:
        return {"ok": False, "error": {"code": "unknown_command",
                                       "message": "unknown command %r" % words[0][:32]}}
    try:
        reply = fn(words[1:])
    except CardError as e:
        return {"ok": False, "error": {"code": e.kind, "message": str(e)}}
    except ProtocolError as e:
        return {"ok": False, "error": {"code": e.code, "message": str(e)}}
    except (ValueError, TypeError, KeyError, IndexError) as e:
        return {"ok": False, "error": {"code": "bad_args", "message": str(e)}}
    reply["ok"] = True
    return reply


def reply_line(line, commands=COMMANDS):
    return json.dumps(handle(line, commands))


def batch(lines, commands=COMMANDS):
    """Host-driven use over the raw REPL: print one reply line per command line."""
    for line in lines:
        print(reply_line(line, commands))
