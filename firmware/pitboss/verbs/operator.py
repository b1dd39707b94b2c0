# The operator's verbs: authenticated commands (the line checked here, its verb run by
# pitboss.verbs), configuration, tilt clearing, a damaged meters' reset, the clock, the
# firmware's seeded verification, re-keying, memory and the display's RAM.
import gc
import json

from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.store import integrity
from pitboss.store.tilt import CODES as TILT_CODES
from pitboss.store.tilt import check_operator

CLOCK_MIN = 1577836800  # 2020-01-01: a time before it is a host with a wrong clock
CLOCK_MAX = 4102444800  # 2100-01-01
_BAD_MAC_TILT = const(3)  # refused authenticated commands in a row before the table tilts
_SCREEN_CHUNK = const(128)  # display RAM bytes per `screen` reply line (256 hex digits)


def auth(ctl, args):
    """auth COUNTER MAC VERB ...: the line's MAC and counter checked (pitboss.store.auth);
    returns (verb, the rest of the line). A refusal is counted and journalled in
    aggregate (log_refusal); a counter that cannot be saved halts the table."""
    ok, reason, cmd = ctl.auth.check_line("auth " + " ".join(args))
    if reason == "store_error":
        # The counter could not be saved (a flash write failed): a storage fault, not
        # the sender's mistake.
        ctl.raise_tilt("storage_error", "auth counter could not be saved")
        raise Refused("storage_error", "the authentication counter could not be "
                      "written; the table is halted")
    if not ok:
        log_refusal(ctl, reason, cmd)
        raise Refused(reason, "authenticated command refused: %s" % reason)
    flush_refusals(ctl)
    ctl._log_event({"ev": "auth_ok", "ctr": ctl.auth.counter})
    words = cmd.split(None, 1)
    return (words[0].lower() if words else ""), (words[1] if len(words) > 1 else "")


def log_refusal(ctl, reason, cmd):
    # Counted, and journalled in aggregate (not one record per line: a flood of bad
    # lines must not fill the journal): at the 1st, 2nd, 4th, 8th... refusal and
    # before the next record of any other kind. A power cut loses at most the count
    # since the last of those.
    ctl._refused[reason] = ctl._refused.get(reason, 0) + 1
    ctl._refused_n += 1
    ctl._refused_cmd = cmd[:40]
    ctl._refused_total += 1
    n = ctl._refused_total
    if n & (n - 1) == 0:
        flush_refusals(ctl)
    if ctl.auth.failures >= _BAD_MAC_TILT:
        ctl.raise_tilt("bad_mac", "%d refused authenticated commands in a row"
                       % ctl.auth.failures)

def flush_refusals(ctl):
    if not ctl._refused_n or ctl._replaying or ctl.journal.state != "open":
        return
    rec = {"ev": "auth_refused", "n": ctl._refused_n, "total": ctl._refused_total,
           "reasons": ctl._refused, "cmd": ctl._refused_cmd}
    ctl._refused = {}
    ctl._refused_n = 0
    ctl._log_event(rec)


def config(ctl, rest):
    """config JSON (authenticated): the table's configuration (pitboss.games.table)."""
    try:
        cfg = json.loads(rest)
    except ValueError:
        raise Refused("bad_args", "config takes one JSON object")
    if ctl.halted():
        raise Refused("tilted", "clear the tilt before changing the configuration")
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
        ctl.journal.quarantine(ctl.meters.seq + 1)
        ctl._corrupt_seen = False
        ctl._settle_seqs = []  # they were in the journal set aside
    cleared = ctl.tilt.clear(args[0], args[1] if len(args) > 1 else None)
    if cleared:
        ctl._log_event({"ev": "tilt_clear", "codes": cleared, "op": args[0]})
    if ctl._unrecorded is not None and (len(args) < 2
                                        or args[1] == ctl._unrecorded["code"]):
        cleared.append(ctl._unrecorded["code"])
        ctl._unrecorded = None
    reply = {"cleared": cleared, "active": ctl.active_tilts()}
    if ctl._lost and cleared:
        # The misdealt round is voided, never settled misaligned: wagers returned,
        # journalled (recall shows it).
        reply["voided"] = ctl.apply({"ev": "void"})["result"]
    ctl._show()
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
    ctl._log_event({"ev": "meters_reset", "op": args[0], "reason": ctl._meters_bad,
                    "kept": kept, "seq": seq})
    ctl._meters_bad = None
    cleared = ctl.tilt.clear(args[0], "meters_corrupt")
    if cleared:
        ctl._log_event({"ev": "tilt_clear", "codes": cleared, "op": args[0]})
    ctl._show()
    return {"reset": seq, "kept": kept, "cleared": cleared,
            "active": ctl.active_tilts()}


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
        ctl._reserve()
        ctl._append({"ev": "clock", "t": t, "was": clk()})
        setter(t)
    return {"time": clk(), "set": bool(getattr(clk, "is_set", False))}


def mem(ctl, args):
    """mem: {free, alloc, min_free, max_block, up_ms, boot_ms, unchecked} in bytes
    after a collection; max_block (the largest single allocation that would succeed)
    is found by trial allocations bisected between 0 and free, done only here, on
    request. None on a port without gc.mem_free (CPython)."""
    import time

    app = ctl.app
    # up_ms: chip time since reset when this line is taken (the boot budget)
    up = getattr(time, "ticks_ms", None)
    up = up() if up is not None else None
    gc.collect()
    free = mem_free()
    app.note_mem()
    if free is None:
        return {"free": None, "alloc": None, "min_free": None, "max_block": None,
                "up_ms": up}
    # unchecked: journal bytes the boot left for the idle passes to check (0: done)
    return {"free": free, "alloc": gc.mem_alloc(), "min_free": app.min_free,
            "max_block": _max_block(free), "up_ms": up, "boot_ms": app.boot["ms"],
            "unchecked": ctl.journal.unchecked}


def mem_free():
    f = getattr(gc, "mem_free", None)  # MicroPython only
    return f() if f is not None else None


def _max_block(free):
    """The largest bytearray that can be allocated now: bisected by trial allocations,
    each dropped at once (MicroPython has no API for the largest free block)."""
    lo, hi = 0, free
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            b = bytearray(mid)
        except MemoryError:
            hi = mid - 1
        else:
            b = None
            lo = mid
        gc.collect()
    return lo


def verify(ctl, args):
    """verify SEED_HEX: the seeded answer over every file (pitboss.store.integrity), for a
    verifier that compares it with its own build; needs no key, reveals no secret."""
    from binascii import unhexlify
    import sys

    app = ctl.app
    if len(args) != 1:
        raise Refused("bad_args", "usage: verify SEED_HEX (%d..%d bytes)"
                      % (integrity.SEED_MIN, integrity.SEED_MAX))
    try:
        seed = unhexlify(args[0])
    except ValueError:
        raise Refused("bad_args", "the seed is not hex")
    if not integrity.SEED_MIN <= len(seed) <= integrity.SEED_MAX:
        # Checked here: a ValueError from inside would be an internal_error tilt.
        raise Refused("bad_args", "the seed must be %d..%d bytes"
                      % (integrity.SEED_MIN, integrity.SEED_MAX))
    reply = integrity.seeded_answer(seed)
    info, _ = integrity.parse_manifest(integrity.read_manifest() or "")
    mac = ctl.auth.mac()
    seal = integrity.read_manifest(integrity.SEAL)
    reply.update(board=app.hw.NAME, platform=sys.platform,
                 mpy=getattr(sys.implementation, "_mpy", 0),
                 mode=info.get("mode"), state=info.get("state"),
                 sealed=None if mac is None else (
                     seal is not None and seal.strip() == integrity.seal_of(
                         mac, integrity.read_manifest() or "")))
    return reply


def provision(ctl, args):
    """auth N MAC provision WRAPPED_HEX FINGERPRINT: a new key, from production, for
    whoever holds the current one (pitboss.store.auth.Auth.rekey)."""
    if len(args) != 2:
        raise Refused("bad_args", "usage: provision WRAPPED_KEY_HEX FINGERPRINT")
    a = ctl.auth
    try:
        return {"provisioned": a.rekey(a.counter, args[0], args[1])}
    except ValueError as e:  # a refused re-key (no key, bad hex, wrong fingerprint)
        raise Refused("bad_args", str(e))


def screen(ctl, args):
    """screen [CHUNK]: the display RAM as hex, _SCREEN_CHUNK bytes per reply line (a
    host asks for chunk 0..of-1), so no reply holds the whole frame as one string."""
    app = ctl.app
    hw = app.hw
    dev = getattr(hw, "display_device", None)
    if dev is not None:
        ram = dev().ram  # the virtual board: the simulated controller's own GDDRAM
    elif app.display is not None:
        ram = app.display.fb.buf  # a real board: what the driver last sent
    else:
        raise Refused("no_display", "this table has no display")
    of = (len(ram) + _SCREEN_CHUNK - 1) // _SCREEN_CHUNK
    i = 0
    if args:
        if not args[0].isdigit():
            raise Refused("bad_args", "usage: screen [CHUNK 0..%d]" % (of - 1))
        i = int(args[0])
    if i >= of:
        raise Refused("bad_args", "chunk %d of %d" % (i, of))
    from binascii import hexlify

    return {"chunk": i, "of": of, "width": hw.DISPLAY_WIDTH,
            "height": hw.DISPLAY_HEIGHT,
            "hex": hexlify(bytes(ram[i * _SCREEN_CHUNK:(i + 1) * _SCREEN_CHUNK])).decode()}

