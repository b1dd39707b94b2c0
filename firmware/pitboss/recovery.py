# pyright: reportAttributeAccessIssue=false
# (A mixin of pitboss.controller.Controller: the attributes it uses are that one
# object's, set in Controller.__init__, which the checker cannot see from here.)
# The controller's boot: load the stores, open the journal, replay the round in play
# from the newest snapshot, and reconcile what the journal says with the A/B records
# (pitboss.controller's header says why each is kept twice). Anything that cannot be
# trusted becomes a tilt, never a guess. A mixin of Controller: one object, this file
# holding its recovery.
import json
import time

from pitboss.games import release
from pitboss.recording import compact
from pitboss.games.table import SETTLED, Table
from pitboss.halting import event_dict
from pitboss.store.record import JournalCorrupt
from pitboss.store.record import KIND_SNAPSHOT
from pitboss.store.meters import MetersCorrupt
from pitboss.store.tilt import CODES as TILT_CODES
from pitboss.store.record import RECALL_MAX, is_settle, loads


# The events a boot's replay applies to the table (and the configured game's decisions:
# Table.decisions()).
_ROUND_EVENTS = ("config", "new", "wager", "deal", "card", "settle", "lost", "void")


def now_ms():
    f = getattr(time, "ticks_ms", None)  # MicroPython; CPython has no ticks
    return f() if f is not None else int(time.time() * 1000)


def _lap(into, step, t0):
    """into[step] = ms since t0 (the ticks counter wraps: small differences only)."""
    t = now_ms()
    into[step] = (t - t0) & 0x3FFFFFFF
    return t


class Recovery:
    def boot(self):
        """Load tilts, keys, journal and meters; replay the round in play. Anything that
        cannot be trusted becomes a tilt (which persists) instead of a guess."""
        # ms: each step's chip time (the `mem` reply carries it): issue 11's boot budget
        # is 2 s from reset to the first line, and a full journal is where it goes.
        ms = {}
        rep = {"replayed": 0, "torn": 0, "meters_recovered": 0, "ms": ms}
        t = now_ms()
        self.tilt.load()
        self.auth.load()
        if self.auth.fault in ("key_corrupt", "counter_corrupt"):
            self.raise_tilt("auth_store_corrupt", self.auth.fault)
        t = _lap(ms, "stores", t)
        if self._integrity is not None:
            bad = self._integrity()
            if bad:
                self.raise_tilt("firmware_mismatch", "; ".join(bad)[:80])
        t = _lap(ms, "integrity", t)
        self._scratch(True)
        try:
            t = self._boot_journal(rep, ms, t)
        finally:
            self._scratch(False)  # (the reconcile's scans hold what they read: no views)
        if self.journal.state == "open":
            self._reconcile()
        elif self._settle_seqs is None:  # a corrupt journal: nothing to recall yet
            self._settle_seqs = []
        _lap(ms, "reconcile", t)
        t = self.table
        if self._lost and t is not None and not self.halted():
            # The round lost a card but its tilt did not reach flash: halt again, so the
            # round can only be voided, never settled.
            self.raise_tilt(self._lost if self._lost in TILT_CODES else "shoe_fault",
                            "round %d lost a card (%s)" % (t.round, self._lost))
        self.show()
        return rep

    def _scratch(self, on):
        """While the boot reads the journal (replay, meters' recovery), a region's long
        records are read into one buffer of the journal's largest payload, taken before
        the replay fragments the heap (a stock image's boot after two six-seat Pai Gow
        rounds found no 2.3 KB block for a settlement's record), and let go after."""
        j = self.journal
        if not hasattr(j, "scratch"):
            return
        j.scratch = None
        if on:
            try:
                j.scratch = bytearray(j.max_payload)
            except MemoryError:
                pass  # each record then takes a block of its own, as before

    def _boot_journal(self, rep, ms, t):
        """The journal opened, the round replayed, the meters recovered; returns the
        time the step ended (boot's laps)."""
        try:
            # lazy: the boot checks the newest records only (where a torn append can be);
            # the rest are checked as they are read and by idle() after boot, so a full
            # journal boots as fast as an empty one (issue 11; docs/journal.md).
            r = self.journal.open(lazy=True)
            rep["torn"] = r["torn"]
            t = _lap(ms, "journal", t)
            self._settle_seqs = None  # from the newest snapshot and the replay after it
            rep["replayed"] = self._replay()
            t = _lap(ms, "replay", t)
        except JournalCorrupt as e:
            self._corrupt_seen = True
            self.raise_tilt("journal_corrupt", "%s %s" % (e.reason, e.where))
        except (ValueError, KeyError, TypeError) as e:  # Refused is a ValueError
            self._corrupt_seen = True
            self.raise_tilt("journal_corrupt", "replay: %s" % e)
        t = now_ms()
        try:
            self.meters.load()  # even with a damaged journal: quarantine numbers after it
            if self.journal.state == "open":
                rep["meters_recovered"] = self.meters.recover(self.journal)
        except MetersCorrupt as e:
            self._meters_bad = e.reason
            self.raise_tilt("meters_corrupt", e.reason)
        return _lap(ms, "meters", t)

    def _reconcile(self):
        """After replay: merge what the journal says with the A/B records. A tilt either
        one has active is active (a damaged newest tilt copy reads as an older
        generation, which may predate the raise); the counter is the higher of the two
        (an older counter copy would accept the last line again)."""
        m = self.journal.meta.get("round")
        if type(m) is int and m > self._round_hw:
            self._round_hw = m
        active = [a["code"] for a in self.tilt.active()]
        for code in self._jtilts:
            if code not in active and code in TILT_CODES:
                self.raise_tilt(code, "restored from the journal (the tilt record had "
                                "lost it)")
        for code in active:
            if code not in self._jtilts:
                self.log_event({"ev": "tilt", "code": code})
        if self._jctr > self.auth.counter and self.auth.fault is None:
            try:
                self.auth.restore_counter(self._jctr)
            except OSError:
                self.raise_tilt("storage_error", "auth counter could not be restored")
        if self._settle_seqs is None:
            # No snapshot carried them (one written before they were): scan back for them,
            # a read of up to every segment (137 ms of a Pico's boot for one).
            self._settle_seqs = self.journal.last(RECALL_MAX, is_settle, seqs=True)
        self._hold()
        if self.journal.full:
            self.raise_tilt("journal_full", "export and acknowledge the journal")

    def _replay(self):
        n = 0
        self._replaying = True
        try:
            for seq, kind, payload in self.journal.replay():
                obj = loads(payload)
                ev = obj.get("ev")
                if kind == KIND_SNAPSHOT:
                    self._restore(obj, seq)
                elif ev in _ROUND_EVENTS or (
                        self.table is not None and ev in self.table.decisions()):
                    self.apply(obj, seq)
                elif ev == "tilt":
                    if obj["code"] not in self._jtilts:
                        self._jtilts.append(obj["code"])
                elif ev == "tilt_clear":
                    self._jtilts = [c for c in self._jtilts if c not in obj["codes"]]
                elif ev == "auth_ok":
                    self._jctr = max(self._jctr, obj["ctr"])
                elif ev == "auth_refused":
                    self._refused_total = max(self._refused_total, obj.get("total", 0))
                else:
                    continue  # a log entry (meters_reset): no state in it
                n += 1
        finally:
            self._replaying = False
        return n

    def _snapshot(self, seq):
        # Meters must never fall behind the oldest segment the journal keeps.
        if self._meters_bad is None:
            # (Damaged meters are never written over: meters-reset keeps them.)
            self.meters.checkpoint(seq - 1)
        # The table's state and what the journal must carry across segments: the active
        # tilts, the auth counter, the highest round number, the refusal count.
        snap = {"ev": "snap", "cfg": None, "tilts": [a["code"] for a in self.active_tilts()],
                "ctr": self.auth.counter, "rhw": self._round_hw,
                "refused": self._refused_total}
        if self.table is not None:
            snap["cfg"] = self.table.config()
            snap["round"] = self.table.round
            snap["settled"] = self.table.phase == SETTLED
            # (a shoe's card is an int in the list, its dict here: halting.event_dict)
            snap["events"] = [event_dict(e) for e in self._events]
        v = self.shoe_last  # the shoe's last frame as its card event's int (Dealing.deal)
        if v is not None:
            snap["shoe"] = [(v >> 6) - 1, v & 63]  # [seq, card]
        if self._settle_seqs is not None:
            snap["settles"] = self._settle_seqs  # so a boot need not scan back for them
        return compact(snap)

    def _restore(self, snap, seq=0):
        self.table = None
        self._events = []
        self._hidden_from = 0
        self._jtilts = list(snap.get("tilts", ()))
        self._jctr = max(self._jctr, snap.get("ctr", 0))
        self._round_hw = max(self._round_hw, snap.get("rhw", 0), snap.get("round", 0))
        self._refused_total = max(self._refused_total, snap.get("refused", 0))
        self._lost = None
        shoe = snap.get("shoe")
        self.shoe_last = shoe[1] | (shoe[0] + 1) << 6 if shoe else None
        settles = snap.get("settles")
        self._settle_seqs = list(settles) if type(settles) is list else None
        if snap.get("cfg") is None:
            return
        self.table = Table(snap["cfg"], rng=self._rng)
        release(self.table.game)  # a replay that crosses games holds one of them
        self.table.round = snap["round"]
        if snap.get("settled"):
            # A settled round stays settled: the next wager opens round + 1, never this
            # number again (its settlement is in an earlier segment).
            self.table.phase = SETTLED
        for ev in snap["events"]:
            self.apply(ev, seq)
