# pyright: reportAttributeAccessIssue=false
# (A mixin of pitboss.controller.Controller: the attributes it uses are that one
# object's, set in Controller.__init__, which the checker cannot see from here.)
# How the controller halts: tilts raised (persisted, logged, shown), faults (anything a
# command raised that is not a refusal) answered in the protocol's shape, and the idle
# passes that check the journal after a lazy boot. A mixin of Controller: one object,
# this file holding its tilts.
from pitboss.compat import const
from pitboss.games.table import DEALING
from pitboss.store.record import JournalCorrupt


# Journal records idle() checks per pass (a pass opens the segment, ~6.6 ms of littlefs on a
# Pico, then reads and CRCs a few records, ~0.2 us a byte): a shoe frame arriving meanwhile
# waits in the UART's 256-byte buffer.
_VERIFY_RECORDS = const(4)


def _err(code, message):
    return {"ok": False, "error": {"code": code, "message": message}}


class Halting:
    def raise_tilt(self, code, detail=""):
        """Halt the table: persisted, logged with the time, shown on the display. Never
        raises: a tilt that cannot be recorded still halts the table in RAM."""
        new = code not in [a["code"] for a in self.tilt.active()]
        try:
            self.tilt.raise_tilt(code, detail, max(self.journal.last_seq, 0))
            if new:
                self.log_event({"ev": "tilt", "code": code})
        except OSError:
            pass  # raise_tilt halts in RAM first; the table stays halted this power cycle
        except Exception:  # the tilt store itself failed: halt here instead
            self._unrecorded = {"n": 0, "code": code, "detail": detail[:80], "time": 0,
                                "jseq": 0}
        try:
            # A code already active is on the display already: a flood of lines that
            # re-raise it (bad MACs past the threshold) must not redraw it each time.
            if self.display is not None and new:
                self.display.alarm(code.replace("_", " "), detail)
        except Exception:
            pass  # a broken display must not hide the tilt from the host

    def halted(self):
        return self._unrecorded is not None or self.tilt.tilted

    def idle(self):
        """One idle pass of the main loop (no input waiting): check a few more of the
        journal records the boot left unchecked (Journal.verify, a few ms of a Pico's
        flash). Damage found there, or by a read (recall, export), becomes the
        journal_corrupt tilt, as at boot. Returns the bytes still unchecked."""
        j = self.journal
        why = "found by a read"
        try:
            if j.state == "open":
                left = j.verify(_VERIFY_RECORDS)
                if not left and self._can_erase():
                    j.prepare()  # a region's next sector erased ahead (ringjournal)
                return left
        except JournalCorrupt as e:
            why = "%s %s" % (e.reason, e.where)
        except OSError as e:
            self.raise_tilt("storage_error", "journal check: %s" % e)
            return 0
        if j.state == "corrupt" and not self._corrupt_seen:
            self._corrupt_seen = True
            self.raise_tilt("journal_corrupt", why)
            self.show()
        return 0

    def _can_erase(self):
        # Never while cards are coming (an erase holds the flash ~45 ms): between rounds,
        # or before the deal.
        t = self.table
        return t is None or t.phase != DEALING

    def active_tilts(self):
        a = self.tilt.active()
        if self._unrecorded is not None:
            a.append(self._unrecorded)
        return a

    def fault(self, e):
        """Something raised that is not a refusal: a bug, or storage failing. Halt, and
        answer in the protocol's shape (never raises)."""
        try:
            if isinstance(e, OSError):
                code, what = "storage_error", "storage failed"
            else:
                code, what = "internal_error", "internal error"
            detail = "%s: %s %s" % (what, type(e).__name__, e)
            self.raise_tilt(code, detail[:80])
            return _err(code, detail + "; the table is halted")
        except Exception:
            self._unrecorded = self._unrecorded or {"n": 0, "code": "internal_error",
                                                    "detail": "", "time": 0, "jseq": 0}
            return _err("internal_error", "internal error; the table is halted")
