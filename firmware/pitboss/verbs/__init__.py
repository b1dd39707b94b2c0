# The one verb table of the bench protocol (docs/protocol.md): every verb, its handler
# and what it may do. A handler is fn(ctl, args) -> reply dict, ctl the table's
# pitboss.controller.Controller (None for the stateless verbs run by batch()); it
# checks everything and raises pitboss.errors.Refused, changing nothing, or changes
# state through the controller. Controller.command() dispatches a line by this table.
import json

from pitboss import protocol
from pitboss.compat import const
from pitboss.verbs import board, deck, operator, play, rank, records

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
    "rank": (rank.rank, QUIET | STATELESS),
    "best": (rank.best, QUIET | STATELESS),
    "games": (rank.games, QUIET | STATELESS),
    "version": (board.version, QUIET | STATELESS),
    "status": (play.status, QUIET),
    "wager": (play.wager, ROUND),
    "deal": (play.deal, ROUND),
    "card": (play.card, ROUND),
    "hand": (play.hand, ROUND),
    "houseway": (play.houseway, ROUND),
    "decide": (play.decide, ROUND),
    "settle": (play.settle, ROUND),
    "newround": (play.newround, ROUND),
    "recall": (records.recall, QUIET),
    "meters": (records.meters, QUIET),
    "export": (records.export, QUIET),
    "export-ack": (records.export_ack, AUTH),
    "clock": (operator.clock, 0),
    "tilt": (operator.tilt, QUIET),
    "auth": (operator.auth, 0),
    "config": (operator.config, AUTH | RAW),
    "tilt-clear": (operator.tilt_clear, AUTH),
    "meters-reset": (operator.meters_reset, AUTH),
    "mem": (board.mem, QUIET | APP),
    "verify": (board.verify, QUIET | APP),
    "screen": (board.screen, QUIET | APP),
    "provision": (board.provision, AUTH | APP),
    "deck": (deck.deck, QUIET | APP),
    "deck-register": (deck.deck_register, AUTH | APP),
}


def handle(line):
    """One line of the stateless verbs -> reply dict (never raises): a board without a
    table (the host's raw-REPL rank batches) answers them as a table would."""
    words = line.split()
    if not words:
        return protocol.error("empty", "empty command")
    e = VERBS.get(words[0].lower())
    if e is None or not e[1] & STATELESS:
        return protocol.error("unknown_command", "unknown command %r" % words[0][:32])
    return protocol.call(e[0], None, words[1:])


def batch(lines):
    """Host-driven use over the raw REPL: print one reply line per command line."""
    for line in lines:
        print(json.dumps(handle(line)))
