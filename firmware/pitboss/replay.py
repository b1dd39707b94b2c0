# The controller's boot: tilts, keys and meters loaded, the journal opened and its
# newest snapshot and the records after it re-applied (journalling off), then what the
# journal says merged with the A/B records (for pitboss.controller.Controller, whose
# state it is; docs/journal.md). Anything that cannot be trusted becomes a tilt, never a guess.
import json
import time

from pitboss import games
from pitboss.games.table import SETTLED, Table
from pitboss.store.journal import KIND_SNAPSHOT, JournalCorrupt
from pitboss.store.meters import MetersCorrupt
from pitboss.store.tilt import CODES as TILT_CODES
from pitboss.verbs.records import RECALL_MAX, is_settle

def _compact(obj):
    return json.dumps(obj, separators=(",", ":"))


def _record(ev):
    """An event's journal payload: compact JSON, and a settlement's or a void's result
    (its only object-valued key) last, so that recall can write the result out from the
    stored bytes without parsing it (_raw_result). MicroPython's dicts keep no key order,
    so the result is put last by hand."""
    if "result" not in ev:
        return _compact(ev)
    head = _compact({k: ev[k] for k in ev if k != "result"})
    return '%s,"result":%s}' % (head[:-1], _compact(ev["result"]))


# The events a boot's replay applies to the table (and the configured game's decisions:
# Table.decisions()).
_ROUND_EVENTS = ("config", "new", "wager", "deal", "card", "settle", "lost", "void")


def boot(ctl):
    """Load tilts, keys, journal and meters; replay the round in play. Anything that
    cannot be trusted becomes a tilt (which persists) instead of a guess."""
    # ms: each step's chip time (the `mem` reply carries it): issue 11's boot budget
    # is 2 s from reset to the first line, and a full journal is where it goes.
    ms = {}
    rep = {"replayed": 0, "torn": 0, "meters_recovered": 0, "ms": ms}
    t = now_ms()
    ctl.tilt.load()
    ctl.auth.load()
    if ctl.auth.fault in ("key_corrupt", "counter_corrupt"):
        ctl.raise_tilt("auth_store_corrupt", ctl.auth.fault)
    t = _lap(ms, "stores", t)
    if ctl._integrity is not None:
        bad = ctl._integrity()
        if bad:
            ctl.raise_tilt("firmware_mismatch", "; ".join(bad)[:80])
    t = _lap(ms, "integrity", t)
    try:
        # lazy: the boot checks the newest records only (where a torn append can be);
        # the rest are checked as they are read and by idle() after boot, so a full
        # journal boots as fast as an empty one (issue 11; docs/journal.md).
        r = ctl.journal.open(lazy=True)
        rep["torn"] = r["torn"]
        t = _lap(ms, "journal", t)
        ctl._settle_seqs = None  # from the newest snapshot and the replay after it
        rep["replayed"] = _replay(ctl)
        t = _lap(ms, "replay", t)
    except JournalCorrupt as e:
        ctl._corrupt_seen = True
        ctl.raise_tilt("journal_corrupt", "%s %s" % (e.reason, e.where))
    except (ValueError, KeyError, TypeError) as e:  # Refused is a ValueError
        ctl._corrupt_seen = True
        ctl.raise_tilt("journal_corrupt", "replay: %s" % e)
    t = now_ms()
    try:
        ctl.meters.load()  # even with a damaged journal: quarantine numbers after it
        if ctl.journal.state == "open":
            rep["meters_recovered"] = ctl.meters.recover(ctl.journal)
    except MetersCorrupt as e:
        ctl._meters_bad = e.reason
        ctl.raise_tilt("meters_corrupt", e.reason)
    t = _lap(ms, "meters", t)
    if ctl.journal.state == "open":
        _reconcile(ctl)
    elif ctl._settle_seqs is None:  # a corrupt journal: nothing to recall yet
        ctl._settle_seqs = []
    _lap(ms, "reconcile", t)
    t = ctl.table
    if ctl._lost and t is not None and not ctl.halted():
        # The round lost a card but its tilt did not reach flash: halt again, so the
        # round can only be voided, never settled.
        ctl.raise_tilt(ctl._lost if ctl._lost in TILT_CODES else "shoe_fault",
                        "round %d lost a card (%s)" % (t.round, ctl._lost))
    ctl._show()
    return rep

def _reconcile(ctl):
    """After replay: merge what the journal says with the A/B records. A tilt either
    one has active is active (a damaged newest tilt copy reads as an older
    generation, which may predate the raise); the counter is the higher of the two
    (an older counter copy would accept the last line again)."""
    m = ctl.journal.meta.get("round")
    if type(m) is int and m > ctl._round_hw:
        ctl._round_hw = m
    active = [a["code"] for a in ctl.tilt.active()]
    for code in ctl._jtilts:
        if code not in active and code in TILT_CODES:
            ctl.raise_tilt(code, "restored from the journal (the tilt record had "
                            "lost it)")
    for code in active:
        if code not in ctl._jtilts:
            ctl._log_event({"ev": "tilt", "code": code})
    if ctl._jctr > ctl.auth.counter and ctl.auth.fault is None:
        try:
            ctl.auth.restore_counter(ctl._jctr)
        except OSError:
            ctl.raise_tilt("storage_error", "auth counter could not be restored")
    if ctl._settle_seqs is None:
        # No snapshot carried them (one written before they were): scan back for them,
        # a read of up to every segment (137 ms of a Pico's boot for one).
        ctl._settle_seqs = ctl.journal.last(RECALL_MAX, is_settle, seqs=True)
    ctl._hold()
    if ctl.journal.full:
        ctl.raise_tilt("journal_full", "export and acknowledge the journal")

def _replay(ctl):
    n = 0
    ctl._replaying = True
    try:
        for seq, kind, payload in ctl.journal.replay():
            obj = json.loads(payload)
            ev = obj.get("ev")
            if kind == KIND_SNAPSHOT:
                _restore(ctl, obj, seq)
            elif ev in _ROUND_EVENTS or (
                    ctl.table is not None and ev in ctl.table.decisions()):
                ctl.apply(obj, seq)
            elif ev == "tilt":
                if obj["code"] not in ctl._jtilts:
                    ctl._jtilts.append(obj["code"])
            elif ev == "tilt_clear":
                ctl._jtilts = [c for c in ctl._jtilts if c not in obj["codes"]]
            elif ev == "auth_ok":
                ctl._jctr = max(ctl._jctr, obj["ctr"])
            elif ev == "auth_refused":
                ctl._refused_total = max(ctl._refused_total, obj.get("total", 0))
            else:
                continue  # a log entry (meters_reset): no state in it
            n += 1
    finally:
        ctl._replaying = False
    return n

def snapshot(ctl, seq):
    # Meters must never fall behind the oldest segment the journal keeps.
    if ctl._meters_bad is None:
        # (Damaged meters are never written over: meters-reset keeps them.)
        ctl.meters.checkpoint(seq - 1)
    # The table's state and what the journal must carry across segments: the active
    # tilts, the auth counter, the highest round number, the refusal count.
    snap = {"ev": "snap", "cfg": None, "tilts": [a["code"] for a in ctl.active_tilts()],
            "ctr": ctl.auth.counter, "rhw": ctl._round_hw,
            "refused": ctl._refused_total}
    if ctl.table is not None:
        snap["cfg"] = ctl.table.config()
        snap["round"] = ctl.table.round
        snap["settled"] = ctl.table.phase == SETTLED
        snap["events"] = ctl._events
    if ctl.shoe_last is not None:
        snap["shoe"] = list(ctl.shoe_last)
    if ctl._settle_seqs is not None:
        snap["settles"] = ctl._settle_seqs  # so a boot need not scan back for them
    return _compact(snap)

def _restore(ctl, snap, seq=0):
    ctl.table = None
    ctl._events = []
    ctl._hidden_from = 0
    ctl._jtilts = list(snap.get("tilts", ()))
    ctl._jctr = max(ctl._jctr, snap.get("ctr", 0))
    ctl._round_hw = max(ctl._round_hw, snap.get("rhw", 0), snap.get("round", 0))
    ctl._refused_total = max(ctl._refused_total, snap.get("refused", 0))
    ctl._lost = None
    shoe = snap.get("shoe")
    ctl.shoe_last = tuple(shoe) if shoe else None
    settles = snap.get("settles")
    ctl._settle_seqs = list(settles) if type(settles) is list else None
    if snap.get("cfg") is None:
        return
    ctl.table = Table(snap["cfg"], rng=ctl._rng)
    games.release(ctl.table.game)  # a replay that crosses games holds one of them
    ctl.table.round = snap["round"]
    if snap.get("settled"):
        # A settled round stays settled: the next wager opens round + 1, never this
        # number again (its settlement is in an earlier segment).
        ctl.table.phase = SETTLED
    for ev in snap["events"]:
        ctl.apply(ev, seq)


def _same(a, b):
    """Is `a` (what the engine returned) the value `b` (the same, read back from its JSON)
    stands for: tuples as lists, int keys as strings, True not 1? Compared in place: a
    replayed Pai Gow settlement compared through a JSON round trip held four copies of a
    ~2 KB result at once, and raised MemoryError on a fragmented Pico heap (issue 11)."""
    if isinstance(a, dict):
        if type(b) is not dict or len(a) != len(b):
            return False
        for k in a:
            kb = k if type(k) is str else str(k)
            if kb not in b or not _same(a[k], b[kb]):
                return False
        return True
    if isinstance(a, (list, tuple)):
        if type(b) is not list or len(a) != len(b):
            return False
        for i in range(len(a)):
            if not _same(a[i], b[i]):
                return False
        return True
    if type(a) is bool or type(b) is bool:
        return a is b
    return type(a) is type(b) and a == b


def now_ms():
    f = getattr(time, "ticks_ms", None)  # MicroPython; CPython has no ticks
    return f() if f is not None else int(time.time() * 1000)


def _lap(into, step, t0):
    """into[step] = ms since t0 (the ticks counter wraps: small differences only)."""
    t = now_ms()
    into[step] = (t - t0) & 0x3FFFFFFF
    return t
