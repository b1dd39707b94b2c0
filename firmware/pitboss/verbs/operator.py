# The operator's verbs: the clock, the tilt log, and the authenticated ones (auth
# COUNTER MAC VERB ...: configuration, tilt clearing, a meters reset, an export's
# acknowledgement and the App's deck registration and re-key), whose MAC and counter
# pitboss.store.auth checks before any of them runs (docs/security.md).
import json

from pitboss.errors import Refused
from pitboss.store.tilt import CODES as TILT_CODES
from pitboss.store.tilt import check_operator


CLOCK_MIN = 1577836800  # 2020-01-01: a time before it is a host with a wrong clock
CLOCK_MAX = 4102444800  # 2100-01-01


def clock(ctl, args):
    """clock [UNIX]: the table's time; with UNIX (seconds), set it, as the host does
    when it connects. Journalled ({"ev":"clock","t":new,"was":old}) so the records
    before and after it can be put on one time line."""
    clk = ctl.clock
    if args:
        if len(args) != 1 or not args[0].isdigit():
            raise Refused("bad_args", "usage: clock [UNIX_SECONDS]")
        t = int(args[0])
        if not CLOCK_MIN <= t <= CLOCK_MAX:
            raise Refused("bad_args", "clock %d is not between 2020 and 2100" % t)
        setter = getattr(clk, "set", None)
        if setter is None:
            raise Refused("no_clock", "this controller's clock cannot be set")
        ctl.reserve()
        ctl.append({"ev": "clock", "t": t, "was": clk()})
        setter(t)
    return {"time": clk(), "set": bool(getattr(clk, "is_set", False))}


def tilt(ctl, args):
    return {"active": ctl.active_tilts(), "log": ctl.tilt.log()}


def auth(ctl, args):
    ok, reason, cmd = ctl.auth.check_line("auth " + " ".join(args))
    if reason == "store_error":
        # The counter could not be saved (a flash write failed): a storage fault, not
        # the sender's mistake.
        ctl.raise_tilt("storage_error", "auth counter could not be saved")
        raise Refused("storage_error", "the authentication counter could not be "
                      "written; the table is halted")
    if not ok:
        ctl.log_refusal(reason, cmd)
        raise Refused(reason, "authenticated command refused: %s"
                                     % reason)
    ctl.flush_refusals()
    ctl.log_event({"ev": "auth_ok", "ctr": ctl.auth.counter})
    words = cmd.split(None, 1)
    verb = words[0].lower() if words else ""
    return ctl.authenticated(verb, words[1] if len(words) > 1 else "")


def config(ctl, rest):
    """auth N MAC config JSON: the game, its seats, options and paytables (RAW: the
    JSON is the rest of the line as sent)."""
    try:
        cfg = json.loads(rest)
    except ValueError:
        raise Refused("bad_args", "config takes one JSON object")
    if ctl.halted():
        raise Refused("tilted", "clear the tilt before changing "
                                     "the configuration")
    return ctl.apply({"ev": "config", "cfg": cfg})


def tilt_clear(ctl, args):
    if not args:
        raise Refused("bad_args", "usage: tilt-clear OPERATOR [CODE]")
    try:
        check_operator(args[0])
    except ValueError as e:
        raise Refused("bad_args", str(e))
    if len(args) > 1 and args[1] not in TILT_CODES:
        raise Refused("bad_args", "unknown tilt code %r" % args[1])
    codes = [a["code"] for a in ctl.tilt.active()]
    one = args[1] if len(args) > 1 else None
    if "meters_corrupt" in codes and one in (None, "meters_corrupt") and \
            ctl._meters_bad is not None:
        raise Refused("meters_corrupt", "the meters are damaged (%s): an authenticated "
                      "meters-reset OPERATOR sets them aside and starts new ones; "
                      "clearing the tilt alone would zero them" % ctl._meters_bad)
    if "journal_full" in codes and one in (None, "journal_full") and ctl.journal.full:
        raise Refused("journal_full", "the journal is still full: export and "
                      "acknowledge it first (pitboss export)")
    if "journal_corrupt" in codes and (len(args) < 2 or args[1] == "journal_corrupt"):
        # The damaged journal is set aside (kept for investigation), never replayed;
        # numbering continues after the highest seq ever seen.
        ctl.table = None
        ctl._events = []
        ctl._lost = None
        ctl.meters.flush()  # saved before the records it counted are set aside
        ctl.journal.quarantine(ctl.meters.seq + 1)
        ctl._corrupt_seen = False
        ctl._settle_seqs = []  # they were in the journal set aside
    cleared = ctl.tilt.clear(args[0], args[1] if len(args) > 1 else None)
    if cleared:
        ctl.log_event({"ev": "tilt_clear", "codes": cleared, "op": args[0]})
    if ctl._unrecorded is not None and (len(args) < 2
                                         or args[1] == ctl._unrecorded["code"]):
        cleared.append(ctl._unrecorded["code"])
        ctl._unrecorded = None
    reply = {"cleared": cleared, "active": ctl.active_tilts()}
    if ctl._lost and cleared:
        # The misdealt round is voided, never settled misaligned: wagers returned,
        # journalled (recall shows it).
        reply["voided"] = ctl.apply({"ev": "void"})["result"]
    ctl.show()
    return reply


def meters_reset(ctl, args):
    """meters-reset OPERATOR (authenticated): only for damaged meters. The damaged
    copies are kept beside the record (NAME.SEQ.bad), new meters start at the
    journal's last seq (every settlement before it is in the kept copies and the
    journal or its export), the reset is journalled, and meters_corrupt cleared."""
    if len(args) != 1:
        raise Refused("bad_args", "usage: meters-reset OPERATOR")
    try:
        check_operator(args[0])
    except ValueError as e:
        raise Refused("bad_args", str(e))
    if ctl._meters_bad is None:
        raise Refused("wrong_phase", "the meters are not damaged: lifetime meters are "
                      "never reset")
    if ctl.journal.state != "open":
        raise Refused("journal_corrupt", "clear journal_corrupt first (the reset "
                      "must be journalled)")
    seq = ctl.journal.last_seq
    kept = ctl.meters.reset(seq)
    ctl.log_event({"ev": "meters_reset", "op": args[0], "reason": ctl._meters_bad,
                     "kept": kept, "seq": seq})
    ctl._meters_bad = None
    cleared = ctl.tilt.clear(args[0], "meters_corrupt")
    if cleared:
        ctl.log_event({"ev": "tilt_clear", "codes": cleared, "op": args[0]})
    ctl.show()
    return {"reset": seq, "kept": kept, "cleared": cleared,
            "active": ctl.active_tilts()}
