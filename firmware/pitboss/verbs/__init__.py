# The one verb table: every protocol verb, its handler and what it may do
# (docs/protocol.md). A handler is fn(ctl, args) -> reply dict, ctl the table's
# pitboss.controller.Controller (None for the verbs a board answers without a table:
# `rank` over the raw REPL); it raises pitboss.errors.Refused to refuse, changing nothing.
# Handlers are grouped by job: play (the round), records (recall, meters, tilts, export),
# operator (authentication, configuration, clock, integrity, memory, screen), deck (RFID
# registration), rank (the rule core's answers).
import json

from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.protocol import call, error
from pitboss.verbs import deck, operator, play, rank, records

_AUTH = const(1)  # only inside `auth COUNTER MAC VERB ...`; bare: auth_required
_READ = const(2)  # only reads: what the display shows cannot have changed, no redraw
_ROUND = const(4)  # moves the round: refused while a tilt is active
_APP = const(8)  # needs the board's App (peripherals): unknown to a bare Controller
_RAW = const(16)  # takes the rest of the line as it came (config's JSON), not split
_BARE = const(32)  # answered without a table (the raw REPL's `rank` batches)

# Why _READ: a redraw of a settled seven-seat table is 1 KB over I2C (docs/bench.md).
_TABLE = {
    "status": (play.status, _READ),
    "wager": (play.wager, _ROUND),
    "deal": (play.deal, _ROUND),
    "card": (play.card, _ROUND),
    "hand": (play.hand, _ROUND),
    "houseway": (play.houseway, _ROUND),
    "decide": (play.decide, _ROUND),
    "settle": (play.settle, _ROUND),
    "newround": (play.newround, _ROUND),
    "recall": (records.recall, _READ),
    "meters": (records.meters, _READ),
    "tilt": (records.tilt, _READ),
    "export": (records.export, _READ),
    "export-ack": (records.export_ack, _AUTH),
    "auth": (None, 0),  # _auth below: checks the line, then runs an _AUTH verb
    "config": (operator.config, _AUTH | _RAW),
    "tilt-clear": (operator.tilt_clear, _AUTH),
    "meters-reset": (operator.meters_reset, _AUTH),
    "clock": (operator.clock, 0),
    "verify": (operator.verify, _READ | _APP),
    "mem": (operator.mem, _READ | _APP),
    "screen": (operator.screen, _READ | _APP),
    "provision": (operator.provision, _AUTH | _APP),
    "deck": (deck.deck, _READ | _APP),
    "deck-register": (deck.register, _AUTH | _APP),
    "rank": (rank.rank, _READ | _BARE),
    "best": (rank.best, _READ | _BARE),
    "games": (rank.games, _READ | _BARE),
    "version": (rank.version, _READ | _BARE),
}
# Refusals from the table that halt play rather than just refuse the input (a card or a
# settlement that shows the deal went wrong): refusal code -> tilt code.
_CARD_TILTS = {"duplicate_card": "duplicate_card", "wrong_count": "wrong_card_count"}


def run(ctl, line):
    """One protocol line -> its reply dict. Never raises: a refusal is an error reply
    that changed nothing; anything else is ctl's fault (a tilt), or internal_error
    without a table."""
    try:
        words = line.split()
        if not words:
            return error("empty", "empty command")
        verb = words[0].lower()
        e = _TABLE.get(verb)
        if e is None or (ctl is None and not e[1] & _BARE) or (
                e[1] & _APP and (ctl is None or ctl.app is None or e[1] & _AUTH)):
            # (an app's authenticated verb is reached through `auth` only)
            return error("unknown_command", "unknown command %r" % words[0][:32])
        args = words[1:]
        if ctl is None:
            return call(e[0], None, args)
        fn, flags = e
        if flags & _ROUND and ctl.halted():
            return error("tilted", "the table is halted by a tilt (%s); an operator must "
                         "clear it" % ", ".join(a["code"] for a in ctl.active_tilts()))
        if flags & _AUTH:
            return error("auth_required", "configuration, tilt clearing, a meters reset "
                         "and an export acknowledgement need an authenticated command: "
                         "auth COUNTER MAC ...")
        seq0 = ctl.journal.last_seq
        reply = call(_auth if verb == "auth" else fn, ctl, args, ctl._fault)
        err = reply.get("error")
        if err and err["code"] in _CARD_TILTS and verb in ("card", "settle"):
            ctl.raise_tilt(_CARD_TILTS[err["code"]], err["message"][:80])
        if reply.get("ok") and not flags & _READ and (
                verb != "newround" or ctl.journal.last_seq != seq0):
            ctl._show()  # (a newround with nothing to close changed nothing)
        return reply
    except Exception as ex:
        if ctl is None:
            raise
        return ctl._fault(ex)


def _auth(ctl, args):
    """auth COUNTER MAC VERB ...: the line checked (operator.auth), then its verb run,
    if it is one that needs authentication."""
    verb, rest = operator.auth(ctl, args)
    e = _TABLE.get(verb)
    if e is None or not e[1] & _AUTH or (e[1] & _APP and ctl.app is None):
        raise Refused("bad_args", "authenticated commands: config JSON, tilt-clear "
                      "OPERATOR [CODE], meters-reset OPERATOR, export-ack SEQ, %s"
                      % ", ".join(sorted(v for v in _TABLE if _TABLE[v][1] & _APP
                                         and _TABLE[v][1] & _AUTH and ctl.app is not None)))
    return e[0](ctl, rest if e[1] & _RAW else rest.split())


def batch(lines):
    """Host-driven use over the raw REPL (`pitboss rank --port`): one reply line per
    command line, answered without a table."""
    for line in lines:
        print(json.dumps(run(None, line)))
