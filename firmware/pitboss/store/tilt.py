# Tilts: conditions that halt play until an operator clears them. The state is kept on
# flash (an A/B record, pitboss.store.slots.Slots), so a tilt survives any number of power
# cycles; every raise and clear goes into a bounded log with its time.
#
# Fail-safe in both directions: raise_tilt() takes effect in RAM before the save (if the
# flash write fails the table is still halted for this power cycle), clear() takes effect
# only after its save (if the write fails the table stays halted). An unreadable tilt
# record is itself a tilt (tilt_store_corrupt): a table that cannot tell whether it was
# tilted must assume it was.
import json
import time

from pitboss.store.slots import SlotCorrupt, Slots
from pitboss.compat import const

# The codes (docs/journal.md explains each and who raises it).
CODES = (
    "journal_corrupt",  # the journal has damage that recovery must not guess about
    "duplicate_card",  # the same card twice in one round
    "wrong_card_count",  # a hand with the wrong number of cards
    "unknown_rfid_tag",  # an RFID tag that is not in the deck map
    "firmware_mismatch",  # pitboss.store.integrity.check() found files unlike the manifest
    "bad_mac",  # authenticated commands keep failing (the controller's threshold)
    "meters_corrupt",  # meters unreadable, or disagreeing with the journal
    "tilt_store_corrupt",  # this module's own record was unreadable
    "auth_store_corrupt",  # the auth key or counter record was unreadable
    "storage_error",  # a flash read or write failed (an OSError inside a command)
    "internal_error",  # a command raised something that is not a refusal: a bug
    "shoe_fault",  # the shoe or card reader itself failed (an I/O error, a bad deck map)
    # Misdeals: a card the table did not take as dealt (docs/protocol.md, Misdeals). The
    # round they happen in is voided on tilt-clear, never settled.
    "shoe_bad_frame",  # a torn frame not resent within the resend timeout: a card lost
    "shoe_gap",  # the shoe's sequence skipped frames: cards are missing
    "shoe_stale",  # a frame older than the last one
    "shoe_conflict",  # the last frame's number again with another card
    "shoe_bad_card",  # an intact frame naming no card (id above 52)
    "shoe_restart",  # the shoe restarted its count in the middle of a deal
    "joker_in_deck",  # a joker (frame or RFID tag) at a game played without one
    "extra_card",  # a card after the deal was complete
    "card_before_deal",  # a card with no deal in progress
    "rfid_read_error",  # RFID: a read failed (CRC, check byte, protocol): a card unread
    "rfid_reader_fault",  # RFID: the reader chip does not answer
    "rfid_collision",  # RFID: two tags in the field at once
    "rfid_wrong_deck",  # RFID: a tag of another registered deck than the one dealt
    "journal_full",  # the journal's flash budget is used up by records not yet exported
    "display_fault",  # the table display is missing or failed; the table runs without it
)
_VERSION = const(1)
_DETAIL_MAX = const(80)


def _default_clock():
    return int(time.time())


def check_operator(op):
    """An operator id is one word on the protocol line: nothing in it can split it or
    end the line (the host checks it with this same function before sending)."""
    ok = isinstance(op, str) and 0 < len(op) <= 32
    for c in op if ok else ():
        if not (c.isalpha() or c.isdigit() or c in "_.-@"):
            ok = False
    if not ok:
        raise ValueError("operator id %r: 1 to 32 letters, digits and _.-@ (no spaces)"
                         % (op,))
    return op


class Tilt:
    def __init__(self, path="/state/tilt", fs=None, clock=None, log_max=32):
        if not isinstance(log_max, int) or log_max < 1:
            raise ValueError("log_max must be >= 1")
        self._slots = Slots(path, fs)
        self.clock = clock or _default_clock
        self.log_max = log_max
        self.n = 0  # event counter: every raise and clear gets the next number
        self._active = []  # [n, code, detail, time, jseq]
        self._log = []  # [n, "raise"|"clear", code, detail, time, operator]

    # ---- persistence ----
    def load(self):
        """Read the stored state. An unreadable record raises tilt_store_corrupt (kept
        in RAM even if it cannot be written) instead of failing."""
        try:
            text = self._slots.load()
            if text is not None:
                obj = json.loads(text)
                if obj["v"] != _VERSION:
                    raise ValueError("version %r" % (obj["v"],))
                self.n = obj["n"]
                self._active = [list(a) for a in obj["active"]]
                self._log = [list(e) for e in obj["log"]]
            else:
                self.n = 0
                self._active = []
                self._log = []
        except (SlotCorrupt, ValueError, KeyError, TypeError) as e:
            self.n = 0
            self._active = []
            self._log = []
            try:
                self.raise_tilt("tilt_store_corrupt", str(e))
            except OSError:
                pass  # halted in RAM all the same; the next boot finds the same fault
        return self

    def _save(self, active, log, n):
        self._slots.save(json.dumps({"v": _VERSION, "n": n, "active": active, "log": log}))

    def _now(self):
        return int(self.clock())

    # ---- operations ----
    @property
    def tilted(self):
        return bool(self._active)

    def raise_tilt(self, code, detail="", jseq=0):
        """Halt play for `code` (one of CODES). detail: short text (cut to 80 chars);
        jseq: the journal seq it relates to, if any. A code already active is not raised
        twice. Returns the active entry as a dict."""
        if code not in CODES:
            raise ValueError("unknown tilt code %r" % (code,))
        if not isinstance(detail, str):
            raise TypeError("detail must be str")
        if not isinstance(jseq, int) or jseq < 0:
            raise ValueError("jseq must be an int >= 0")
        for a in self._active:
            if a[1] == code:
                return _entry(a)
        detail = detail[:_DETAIL_MAX]
        n = self.n + 1
        t = self._now()
        a = [n, code, detail, t, jseq]
        # RAM first: the table is halted even if the write below fails.
        self._active = self._active + [a]
        self.n = n
        self._log = (self._log + [[n, "raise", code, detail, t, ""]])[-self.log_max:]
        self._save(self._active, self._log, n)
        return _entry(a)

    def clear(self, operator_id, code=None):
        """Clear every active tilt (or only `code`), logged with the operator and time.
        Returns the codes cleared ([] if there was nothing to clear)."""
        check_operator(operator_id)
        if code is not None and code not in CODES:
            raise ValueError("unknown tilt code %r" % (code,))
        gone = [a for a in self._active if code is None or a[1] == code]
        if not gone:
            return []
        keep = [a for a in self._active if not (code is None or a[1] == code)]
        n = self.n
        t = self._now()
        log = list(self._log)
        for a in gone:
            n += 1
            log.append([n, "clear", a[1], a[2], t, operator_id])
        log = log[-self.log_max:]
        self._save(keep, log, n)  # only a durable clear counts
        self._active = keep
        self._log = log
        self.n = n
        return [a[1] for a in gone]

    # ---- reading ----
    def active(self):
        return [_entry(a) for a in self._active]

    def log(self):
        """Oldest first: {'n', 'ev' ('raise'/'clear'), 'code', 'detail', 'time', 'op'}."""
        return [{"n": e[0], "ev": e[1], "code": e[2], "detail": e[3], "time": e[4],
                 "op": e[5]} for e in self._log]


def _entry(a):
    return {"n": a[0], "code": a[1], "detail": a[2], "time": a[3], "jseq": a[4]}
