# The one verb table of the bench protocol (docs/protocol.md): every verb, its handler
# and what it may do. A handler is fn(ctl, args) -> reply dict, ctl the table's
# pitboss.controller.Controller (None for the stateless verbs run by batch()); it
# checks everything and raises pitboss.errors.Refused, changing nothing, or changes
# state through the controller. Controller.command() dispatches a line by this table.
#
# A handler's module is named, not imported, here: handler() imports it on the verb's
# first use. On a Pico every module held is heap for good (a module object, its globals
# and functions), so a table imports only the verbs it is sent (a board that only ranks
# never holds the round's).
import json

from pitboss import protocol
from pitboss.compat import const

# What a verb may do:
AUTH = const(1)   # only inside an authenticated line (auth COUNTER MAC VERB ...)
QUIET = const(2)  # only reads: what the display shows cannot change, so no redraw (a
# redraw of a settled seven-seat table is 1 KB over I2C: on the emulated Pico `version`
# took 75.8 ms with it and 9.3 ms without, `status` 143.8 and 77.1 ms)
ROUND = const(4)  # moves the round: refused while a tilt is active
APP = const(8)    # answered by the App (ctl.app: the board's peripherals, heap, firmware);
# a bare controller (host tests) does not know it
RAW = const(16)   # (AUTH) the handler takes the rest of the line as sent, not split
STATELESS = const(32)  # needs no table: batch() runs it with ctl None

VERBS = {
    "rank": ("pitboss.verbs.rank", "rank", QUIET | STATELESS),
    "best": ("pitboss.verbs.rank", "best", QUIET | STATELESS),
    "games": ("pitboss.verbs.rank", "games", QUIET | STATELESS),
    "version": ("pitboss.verbs.board", "version", QUIET | STATELESS),
    "status": ("pitboss.verbs.play", "status", QUIET),
    "wager": ("pitboss.verbs.play", "wager", ROUND),
    "deal": ("pitboss.verbs.play", "deal", ROUND),
    "card": ("pitboss.verbs.play", "card", ROUND),
    "hand": ("pitboss.verbs.play", "hand", ROUND),
    "houseway": ("pitboss.verbs.play", "houseway", ROUND),
    "decide": ("pitboss.verbs.play", "decide", ROUND),
    "settle": ("pitboss.verbs.play", "settle", ROUND),
    "newround": ("pitboss.verbs.play", "newround", ROUND),
    "recall": ("pitboss.verbs.records", "recall", QUIET),
    "meters": ("pitboss.verbs.records", "meters", QUIET),
    "export": ("pitboss.verbs.records", "export", QUIET),
    "export-ack": ("pitboss.verbs.records", "export_ack", AUTH),
    "clock": ("pitboss.verbs.operator", "clock", 0),
    "tilt": ("pitboss.verbs.operator", "tilt", QUIET),
    "auth": ("pitboss.verbs.operator", "auth", 0),
    "config": ("pitboss.verbs.operator", "config", AUTH | RAW),
    "tilt-clear": ("pitboss.verbs.operator", "tilt_clear", AUTH),
    "meters-reset": ("pitboss.verbs.operator", "meters_reset", AUTH),
    "mem": ("pitboss.verbs.board", "mem", QUIET | APP),
    "verify": ("pitboss.verbs.board", "verify", QUIET | APP),
    "screen": ("pitboss.verbs.board", "screen", QUIET | APP),
    "provision": ("pitboss.verbs.board", "provision", AUTH | APP),
    "deck": ("pitboss.verbs.deck", "deck", QUIET | APP),
    "deck-register": ("pitboss.verbs.deck", "deck_register", AUTH | APP),
}


_LEAF = ("handler",)  # a fromlist: __import__ returns the module itself, not the package


def handler(e):
    """The function of a VERBS entry, its module imported on first use."""
    return getattr(__import__(e[0], None, None, _LEAF), e[1])


def handle(line):
    """One line of the stateless verbs -> reply dict (never raises): a board without a
    table (the host's raw-REPL rank batches) answers them as a table would."""
    words = line.split()
    if not words:
        return protocol.error("empty", "empty command")
    e = VERBS.get(words[0].lower())
    if e is None or not e[2] & STATELESS:
        return protocol.error("unknown_command", "unknown command %r" % words[0][:32])
    return protocol.call(handler(e), None, words[1:])


def batch(lines):
    """Host-driven use over the raw REPL: print one reply line per command line."""
    for line in lines:
        print(json.dumps(handle(line)))
