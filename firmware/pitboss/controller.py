# The table controller: the one object that owns the round (pitboss.games.table), its journal,
# meters, tilts and authentication, and answers the bench protocol.
#
# Every state change is an *event* (a small dict, journalled as compact JSON; the events
# and log records are listed in docs/journal.md, "Events").
# An event is applied to the table first (which checks everything and changes nothing
# when it refuses), then appended to the journal, then answered. A power cut before the
# append loses an event nobody was told about; after it, replay at boot re-applies it:
# either way the table is in the old or the new state, never between.
#
# Each journal segment starts with a snapshot (configuration, round number and the events
# of the round in play), so replay never needs a rotated-out segment. The events of a
# round are bounded: a seat's repeated wager or decision replaces its earlier one (the
# table replaces it too), so a round holds at most one wager and one decision per seat,
# one deal and the deck's cards, whatever is sent (issue 12: ~1,045 repeated wagers once
# made a 41 KB snapshot, over the record limit, and bricked the table). At boot the newest
# snapshot and the records after it are re-applied with journalling off; a settlement is
# recomputed and must equal the journalled one, or the table tilts.
#
# command() and shoe_card() never raise: a refusal (pitboss.errors.Refused) is an error
# reply that changed nothing; anything else raised inside a command is a bug or a fault,
# answered `internal_error` (an OSError: `storage_error`) and halting the table with a
# tilt of that code, since the state it left cannot be vouched for.
from pitboss import games, verbs
from pitboss.store.auth import Auth
from pitboss.rules.cards import parse
from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.hw.shoe import MISDEALS, NAMES, REFUSED, describe
from pitboss.protocol import call, error
from pitboss import replay
from pitboss.replay import _compact, _record, _same
from pitboss.store.journal import Journal, JournalCorrupt, JournalError, JournalFull
from pitboss.store.meters import Meters, lines_from_result
from pitboss.games.table import CONFIGURED, SETTLED, Table
from pitboss.store.tilt import Tilt
from pitboss.verbs.operator import flush_refusals
from pitboss.verbs.records import RECALL_MAX

# The journal never deletes a segment holding one of the last RECALL_HELD settlements
# (issue 5: recall shows at least the last 10 rounds; docs/bench.md has why not all
# RECALL_MAX).
RECALL_HELD = const(10)
# A checkpoint (a snapshot record, pitboss.store.journal) once this many bytes were
# journalled after the last one, written between rounds: a boot replays at most that plus
# the round in play (issue 11's 2 s boot; docs/bench.md).
_CHECKPOINT_BYTES = const(2048)
# Journal records idle() checks per pass: a shoe frame arriving meanwhile waits in the
# UART's 256-byte buffer (docs/bench.md).
_VERIFY_RECORDS = const(4)


class Controller:
    production = False  # the app sets it when the service switch was not held at boot

    def __init__(self, root="", fs=None, clock=None, rng=None, display=None,
                 integrity=None, segment_size=65536, keep=10, max_payload=6144, app=None):
        self._rng = rng
        self.display = display
        self._integrity = integrity  # callable() -> list of problems ([] = approved)
        # commit: a record of the last seq written, so a journal cut at a record
        # boundary is found; retain: nothing is deleted before it is exported and
        # acknowledged, or while recall needs it (journal_full instead). The budget
        # (segment_size x keep) is the board's (boards/*.py JOURNAL_SEGMENT, JOURNAL_KEEP).
        self.journal = Journal(root + "/journal", snapshot=self._snapshot, fs=fs,
                               segment_size=segment_size, keep=keep,
                               max_payload=max_payload, commit=True, retain=True)
        self.meters = Meters(root + "/state/meters", fs)
        self.tilt = Tilt(root + "/state/tilt", fs, clock)
        self.clock = self.tilt.clock  # pitboss.hw.clock.Clock on a board; set by `clock UNIX`
        self.auth = Auth(root + "/auth", fs)
        self.table = None
        self._events = []  # the round in play, for the next snapshot
        self._lost = None  # the misdeal code once the round in play has lost a card
        # The shoe's last dealt frame (seq, card), journalled with each shoe card and in
        # snapshots, so the frame sequence runs on across power cycles too: frames sent
        # while the board was off show as a gap (App primes the shoe with it at boot).
        self.shoe_last = None
        self._replaying = False
        # True where replies are written out by pitboss.loop.json_writer (the main loop):
        # recall's rounds are then a Rows, read from flash as they are written.
        self.stream = False
        # Called while a long read runs (recall scanning the journal): the main loop
        # makes it its watchdog's feed. Measured on the emulated Pico: `recall 50` after
        # 60 rounds of 7 seats read for longer than the 8 s watchdog and reset the board.
        self.feed = _nothing
        self._corrupt_seen = False  # idle() has raised journal_corrupt for this damage
        self._round_hw = 0  # the highest round number this board has used
        self._settle_seqs = []  # seqs of the last RECALL_MAX settlements (recall's hold)
        self._jtilts = []  # active tilts as the journal tells them (replay)
        self._jctr = 0  # the highest auth counter the journal has seen accepted
        self._refused = {}  # refused auth lines not journalled yet: reason -> count
        self._refused_n = 0
        self._refused_cmd = ""
        self._refused_total = 0  # refused auth lines ever counted (snapshot, journal)
        self._hidden_from = 0  # seq of the round's first card: export stops before it
        self._meters_bad = None  # the MetersCorrupt reason until meters-reset
        # A tilt the tilt store itself failed to take (raise_tilt): still halts the table
        # for this power cycle.
        self._unrecorded = None
        self.on_new_round = _nothing  # e.g. the shoe's reset(): each round is a new shuffle
        self.app = app  # the board's App (pitboss.app), for the verbs that need it

    # ---- boot and recovery (pitboss.replay) ------------------------------------------
    def boot(self):
        """Load tilts, keys, journal and meters; replay the round in play."""
        return replay.boot(self)

    def _snapshot(self, seq):
        return replay.snapshot(self, seq)

    def _restore(self, snap, seq=0):
        replay._restore(self, snap, seq)

    # ---- events ----------------------------------------------------------------------
    def apply(self, ev, seq=0):
        """Apply one event to the table (raises Refused, changing nothing, if the
        table refuses it); journal it unless replaying (then `seq` is its journal seq).
        Returns the table's answer."""
        kind = ev["ev"]
        t = self.table
        # A checkpoint once this event has opened the next round (or configured the
        # table): the snapshot is small there (this event at most), and the settled
        # round's cards, which status shows until now and a snapshot does not carry, are
        # gone. Not for a refused event: a refusal writes nothing.
        opens = not self._replaying and kind in ("new", "wager", "config") and (
            t is None or t.phase in (CONFIGURED, SETTLED))
        if not self._replaying:
            # Any new segment starts now, its snapshot the state before this event.
            self._reserve()
        if kind == "config":
            if t is not None and t.phase not in ("configured", SETTLED):
                raise Refused("wrong_phase", "finish or void the round (newround) "
                              "before changing the configuration")
            t = Table(ev["cfg"], rng=self._rng)
            if self.production and t.unverified and not self._replaying:
                # issue 30: no unverified default plays in production (one line naming
                # the table; a journalled configuration still replays)
                raise Refused("bad_config", "paytable %s is unverified: configure the "
                              "table your casino posts (production mode)"
                              % t.unverified[0])
            if t.game != (self.table.game if self.table is not None else None):
                # The previous game's modules and tables go (issue 11's heap): only once
                # the new configuration was accepted, so a refused one changes nothing.
                games.release(t.game)
            # Round numbers are unique and increasing for the life of the board: a new
            # configuration goes on after the highest number ever used.
            t.round = max(self._round_hw, self.table.round if self.table else 0) + 1
            out = t.config()
            self.table = t
            self._events = []
            self._lost = None
            self._new_shuffle()
        elif t is None:
            raise Refused("not_configured", "the table has no configuration yet")
        elif kind == "new":
            if self._lost:
                raise Refused("tilted", "round %d lost a card (%s): tilt-clear voids it"
                              % (t.round, self._lost))
            t.new_round()
            self._events = []
            self._new_shuffle()
            out = t.status()
        elif kind == "lost":
            out = {"lost": ev["why"]}
            self._lost = ev["why"]
        elif kind == "void":
            out = self._void(t, ev)
            ev = out
        elif kind == "wager":
            out = t.wager(ev["seat"], ev["w"]) or t.status()
        elif kind == "deal":
            out = t.deal(ev.get("dice"))
            ev = {"ev": "deal", "dice": out["dice"]}  # journal the roll, not the request
        elif kind == "card":
            out = t.card_in(ev["c"])
            if "s" in ev:
                self.shoe_last = (ev["s"], ev["c"])
        elif kind == "settle":
            if self._lost:
                raise Refused("tilted", "round %d lost a card (%s): it can only be voided"
                              % (t.round, self._lost))
            out = t.settle()
            lines = [list(x) for x in lines_from_result(out)]
            if self._replaying:
                if not _same(out, ev["result"]) or lines != ev["lines"]:
                    raise ValueError("settlement of round %d differs from the journal"
                                     % out["round"])
            ev = {"ev": "settle", "game": out["game"], "round": out["round"],
                  "lines": lines, "result": out}
        else:
            # A seat's decision; the table refuses one its game does not take.
            out = t.choose(ev["seat"], kind, ev)
        if kind not in ("config", "new", "settle", "void"):
            if kind not in ("deal", "card", "lost"):
                # A seat's wager or decision replaces its earlier one (the table replaced
                # it too): the round's event list stays bounded.
                self._events = [e for e in self._events
                                if e["ev"] in ("deal", "card", "lost")
                                or e.get("seat") != ev["seat"]
                                or (kind == "wager") != (e["ev"] == "wager")]
            self._events.append(ev)
        else:
            self._events = []
        if t is not None and t.round > self._round_hw:
            self._round_hw = t.round
            self.journal.meta["round"] = self._round_hw  # committed with this event
        if not self._replaying:
            seq = self._append(ev)
        if kind == "card":
            if not self._hidden_from:
                self._hidden_from = seq
        elif kind in ("config", "new", "settle", "void"):
            self._hidden_from = 0
        if kind in ("settle", "void") and self._settle_seqs is not None:
            # What recall shows and the journal must keep (is_settle): live, and in a
            # replay on top of the snapshot's list.
            self._settle_seqs = (self._settle_seqs + [seq])[-RECALL_MAX:]
        if kind == "settle" and not self._replaying:
            self._hold()
            self.meters.apply(seq, ev["game"], ev["lines"])
        elif kind == "void" and not self._replaying:
            self._hold()
        if opens and self.journal.since_checkpoint > _CHECKPOINT_BYTES:
            self._checkpoint()
        return out

    def _checkpoint(self):
        # After the event is durable: a checkpoint that fails halts the table (as any
        # journal write does) but does not take back the answer.
        try:
            self.journal.checkpoint()
        except (OSError, JournalError) as e:
            self.raise_tilt("storage_error", "journal checkpoint: %s" % e)

    def _hold(self):
        # The journal keeps every segment from the oldest of the last RECALL_HELD
        # settlements on, whatever else is sent (older ones while there is room).
        s = self._settle_seqs or ()
        self.journal.hold_from = s[-RECALL_HELD] if len(s) >= RECALL_HELD else \
            (s[0] if s else 0)

    def _new_shuffle(self):
        self.shoe_last = None
        self.on_new_round()

    def _void(self, t, ev):
        """A lost round voided: every wager returned (amount 0), the next round begins.
        The record keeps the settlement's shape so recall shows it beside the others; it
        moves no money, so the meters do not count it."""
        if not self._lost:
            raise Refused("wrong_phase", "only a round that lost a card is voided")
        if self._replaying and ev.get("round") != t.round:
            raise ValueError("void of round %r, the table is at round %d"
                             % (ev.get("round"), t.round))
        seats = [{"seat": s, "wagers": dict(t.wagers(s)), "amount": 0}
                 for s in t.seats_in_play()]
        rec = {"ev": "void", "game": t.game, "round": t.round, "why": self._lost,
               "result": {"game": t.game, "round": t.round, "void": self._lost,
                          "seats": seats, "house_net": 0}}
        t.new_round()
        self._lost = None
        self._new_shuffle()
        return rec

    def _lose(self, why):
        """Mark the round in play lost (journalled, so a power cycle keeps it): it will
        be voided at tilt-clear. Between rounds there is nothing to void."""
        t = self.table
        if self._lost or t is None or t.phase in ("configured", SETTLED):
            return
        try:
            self.apply({"ev": "lost", "why": why})
        except Refused:
            self._lost = why  # the journal failed (a storage_error tilt): halt in RAM

    def misdeal(self, code, detail=""):
        """A card the table did not take as dealt: tilt with the misdeal's own code and
        mark the round lost. Never raises (the shoe's alarm callback calls it)."""
        try:
            self.raise_tilt(code, detail)
            self._lose(code)
        except Exception as e:
            self._fault(e)

    def _reserve(self):
        flush_refusals(self)
        try:
            self.journal.reserve()
        except JournalFull as e:
            self.raise_tilt("journal_full", str(e))
            raise Refused("journal_full", "the journal is full of records not yet "
                          "exported: pitboss export, then the table goes on")
        except (OSError, JournalError) as e:
            self.raise_tilt("storage_error", "journal: %s" % e)
            raise Refused("storage_error", "the journal could not be written; the table "
                          "is halted")

    def _append(self, ev):
        if "t" not in ev:
            # When: the host's time once it has set the clock. On a copy: the round's
            # events kept for the next snapshot stay as small as replay needs them.
            rec = dict(ev)
            rec["t"] = self.clock()
            ev = rec
        try:
            # A round's records keep the segment open until its settlement or void
            # (Journal.append: an open per card was 1.2 KB of the 4.3 KB of garbage a
            # card left on a Pico); between rounds, where exports and recalls run, it
            # is closed.
            seq = self.journal.append(_record(ev), ev["ev"] not in _CLOSING_EVENTS)
        except JournalFull as e:
            self.raise_tilt("journal_full", str(e))
            raise Refused("journal_full", "the journal is full of records not yet "
                          "exported: pitboss export, then the table goes on")
        except (OSError, JournalError) as e:
            # The table is ahead of flash now: halt; a reboot replays what is durable.
            self.raise_tilt("storage_error", "journal append: %s" % e)
            raise Refused("storage_error", "the journal could not be written; the table "
                          "is halted")
        if self.journal.full:
            self.raise_tilt("journal_full", "the last free segment is in use: export "
                            "and acknowledge")
        return seq

    def _log_event(self, obj):
        """Journal a log record (no round state). Never raises: the A/B records still
        hold what it says, and a broken journal is already a tilt."""
        if self._replaying or self.journal.state != "open":
            return 0
        try:
            if obj["ev"] in ("tilt", "tilt_clear"):
                # When: the floor's collector reports each tilt and clear with its time
                # (host_tools/floor); the tilt log's copy is not authenticated.
                obj["t"] = self.clock()
            return self.journal.append(_compact(obj))
        except (OSError, JournalError):
            return 0

    def raise_tilt(self, code, detail=""):
        """Halt the table: persisted, logged with the time, shown on the display. Never
        raises: a tilt that cannot be recorded still halts the table in RAM."""
        new = code not in [a["code"] for a in self.tilt.active()]
        try:
            self.tilt.raise_tilt(code, detail, max(self.journal.last_seq, 0))
            if new:
                self._log_event({"ev": "tilt", "code": code})
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
                return j.verify(_VERIFY_RECORDS)
        except JournalCorrupt as e:
            why = "%s %s" % (e.reason, e.where)
        except OSError as e:
            self.raise_tilt("storage_error", "journal check: %s" % e)
            return 0
        if j.state == "corrupt" and not self._corrupt_seen:
            self._corrupt_seen = True
            self.raise_tilt("journal_corrupt", why)
            self._show()
        return 0

    def active_tilts(self):
        a = self.tilt.active()
        if self._unrecorded is not None:
            a.append(self._unrecorded)
        return a

    def _fault(self, e):
        """Something raised that is not a refusal: a bug, or storage failing. Halt, and
        answer in the protocol's shape (never raises)."""
        try:
            if isinstance(e, OSError):
                code, what = "storage_error", "storage failed"
            else:
                code, what = "internal_error", "internal error"
            detail = "%s: %s %s" % (what, type(e).__name__, e)
            self.raise_tilt(code, detail[:80])
            return error(code, detail + "; the table is halted")
        except Exception:
            self._unrecorded = self._unrecorded or {"n": 0, "code": "internal_error",
                                                    "detail": "", "time": 0, "jseq": 0}
            return error("internal_error", "internal error; the table is halted")

    # ---- the shoe ----------------------------------------------------------------------
    def shoe_alarm(self, code, seq, info):
        """Callback for pitboss.hw.shoe: every alarm that can mean a lost or wrong card is a
        misdeal, as the shoe's policy table says (shoe.MISDEALS). Never raises."""
        p = MISDEALS.get(code)
        if p is None:
            return
        tilt, mid_deal, card_info = p
        if mid_deal:
            tb = self.table
            if tb is None or tb.phase != "dealing" or not tb.status()["dealt"]:
                return
        if card_info:  # the card itself may be face down: say where, not what
            detail = NAMES[code] + (": seq %d" % seq if seq >= 0 else "")
        else:
            detail = describe(code, seq, info)
        self.misdeal(tilt, detail)

    def shoe_card(self, card, seq):
        """A card from the shoe (a card id; seq is the shoe's frame count, whose gaps
        and repeats the shoe itself reports as alarms): dealt as the `card` command is,
        with the same reply. A card the table refuses, or one arriving while the table
        is halted, was still dealt on the felt: a misdeal (the round is voided at
        tilt-clear, never settled misaligned). Never raises."""
        try:
            if self.halted():
                self._lose("card_during_tilt")
                return error("tilted", "the table is halted by a tilt (%s): the card is "
                            "not dealt and the round will be voided"
                            % ", ".join(a["code"] for a in self.active_tilts()))
            reply = call(Controller._deal_card, self, (card, seq), self._fault)
            err = reply.get("error")
            if err and err["code"] not in ("storage_error", "internal_error"):
                self.misdeal(REFUSED.get(err["code"], "shoe_fault"),
                             err["message"][:80])
                t = self.table
                if not self._lost and (t is None or t.phase == CONFIGURED):
                    # No round in play took it or will be voided: the card belongs to no
                    # shuffle; the shoe forgets it (the next deck holds it: no duplicate)
                    self._new_shuffle()
            if reply.get("ok"):
                self._show()
            return reply
        except Exception as e:
            return self._fault(e)

    def _deal_card(self, args):
        self.configured()
        card, seq = args
        ev = {"ev": "card", "c": parse(card)}
        if type(seq) is int and seq >= 0:
            ev["s"] = seq
        return self.apply(ev)

    # ---- commands ----------------------------------------------------------------------
    def command(self, line):
        """One protocol line -> reply dict (pitboss.verbs, the verb table). Never
        raises (see the top of the file)."""
        return verbs.run(self, line)

    def configured(self):
        """The table, or Refused not_configured."""
        if self.table is None:
            raise Refused("not_configured", "the table has no configuration yet "
                          "(an authenticated config command sets it)")
        return self.table

    def export_limit(self):
        """The last seq an export may send: the round in play's cards stay on the board
        until it settles (nothing hidden leaves before the game reveals it)."""
        return self._hidden_from - 1 if self._hidden_from else self.journal.last_seq

    # ---- display -----------------------------------------------------------------------
    def _show(self):
        """Redraw the display. A display that fails is a display_fault tilt (play halts
        until an operator clears it) and is let go: the table then runs without it
        (issue 11). It never undoes or hides the command that was applied and journalled."""
        if self.display is None:
            return
        try:
            from pitboss.hw.display import draw

            draw(self.display, self)
        except Exception as e:
            self.display = None
            self.raise_tilt("display_fault", ("display: %s %s" % (type(e).__name__, e))[:80])

# Events after which the journal's segment is closed (Journal.append's hold): the round
# is over, the table reconfigured, or the event is not a round's (the host's clock).
_CLOSING_EVENTS = ("settle", "void", "config", "clock")


def _nothing():
    pass
