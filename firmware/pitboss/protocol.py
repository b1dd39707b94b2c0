# Bench protocol: one command line in, one JSON reply line out (docs/protocol.md). The
# verbs and their handlers are in pitboss.verbs (one table); this is the reply's shape,
# and the one way a handler checks its arguments (int_arg, one_arg: Refused("bad_args")
# naming what was wrong, before anything changes).
#
# A refused command (unknown, bad argument, bad card) gets {"ok": false, "error": {...}}
# and changes nothing: handlers validate everything before they touch any state and
# raise pitboss.errors.Refused. Anything else a handler raises is a bug or a fault,
# never bad input: it is answered "internal_error" (the table controller also tilts).
from pitboss.errors import Refused

VERSION = "0.1.0"


def error(code, message):
    return {"ok": False, "error": {"code": code, "message": message}}


def _internal(e):
    return error("internal_error", "internal error: %s %s" % (type(e).__name__, e))


def call(fn, ctl, args, fault=_internal):
    """fn(ctl, args) -> its reply with "ok": true; a Refused -> its code and message;
    anything else -> fault(exception)'s reply."""
    try:
        reply = fn(ctl, args)
        reply["ok"] = True
    except Refused as e:
        return error(e.code, str(e))
    except Exception as e:
        return fault(e)
    return reply


def int_arg(text, what):
    try:
        return int(text)
    except (ValueError, TypeError):
        raise Refused("bad_args", "%s must be an integer, got %r" % (what, text))


def one_arg(args, usage):
    if len(args) != 1:
        raise Refused("bad_args", "usage: " + usage)
    return args[0]
