# pyright: reportAttributeAccessIssue=false
# (A mixin of pitboss.controller.Controller: the attributes it uses are that one
# object's, set in Controller.__init__, which the checker cannot see from here.)
# How the controller halts: tilts raised (persisted, logged, shown), faults (anything a
# command raised that is not a refusal) answered in the protocol's shape, the idle
# passes that check the journal after a lazy boot, and misdeals (the shoe's cards and
# alarms, below). Mixins of Controller: one object, this file holding its tilts.
from pitboss import protocol
from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.games.table import CONFIGURED, DEALING
from pitboss.store.record import JournalCorrupt, JournalError
from pitboss.rules.cards import parse


# Journal records idle() checks per pass (a pass opens the segment, ~6.6 ms of littlefs on a
# Pico, then reads and CRCs a few records, ~0.2 us a byte): a shoe frame arriving meanwhile
# waits in the UART's 256-byte buffer.
_VERIFY_RECORDS = const(4)


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
        flash), or erase the journal's next sector ahead. Damage found there, or by a
        read (recall, export), becomes the journal_corrupt tilt, as at boot. Returns
        the bytes still unchecked, or 1 while other idle work is left: 0 when there is
        nothing to do until input comes (the main loop then waits longer)."""
        if self.meters.unsaved:
            try:
                self.meters.flush()  # a settlement counted in the line (save_when_idle)
            except OSError as e:
                self.raise_tilt("storage_error", "meters save: %s" % e)
            return 1
        if self._program_step is not None:
            self.check_program(False)
            return 1
        j = self.journal
        why = "found by a read"
        try:
            if j.state == "open":
                left = j.verify(_VERIFY_RECORDS)
                if not left and self._can_erase() and not j.prepare() and not j.full:
                    # A region's next sector erased ahead (ringjournal), one a pass
                    # while more are left: the next pass comes soon. (A full journal
                    # waits for an export: nothing to do until then.)
                    return 1
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

    def check_program(self, finish):
        """The program check the boot deferred (the MicroPython core's hash, ~0.37 s of a
        Pico: pitboss_program.step): one chunk per idle pass, and with `finish` all that
        is left, which every card and every verb that moves the round asks for first, so
        nothing is dealt on a core that was not checked. A mismatch is the
        firmware_mismatch tilt, as at boot."""
        step = self._program_step
        while step is not None:
            why = step()
            if why is None:
                if finish:
                    continue
                return
            self._program_step = step = None
            if why:
                self.raise_tilt("firmware_mismatch", why[:80])
                self.show()

    def program_pending(self):
        """Is part of the boot's program check still to do (check_program)?"""
        return self._program_step is not None

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
            return protocol.error(code, detail + "; the table is halted")
        except Exception:
            self._unrecorded = self._unrecorded or {"n": 0, "code": "internal_error",
                                                    "detail": "", "time": 0, "jseq": 0}
            return protocol.error("internal_error", "internal error; the table is halted")


# ---- misdeals: the shoe's cards and alarms ---------------------------------------------
# The shoe's cards and alarms as the table takes them (issue 12; docs/protocol.md,
# Misdeals): a dealt card goes through the controller as the `card` verb does; a card
# the table refuses, or an alarm that can mean a card lost or wrong, is a misdeal: a
# tilt with its own code and the round in play marked lost (voided at tilt-clear,
# never settled misaligned). The policy is one table indexed by the shoe's event codes.
# Every shoe alarm that can mean a card missing or wrong, by the shoe's named event code
# (pitboss.hw.shoe): the tilt it raises, and when. Each marks the round in play lost.
# Notices (garbage between frames, a retransmission, a torn frame: EV_MALFORMED and
# EV_BAD_CRC, which the acknowledged shoe sends again) are not here.
_MID_DEAL = const(1)  # only in the middle of a deal (below)
_HIDE_CARD = const(2)  # its info is a card, which may be face down: say where, not what
# (A tuple of constants indexed by the code, frozen into flash with the code; a dict keyed
# by the imported names would be built on the heap at import, with a global for each name,
# and the full journal's boot has no byte to spare, issue 27. tests/host/test_misdeal.py
# checks each row against its name.)
_SHOE_ALARMS = (
    None,  # 0: no event
    None,  # EV_GARBAGE (a notice)
    None,  # EV_MALFORMED (a notice: the shoe sends it again)
    None,  # EV_BAD_CRC (a notice: the shoe sends it again)
    ("shoe_bad_card", 0),  # EV_BAD_CARD
    ("shoe_gap", 0),  # EV_DROPPED
    None,  # EV_REPEAT (a notice)
    ("shoe_conflict", _HIDE_CARD),  # EV_CONFLICT
    ("shoe_stale", _HIDE_CARD),  # EV_STALE
    # a restart of the shoe's count is harmless before the first card of a deal
    ("shoe_restart", _MID_DEAL),  # EV_RESTART
    ("duplicate_card", _HIDE_CARD),  # EV_DUPLICATE
    ("unknown_rfid_tag", 0),  # EV_UNKNOWN_TAG
    ("rfid_wrong_deck", 0),  # EV_WRONG_DECK
    ("rfid_collision", 0),  # EV_COLLISION
    ("rfid_read_error", 0),  # EV_READ_ERROR
    ("rfid_reader_fault", 0),  # EV_READER_FAULT
    # a torn frame nothing intact followed within the resend timeout
    # (docs/shoe-protocol.md, "Transport errors and misdeals")
    ("shoe_bad_frame", _MID_DEAL),  # EV_UNRESENT
)
# A card from the shoe that the table refuses was still dealt on the felt: a misdeal,
# by the table's refusal code (anything else: shoe_fault).
# (Pairs in a tuple of constants: frozen into flash with the code, where a dict is built
# on the heap at import and kept; the full journal's boot has no byte to spare, issue 27.)
_SHOE_REFUSALS = (("joker_not_allowed", "joker_in_deck"), ("deal_complete", "extra_card"),
                  ("wrong_phase", "card_before_deal"), ("not_configured", "card_before_deal"),
                  ("duplicate_card", "duplicate_card"), ("unknown_card", "shoe_bad_card"))


# Journal room a card's record reserves (deal(), and Controller.apply for the `card`
# verb): its JSON is at most 68 bytes (pitboss.store.cardrec), one with a reader's seat a
# few more. (No underscore: a const() named with one cannot be imported on MicroPython.)
CARD_RESERVE = const(128)


# A shoe's card event ({"ev": "card", "c": c[, "s": s]}) as the round's event list holds
# it: c | (s + 1) << 6, or c where there is no frame count; one int, small (no heap) for
# any frame count below 2**23. Dealing.deal and Controller.apply write it; event_dict
# turns it back for the snapshot.


def event_dict(e):
    """An event of the round's list as apply() takes it and the snapshot writes it."""
    if type(e) is not int:
        return e
    s = (e >> 6) - 1
    return {"ev": "card", "c": e & 63} if s < 0 else {"ev": "card", "c": e & 63, "s": s}


class Dealing:
    def deal(self, c, s):
        """A card from the shoe (c: its id, checked by the decoder; s: its frame count, or
        None), live: apply()'s card event with its steps written out; returns who got it
        (the reply, Table.card_reply, is built once the shoe has its acknowledgement). The
        same checks, state and record as apply({"ev": "card", "c": c, "s": s}), which
        were ~1 ms of a Pico's 4 inside the shoe's wait (issue 27). Raises Refused,
        changing nothing, as apply() does."""
        t = self.table
        if t is None:
            t = self.require_table()  # (raises: not configured)
        j = self.journal
        fits = not self._refused_n and j.fits(CARD_RESERVE)
        if not fits:
            self.reserve(CARD_RESERVE)  # refusals to flush, or a segment to start (apply)
        who = t.take_card(c)
        # The round's event list holds the card as an int (above), not a dict: no heap
        # on the card's path; the shoe's last frame is the same int (no tuple).
        if s is None:
            self._events.append(c)
        else:
            e = c | (s + 1) << 6
            self._events.append(e)
            self.shoe_last = e
        now = self.clock()
        if type(now) is int and now >= 0:
            # Recording._journal written out: Recording.append's card record, formatted
            # into its buffer (cardrec), appended with its commit held. An append into
            # the open segment cannot make the journal full (a new segment can, and
            # reserve() above starts it), and a full journal is a tilt, which refused
            # this card before it came here (shoe_deal): so the `full` property, a call,
            # is asked only after a reserve() (issue 27's card path).
            try:
                seq = j.append(self._card_rec.encode(c, s, now), True)
            except (OSError, JournalError) as e:
                raise self._write_failed(e, "journal append")
            if not fits and j.full:
                self.raise_tilt("journal_full", "the last free segment is in use: export "
                                "and acknowledge")
        else:
            seq = self.append({"ev": "card", "c": c} if s is None
                              else {"ev": "card", "c": c, "s": s})
        if not self._hidden_from:
            self._hidden_from = seq
        return who

    def misdeal(self, code, detail=""):
        """A card the table did not take as dealt: tilt with the misdeal's own code and
        mark the round lost. Never raises (the shoe's alarm callback calls it)."""
        try:
            self.raise_tilt(code, detail)
            self._lose(code)
        except Exception as e:
            self.fault(e)

    def shoe_alarm(self, code, seq, info):
        """Callback for pitboss.hw.shoe: every alarm that can mean a lost or wrong card is a
        misdeal. Never raises."""
        e = _SHOE_ALARMS[code] if 0 <= code < len(_SHOE_ALARMS) else None
        if e is None:
            return
        t, when = e
        if when & _MID_DEAL:
            # restart: harmless before the first card of a deal. unresent: before it, a
            # frame that was lost shows as a gap at the deal's first card (the sequence
            # runs on across rounds), so only a torn frame in the middle of a deal is
            # timed as a misdeal, above all its last card (docs/shoe-protocol.md). (The
            # first 10,000-card Pico run tilted between rounds, after an export.)
            tb = self.table
            if tb is None or tb.phase != "dealing" or not tb.status()["dealt"]:
                return
        from pitboss.hw.shoe import NAMES, describe
        if when & _HIDE_CARD:  # the card itself may be face down: say where, not what
            detail = NAMES[code] + (": seq %d" % seq if seq >= 0 else "")
        else:
            detail = describe(code, seq, info)
        self.misdeal(t, detail)

    def shoe_card(self, card, seq):
        """A card from the shoe (a card id; seq is the shoe's frame count, whose gaps
        and repeats the shoe itself reports as alarms): dealt as the `card` command is,
        with the same reply. A card the table refuses, or one arriving while the table
        is halted, was still dealt on the felt: a misdeal (the round is voided at
        tilt-clear, never settled misaligned). Never raises."""
        reply = self.shoe_deal(card, seq)
        return self.dealt_reply(reply) if type(reply) is int else reply

    def shoe_deal(self, card, seq):
        """shoe_card() up to its reply: who got the card once it is dealt and
        journalled (dealt_reply(who) answers, after the shoe's acknowledgement: the App's
        card path, issue 27), else the refusal's reply. Never raises."""
        try:
            # Attributes, not method calls, where nothing is to do: each call on this
            # object looks its name up through five classes (issue 27's card path).
            if self._program_step is not None:
                self.check_program(True)
            # (tilt._active, not the tilted property: a property is a class lookup and a
            # call; the list is replaced, never changed in place, so it is the same test)
            if self._unrecorded is not None or self.tilt._active:
                self._lose("card_during_tilt")
                return protocol.error("tilted", "the table is halted by a tilt (%s): the card is "
                            "not dealt and the round will be voided"
                            % ", ".join(a["code"] for a in self.active_tilts()))
            # protocol.call's work, written out: its call, and the arguments' tuple, are
            # two more heap objects on every card's path.
            try:
                # (a shoe's card is an id its decoder checked: parse() only for anything
                # else, which refuses it)
                who = self.deal(card if type(card) is int and 0 <= card <= 52  # JOKER
                                else parse(card),
                                seq if type(seq) is int and seq >= 0 else None)
                # Drawn by redraw() once the shoe has its acknowledgement: the card's
                # path journals and answers, the display comes after (issue 27).
                self._stale = True
                return who
            except Refused as e:
                reply = protocol.error(e.code, str(e))
            except Exception as e:  # noqa: BLE001  (anything else: a fault, halted)
                reply = self.fault(e)
            err = reply.get("error")
            if err and err["code"] not in ("storage_error", "internal_error"):
                code = "shoe_fault"
                for refusal, tilt in _SHOE_REFUSALS:
                    if refusal == err["code"]:
                        code = tilt
                self.misdeal(code, err["message"][:80])
                t = self.table
                if not self._lost and (t is None or t.phase == CONFIGURED):
                    # No round in play took it or will be voided: the card belongs to
                    # no shuffle, so the shoe forgets it (the next round's deck holds
                    # it again: not a duplicate_card).
                    self._new_shuffle()
            return reply
        except Exception as e:
            return self.fault(e)

    def dealt_reply(self, who):
        """The reply to the card shoe_deal() dealt last, to `who` (as the `card`
        command's). Never raises."""
        try:
            reply = self.table.card_reply(who)
            reply["ok"] = True
            return reply
        except Exception as e:
            return self.fault(e)

    def redraw(self):
        """Draw what dealt cards or a line changed, if anything (after the shoe's
        acknowledgement or the line's reply)."""
        if self._stale:
            self._stale = False
            self.show()
