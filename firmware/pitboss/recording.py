# pyright: reportAttributeAccessIssue=false
# (A mixin of pitboss.controller.Controller: the attributes it uses are that one
# object's, set in Controller.__init__, which the checker cannot see from here.)
# Writing the controller's events to the journal: a record per event (a dealt card's
# formatted into a buffer allocated once), log records that move no round, refused
# authenticated lines counted in aggregate, and the journal's failures turned into the
# tilts that halt the table. A mixin of Controller: one object, this file holding its
# journal writes.
import json

from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.store.record import JournalError, JournalFull


_BAD_MAC_TILT = const(3)  # refused authenticated commands in a row before the table tilts


# Events after which the journal's segment is closed (Journal.append's hold): the round
# is over, the table reconfigured, or the event is not a round's (the host's clock).
_CLOSING_EVENTS = ("settle", "void", "config", "clock")


def compact(obj):
    return json.dumps(obj, separators=(",", ":"))


def _record(ev, result=None):
    """An event's journal payload: compact JSON, and a settlement's or a void's result
    (its only object-valued key; `result`: its JSON, if already made) last, so that
    recall can write the result out from the stored bytes without parsing it
    (_raw_result). MicroPython's dicts keep no key order, so the result is put last by
    hand."""
    if "result" not in ev:
        return compact(ev)
    head = compact({k: ev[k] for k in ev if k != "result"})
    return '%s,"result":%s}' % (head[:-1], result or compact(ev["result"]))


class Recording:
    def reserve(self, nbytes=None):
        """Room in the journal's segment for the next record (nbytes: its payload at
        most; None: the journal's largest), a new segment started now if it lacks it."""
        self.flush_refusals()
        try:
            self.journal.reserve(nbytes)
        except (OSError, JournalError) as e:
            raise self._write_failed(e, "journal")

    def append(self, ev):
        if ev["ev"] == "card" and "t" not in ev and len(ev) <= 3:
            # A dealt card: its record formatted into a buffer allocated once, the bytes
            # the dict below would have given (pitboss.store.cardrec; issue 27).
            t = self.clock()
            if type(t) is int and t >= 0:
                return self._journal(self._card_rec.encode(ev["c"], ev.get("s"), t), True)
        if "t" not in ev:
            # When: the host's time once it has set the clock. On a copy: the round's
            # events kept for the next snapshot stay as small as replay needs them.
            rec = dict(ev)
            rec["t"] = self.clock()
            ev = rec
        result = None
        if "result" in ev:
            # Kept for the reply (reply_text): a settlement's result is its reply, and
            # its JSON is ~10 ms of a Pico's settle line to make (issue 27).
            result = compact(ev["result"])
            self._result_json = (ev["result"], len(ev["result"]), result)
        # A round's records keep the segment open until its settlement or void
        # (Journal.append: an open per card was 1.2 KB of the 4.3 KB of garbage a card
        # left on a Pico); between rounds, where exports and recalls run, it is closed.
        return self._journal(_record(ev, result), ev["ev"] not in _CLOSING_EVENTS)

    def reply_text(self, reply):
        """The JSON text of `reply` if it is the result the last journal record carried
        (a settlement's or a void's) with only "ok": true added since (protocol.call),
        made from that record's JSON instead of a second time; else None. Once."""
        kept = self._result_json
        if kept is None:
            return None
        self._result_json = None
        obj, n, text = kept
        if reply is not obj or len(reply) != n + 1 or reply.get("ok") is not True:
            return None
        return '{"ok":true,' + text[1:] if n else '{"ok":true}'

    def _journal(self, payload, hold):
        try:
            seq = self.journal.append(payload, hold)
        except (OSError, JournalError) as e:
            # The table is ahead of flash now: halt; a reboot replays what is durable.
            raise self._write_failed(e, "journal append")
        if self.journal.full:
            self.raise_tilt("journal_full", "the last free segment is in use: export "
                            "and acknowledge")
        return seq

    def _write_failed(self, e, what):
        """The tilt a journal write that failed raises, and the refusal to answer."""
        if isinstance(e, JournalFull):
            self.raise_tilt("journal_full", str(e))
            return Refused("journal_full", "the journal is full of records not yet "
                           "exported: pitboss export, then the table goes on")
        self.raise_tilt("storage_error", "%s: %s" % (what, e))
        return Refused("storage_error", "the journal could not be written; the table "
                       "is halted")

    def log_event(self, obj):
        """Journal a log record (no round state). Never raises: the A/B records still
        hold what it says, and a broken journal is already a tilt."""
        if self._replaying or self.journal.state != "open":
            return 0
        try:
            if obj["ev"] in ("tilt", "tilt_clear"):
                # When: the floor's collector reports each tilt and clear with its time
                # (host_tools/floor); the tilt log's copy is not authenticated.
                obj["t"] = self.clock()
            return self.journal.append(compact(obj))
        except (OSError, JournalError):
            return 0

    def log_refusal(self, reason, cmd):
        # Counted, and journalled in aggregate (not one record per line: a flood of bad
        # lines must not fill the journal): at the 1st, 2nd, 4th, 8th... refusal and
        # before the next record of any other kind. A power cut loses at most the count
        # since the last of those.
        self._refused[reason] = self._refused.get(reason, 0) + 1
        self._refused_n += 1
        self._refused_cmd = cmd[:40]
        self._refused_total += 1
        n = self._refused_total
        if n & (n - 1) == 0:
            self.flush_refusals()
        if self.auth.failures >= _BAD_MAC_TILT:
            self.raise_tilt("bad_mac", "%d refused authenticated commands in a row"
                       % self.auth.failures)

    def flush_refusals(self):
        if not self._refused_n or self._replaying or self.journal.state != "open":
            return
        rec = {"ev": "auth_refused", "n": self._refused_n, "total": self._refused_total,
               "reasons": self._refused, "cmd": self._refused_cmd}
        self._refused = {}
        self._refused_n = 0
        self.log_event(rec)
