# The table controller: the one object that owns the round (pitboss.games.table), its journal,
# meters, tilts and authentication, and answers the bench protocol.
#
# Every state change is an *event* (a small dict, journalled as compact JSON):
#   config  {"ev":"config","cfg":{...}}          authenticated only
#   new     {"ev":"new"}                         next round (or void the one in play)
#   wager   {"ev":"wager","seat":3,"w":{"ante":500}}
#   deal    {"ev":"deal","dice":12}              the dice are journalled, never re-rolled
#   card    {"ev":"card","c":48}                 from the shoe also "s": its frame number
#   a seat's decision after the deal, named by the game's DECISIONS (pitboss.games):
#   set     {"ev":"set","seat":3,"high":[..],"low":[..]}     Pai Gow
#   hw      {"ev":"hw","seat":3}                 house way asked for (Pai Gow)
#   decide  {"ev":"decide","seat":3,"play":true}             Three Card Prime, Caribbean
#   settle  {"ev":"settle","game":G,"round":N,"lines":[[type,wagered,paid]..],"result":{..}}
# and log records that replay reads but that move no round:
#   tilt    {"ev":"tilt","code":C}              a tilt raised (also in the A/B record)
#   tilt_clear {"ev":"tilt_clear","codes":[..],"op":OP}
#   auth_ok {"ev":"auth_ok","ctr":N}             an authenticated line accepted
#   auth_refused {"ev":"auth_refused","n":K,"total":T,"reasons":{..},"cmd":..}
#                                                refused auth lines, in aggregate
#   meters_reset {"ev":"meters_reset","op":OP,"reason":R,"kept":[..],"seq":S}
# Tilts and the auth counter are kept twice, in their A/B records and in the journal
# (each snapshot carries the active tilts and the counter): at boot the two are merged,
# so a damaged newest A/B copy can neither drop a tilt nor roll the counter back.
#   lost    {"ev":"lost","why":CODE}             a misdeal: this round lost or misplaced a
#                                                card and can never be settled
#   void    {"ev":"void","game":G,"round":N,"why":CODE,"result":{..}}   a lost round
#                                                voided at tilt-clear, its wagers returned
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
import json
import time

from pitboss import games, protocol
from pitboss.store.auth import Auth
from pitboss.store.cardrec import CardRecord
from pitboss.rules.cards import parse
from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.store.journal import Journal
from pitboss.store.journalerrors import JournalCorrupt, JournalError, JournalFull
from pitboss.store.record import KIND_SNAPSHOT
from pitboss.store.meters import Meters, MetersCorrupt, lines_from_result
from pitboss.games.table import CONFIGURED, DEALING, SETTLED, Table
from pitboss.store.tilt import CODES as TILT_CODES
from pitboss.store.tilt import Tilt, check_operator

RECALL_MAX = 50  # recall's most; the journal keeps them while its flash budget allows
# ... and never deletes a segment holding one of the last RECALL_HELD settlements (issue
# 5: recall shows at least the last 10 rounds). Holding all 50 stopped a full table for
# good: 50 seven-seat Three Card Prime rounds (~8.5 KB each, cards and wagers included)
# outgrew the budget, so no segment could go even once exported, and journal_full
# could never be cleared (found by the emulated Pico's 200-round session, 2026-12-02).
RECALL_HELD = const(10)
EXPORT_MAX = 50  # records per export reply
_EXPORT_BYTES = const(4096)  # payload bytes per export reply (one raw-REPL answer)
CLOCK_MIN = 1577836800  # 2020-01-01: a time before it is a host with a wrong clock
CLOCK_MAX = 4102444800  # 2100-01-01
# A checkpoint (a snapshot record, pitboss.store.journal) once this many bytes were journalled
# after the last one, written between rounds: a boot replays at most that plus the round
# in play. Measured on the emulated Pico (issue 11's 2 s boot): re-applying 18.8 KB of a
# session's records took 1,442 ms of the boot, 346 ms with checkpoints every 4 KB; a
# checkpoint is ~200-500 bytes.
_CHECKPOINT_BYTES = const(2048)
# Journal records idle() checks per pass (a pass opens the segment, ~6.6 ms of littlefs on a
# Pico, then reads and CRCs a few records, ~0.2 us a byte): a shoe frame arriving meanwhile
# waits in the UART's 256-byte buffer.
_VERIFY_RECORDS = const(4)
_BAD_MAC_TILT = const(3)  # refused authenticated commands in a row before the table tilts
_DEAL_REDRAW = const(7)  # cards between display updates during a deal (a Pai Gow packet)

# Misdeals (issue 12; docs/protocol.md, Misdeals): every shoe alarm, by pitboss.hw.shoe
# event code, means a card may be missing or wrong: each tilts with its own code and
# marks the round in play lost. Notices (garbage between frames, a retransmission, a
# torn frame: malformed 2 and bad_crc 3, which the acknowledged shoe sends again) do
# not; a torn frame nothing intact followed within the resend timeout (16) does
# (docs/shoe-protocol.md, "Transport errors and misdeals"); a restart of the shoe's
# count (9) only in the middle of a deal.
_SHOE_TILTS = {4: "shoe_bad_card",
               5: "shoe_gap", 7: "shoe_conflict", 8: "shoe_stale", 9: "shoe_restart",
               10: "duplicate_card", 11: "unknown_rfid_tag", 12: "rfid_wrong_deck",
               13: "rfid_collision", 14: "rfid_read_error", 15: "rfid_reader_fault",
               16: "shoe_bad_frame"}
# A card from the shoe that the table refuses was still dealt on the felt: a misdeal,
# by the table's refusal code (anything else: shoe_fault).
_SHOE_REFUSALS = {"joker_not_allowed": "joker_in_deck", "deal_complete": "extra_card",
                  "wrong_phase": "card_before_deal", "not_configured": "card_before_deal",
                  "duplicate_card": "duplicate_card", "unknown_card": "shoe_bad_card"}
# Shoe alarms whose info is a card: the tilt detail leaves it out (it may be face down).
_CARD_INFO = (7, 8, 10)
# Refusal codes from the table that halt play rather than just refuse the input.
_CARD_TILTS = {"duplicate_card": "duplicate_card", "wrong_count": "wrong_card_count"}


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


def _raw_result(payload):
    """(game, round, the result's JSON as a memoryview of payload) of a settle or void
    record whose last value is its result (_record), else None (a record of an earlier
    firmware, in any key order: the caller parses it). The result is the only object at
    the top level, so the payload ends with "}}" exactly when it is last; then every value
    before it is a number, a string (its quotes escaped) or the lines (lists of scalars),
    so the first ',"result":' is the top-level key. Parsing the rest is a few hundred
    bytes: a 2.2 KB Caribbean settlement parsed whole is 6.1 KB of objects on a Pico,
    held while its row is written (issue 11: `recall 50` took a 200-round Pai Gow
    session's lowest free heap to 54,080 B)."""
    n = len(payload)
    if n < 4 or payload[n - 2:] != b"}}":
        return None
    i = payload.find(b',"result":')
    if i < 0:
        return None
    head = json.loads(payload[:i] + b"}")
    return head["game"], head["round"], memoryview(payload)[i + 10:n - 1]


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


class Controller:
    production = False  # the app sets it when the service switch was not held at boot

    def __init__(self, root="", fs=None, clock=None, rng=None, display=None,
                 integrity=None, segment_size=65536, keep=10, max_payload=6144,
                 region=None, segment_sectors=8):
        self._rng = rng
        self.display = display
        self._integrity = integrity  # callable() -> list of problems ([] = approved)
        # commit: a record of the last seq written, so a journal cut at a record
        # boundary is found; retain: nothing is deleted before it is exported and
        # acknowledged, or while recall needs it (journal_full instead). The budget,
        # 10 x 64 KB: the last RECALL_HELD rounds of the largest table (seven Three Card
        # Prime seats with every side bet: ~8.5 KB a round journalled) take 2 segments,
        # so after an export there is always a segment to delete, and the 9 segments kept
        # besides the one being written hold more than the last RECALL_MAX of any table
        # (~66 of that one) for recall. The board's filesystem must hold 11 segments
        # (a rotation writes the new one before the oldest goes) beside the firmware:
        # 704 KB of the Pico's 1,408 KB, with ~140 KB of firmware.
        if region is not None:
            # A flash region from the board (pitboss.store.region): the journal programs pages
            # in place of littlefs appends (issue 27); the whole region is its budget.
            from pitboss.store.ringjournal import RegionJournal

            self.journal = RegionJournal(region, root + "/journal", snapshot=self._snapshot,
                                         fs=fs, segment_sectors=segment_sectors,
                                         max_payload=max_payload, commit=True, retain=True)
        else:
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
        self._card_rec = CardRecord()
        self._stale = False  # a dealt card changed what the display shows (redraw())
        # True where replies are written out by pitboss.app.json_writer (the main loop):
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
        # Authenticated verbs beyond config / tilt-clear (the app adds deck-register):
        # verb -> fn(args) -> reply dict.
        self.auth_commands = {}
        self.commands = dict(protocol.COMMANDS)
        for verb, fn in (("status", self.cmd_status), ("wager", self.cmd_wager),
                         ("deal", self.cmd_deal), ("card", self.cmd_card),
                         ("hand", self.cmd_hand), ("houseway", self.cmd_houseway),
                         ("decide", self.cmd_decide), ("settle", self.cmd_settle),
                         ("newround", self.cmd_newround), ("recall", self.cmd_recall),
                         ("meters", self.cmd_meters), ("tilt", self.cmd_tilt),
                         ("export", self.cmd_export),
                         ("clock", self.cmd_clock),
                         ("config", self._needs_auth), ("tilt-clear", self._needs_auth),
                         ("meters-reset", self._needs_auth),
                         ("export-ack", self._needs_auth),
                         ("auth", self.cmd_auth)):
            self.commands[verb] = fn

    # ---- boot and recovery -----------------------------------------------------------
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
        t = _lap(ms, "meters", t)
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
        self._show()
        return rep

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
                self._log_event({"ev": "tilt", "code": code})
        if self._jctr > self.auth.counter and self.auth.fault is None:
            try:
                self.auth.restore_counter(self._jctr)
            except OSError:
                self.raise_tilt("storage_error", "auth counter could not be restored")
        if self._settle_seqs is None:
            # No snapshot carried them (one written before they were): scan back for them,
            # a read of up to every segment (137 ms of a Pico's boot for one).
            self._settle_seqs = self.journal.last(RECALL_MAX, _is_settle, seqs=True)
        self._hold()
        if self.journal.full:
            self.raise_tilt("journal_full", "export and acknowledge the journal")

    def _replay(self):
        n = 0
        self._replaying = True
        try:
            for seq, kind, payload in self.journal.replay():
                obj = json.loads(payload)
                ev = obj.get("ev")
                if kind == KIND_SNAPSHOT:
                    self._restore(obj, seq)
                elif ev in _ROUND_EVENTS or (
                        self.table is not None and ev in self.table.decisions()):
                    self._apply(obj, seq)
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
            snap["events"] = self._events
        if self.shoe_last is not None:
            snap["shoe"] = list(self.shoe_last)
        if self._settle_seqs is not None:
            snap["settles"] = self._settle_seqs  # so a boot need not scan back for them
        return _compact(snap)

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
        self.shoe_last = tuple(shoe) if shoe else None
        settles = snap.get("settles")
        self._settle_seqs = list(settles) if type(settles) is list else None
        if snap.get("cfg") is None:
            return
        self.table = Table(snap["cfg"], rng=self._rng)
        games.release(self.table.game)  # a replay that crosses games holds one of them
        self.table.round = snap["round"]
        if snap.get("settled"):
            # A settled round stays settled: the next wager opens round + 1, never this
            # number again (its settlement is in an earlier segment).
            self.table.phase = SETTLED
        for ev in snap["events"]:
            self._apply(ev, seq)

    # ---- events ----------------------------------------------------------------------
    def _apply(self, ev, seq=0):
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
            # What recall shows and the journal must keep (_is_settle): live, and in a
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
            self._apply({"ev": "lost", "why": why})
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
        self._flush_refusals()
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
        # A round's records keep the segment open until its settlement or void
        # (Journal.append: an open per card was 1.2 KB of the 4.3 KB of garbage a card
        # left on a Pico); between rounds, where exports and recalls run, it is closed.
        return self._journal(_record(ev), ev["ev"] not in _CLOSING_EVENTS)

    def _journal(self, payload, hold):
        try:
            seq = self.journal.append(payload, hold)
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
            self._show()
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
            return _err(code, detail + "; the table is halted")
        except Exception:
            self._unrecorded = self._unrecorded or {"n": 0, "code": "internal_error",
                                                    "detail": "", "time": 0, "jseq": 0}
            return _err("internal_error", "internal error; the table is halted")

    # ---- the shoe ----------------------------------------------------------------------
    def shoe_alarm(self, code, seq, info):
        """Callback for pitboss.hw.shoe: every alarm that can mean a lost or wrong card is a
        misdeal. Never raises."""
        t = _SHOE_TILTS.get(code)
        if t is None:
            return
        if code == 9 or code == 16:
            # restart: harmless before the first card of a deal. unresent: before it, a
            # frame that was lost shows as a gap at the deal's first card (the sequence
            # runs on across rounds), so only a torn frame in the middle of a deal is
            # timed as a misdeal, above all its last card (docs/shoe-protocol.md). (The
            # first 10,000-card Pico run tilted between rounds, after an export.)
            tb = self.table
            if tb is None or tb.phase != "dealing" or not tb.status()["dealt"]:
                return
        from pitboss.hw.shoe import NAMES, describe
        if code in _CARD_INFO:  # the card itself may be face down: say where, not what
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
        try:
            if self.halted():
                self._lose("card_during_tilt")
                return _err("tilted", "the table is halted by a tilt (%s): the card is "
                            "not dealt and the round will be voided"
                            % ", ".join(a["code"] for a in self.active_tilts()))
            reply = protocol.call(self._deal_card, (card, seq), self._fault)
            err = reply.get("error")
            if err and err["code"] not in ("storage_error", "internal_error"):
                self.misdeal(_SHOE_REFUSALS.get(err["code"], "shoe_fault"),
                             err["message"][:80])
                t = self.table
                if not self._lost and (t is None or t.phase == CONFIGURED):
                    # No round in play took it or will be voided: the card belongs to
                    # no shuffle, so the shoe forgets it (the next round's deck holds
                    # it again: not a duplicate_card).
                    self._new_shuffle()
            if reply.get("ok"):
                # Drawn by redraw() once the shoe has its acknowledgement: the card's
                # path journals and answers, the display comes after (issue 27).
                self._stale = True
            return reply
        except Exception as e:
            return self._fault(e)

    def redraw(self):
        """Draw what dealt cards changed, if anything (after their acknowledgement)."""
        if self._stale:
            self._stale = False
            self._show()

    def _deal_card(self, args):
        self._table()
        card, seq = args
        ev = {"ev": "card", "c": parse(card)}
        if type(seq) is int and seq >= 0:
            ev["s"] = seq
        return self._apply(ev)

    # ---- commands ----------------------------------------------------------------------
    def command(self, line):
        """One bench-protocol line -> reply dict. Never raises (see the top of the
        file)."""
        try:
            words = line.split()
            if not words:
                return _err("empty", "empty command")
            verb = words[0].lower()
            fn = self.commands.get(verb)
            if fn is None:
                return _err("unknown_command", "unknown command %r" % words[0][:32])
            return self._guarded(verb, fn, words[1:])
        except Exception as e:
            return self._fault(e)

    def _guarded(self, verb, fn, args):
        try:
            if verb in _TABLE_VERBS and self.halted():
                return _err("tilted", "the table is halted by a tilt (%s); an operator "
                            "must clear it" % ", ".join(a["code"]
                                                        for a in self.active_tilts()))
            seq0 = self.journal.last_seq
            reply = protocol.call(fn, args, self._fault)
            err = reply.get("error")
            if err and err["code"] in _CARD_TILTS and verb in ("card", "settle"):
                self.raise_tilt(_CARD_TILTS[err["code"]], err["message"][:80])
            if reply.get("ok") and verb not in _QUIET_VERBS and (
                    verb != "newround" or self.journal.last_seq != seq0):
                self._show()  # (a newround with nothing to close changed nothing)
            return reply
        except Exception as e:
            return self._fault(e)

    def _table(self):
        if self.table is None:
            raise Refused("not_configured", "the table has no configuration yet "
                          "(an authenticated config command sets it)")
        return self.table

    def cmd_status(self, args):
        st = {}  # type: dict
        st.update(self.table.status() if self.table else {"phase": "unconfigured"})
        st["tilts"] = self.active_tilts()
        if self._lost:
            st["lost"] = self._lost  # the round lost a card: tilt-clear voids it
        st["journal_seq"] = self.journal.last_seq
        if self.table is not None and self.table.unverified:
            # issue 30: a placeholder paytable is in use (only service mode lets one in)
            st["unverified"] = self.table.unverified
        if self.table is not None:
            # What each seat holds so far: dealt cards only. Undealt cards and the shoe
            # order are never known here, so they can never be revealed.
            # Face-down cards (the dealer's, the banker's, empty positions' packets) are
            # None until the game shows them (Table.shown).
            st["hands"] = {str(r): self.table.shown_hand(r)
                           for r in self.table.recipients()}
        return st

    def cmd_wager(self, args):
        t = self._table()
        if len(args) < 1:
            raise Refused("bad_args", "usage: wager SEAT KIND=AMOUNT...")
        seat = _int(args[0], "seat")
        w = {}
        for a in args[1:]:
            k, _, v = a.partition("=")
            w[k] = _int(v, k)
        if t.phase == SETTLED:
            # Checked first: a refused wager must not open the next round.
            t.check_wager(seat, w)
            self._apply({"ev": "new"})
        return self._apply({"ev": "wager", "seat": seat, "w": w})

    def cmd_deal(self, args):
        self._table()
        ev = {"ev": "deal"}  # type: dict
        if args:
            ev["dice"] = _int(args[0], "dice")
        return self._apply(ev)

    def cmd_card(self, args):
        self._table()
        if len(args) != 1:
            raise Refused("bad_args", "usage: card CARD (As, 48...)")
        c = args[0]
        cid = parse(int(c) if c.isdigit() else c)
        return self._apply({"ev": "card", "c": cid})

    def cmd_hand(self, args):
        self._table()
        if "/" not in args or len(args) < 2:
            raise Refused("bad_args", "usage: hand SEAT HIGH... / LOW...")
        seat = _int(args[0], "seat")
        i = args.index("/")
        high = [parse(c) for c in args[1:i]]
        low = [parse(c) for c in args[i + 1:]]
        return self._apply({"ev": "set", "seat": seat, "high": high, "low": low})

    def cmd_houseway(self, args):
        self._table()
        return self._apply({"ev": "hw", "seat": _int(_one(args, "houseway SEAT"), "seat")})

    def cmd_decide(self, args):
        self._table()
        if len(args) != 2 or args[1] not in ("play", "fold"):
            raise Refused("bad_args", "usage: decide SEAT play|fold")
        return self._apply({"ev": "decide", "seat": _int(args[0], "seat"),
                            "play": args[1] == "play"})

    def cmd_settle(self, args):
        self._table()
        return self._apply({"ev": "settle"})

    def cmd_newround(self, args):
        t = self._table()
        if t.phase == CONFIGURED:
            return t.status()  # nothing to close: nothing changes, nothing journalled
        return self._apply({"ev": "new"})

    def cmd_recall(self, args):
        n = _int(args[0], "n") if args else 10
        if not 1 <= n <= RECALL_MAX:
            raise Refused("bad_args", "recall 1..%d rounds" % RECALL_MAX)
        seqs = self._settle_seqs
        if seqs is None:  # (only while booting) read back through the journal
            seqs = self.journal.last(n, _is_settle, seqs=True, tick=self.feed)
        else:
            # Kept as they are journalled, so recall reads only the rounds it shows
            # (from the checkpoint before the first), not the segments before them.
            first = self.journal.first_seq
            seqs = [q for q in seqs[-n:] if q >= first]
        rows = Rows(self.journal, seqs, self.feed, raw=self.stream)
        # The main loop writes the rounds out one at a time as they are read from flash
        # (pitboss.app.json_writer): 50 rounds held at once would not fit a Pico's heap.
        return {"rounds": rows if self.stream else list(rows)}

    def cmd_meters(self, args):
        return {"totals": self.meters.totals(),
                "games": {g: self.meters.game(g) for g in self.meters.games()}}

    def cmd_clock(self, args):
        """clock [UNIX]: the table's time; with UNIX (seconds), set it, as the host does
        when it connects. Journalled ({"ev":"clock","t":new,"was":old}) so the records
        before and after it can be put on one time line."""
        clk = self.clock
        if args:
            if len(args) != 1 or not args[0].isdigit():
                raise Refused("bad_args", "usage: clock [UNIX_SECONDS]")
            t = int(args[0])
            if not CLOCK_MIN <= t <= CLOCK_MAX:
                raise Refused("bad_args", "clock %d is not between 2020 and 2100" % t)
            setter = getattr(clk, "set", None)
            if setter is None:
                raise Refused("no_clock", "this controller's clock cannot be set")
            self._reserve()
            self._append({"ev": "clock", "t": t, "was": clk()})
            setter(t)
        return {"time": clk(), "set": bool(getattr(clk, "is_set", False))}

    def cmd_tilt(self, args):
        return {"active": self.active_tilts(), "log": self.tilt.log()}

    def _needs_auth(self, args):
        raise Refused("auth_required", "configuration, tilt clearing, a meters reset "
                      "and an export acknowledgement need an authenticated command: "
                      "auth COUNTER MAC ...")

    def cmd_auth(self, args):
        ok, reason, cmd = self.auth.check_line("auth " + " ".join(args))
        if reason == "store_error":
            # The counter could not be saved (a flash write failed): a storage fault, not
            # the sender's mistake.
            self.raise_tilt("storage_error", "auth counter could not be saved")
            raise Refused("storage_error", "the authentication counter could not be "
                          "written; the table is halted")
        if not ok:
            self._log_refusal(reason, cmd)
            raise Refused(reason, "authenticated command refused: %s"
                                         % reason)
        self._flush_refusals()
        self._log_event({"ev": "auth_ok", "ctr": self.auth.counter})
        words = cmd.split(None, 1)
        verb = words[0].lower() if words else ""
        rest = words[1] if len(words) > 1 else ""
        if verb == "config":
            try:
                cfg = json.loads(rest)
            except ValueError:
                raise Refused("bad_args", "config takes one JSON object")
            if self.halted():
                raise Refused("tilted", "clear the tilt before changing "
                                             "the configuration")
            return self._apply({"ev": "config", "cfg": cfg})
        if verb == "tilt-clear":
            return self._clear_tilt(rest.split())
        if verb == "meters-reset":
            return self._meters_reset(rest.split())
        if verb == "export-ack":
            return self._export_ack(rest.split())
        fn = self.auth_commands.get(verb)
        if fn is not None:
            return fn(rest.split())
        raise Refused("bad_args", "authenticated commands: config JSON, "
                                     "tilt-clear OPERATOR [CODE], meters-reset OPERATOR, "
                                     "export-ack SEQ, %s"
                                     % ", ".join(sorted(self.auth_commands)))

    def between_rounds(self):
        """True when no round is in play (nothing dealt that a change could orphan)."""
        return self.table is None or self.table.phase in ("configured", SETTLED)

    def _log_refusal(self, reason, cmd):
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
            self._flush_refusals()
        if self.auth.failures >= _BAD_MAC_TILT:
            self.raise_tilt("bad_mac", "%d refused authenticated commands in a row"
                       % self.auth.failures)

    def _flush_refusals(self):
        if not self._refused_n or self._replaying or self.journal.state != "open":
            return
        rec = {"ev": "auth_refused", "n": self._refused_n, "total": self._refused_total,
               "reasons": self._refused, "cmd": self._refused_cmd}
        self._refused = {}
        self._refused_n = 0
        self._log_event(rec)

    def _clear_tilt(self, args):
        if not args:
            raise Refused("bad_args", "usage: tilt-clear OPERATOR [CODE]")
        try:
            check_operator(args[0])
        except ValueError as e:
            raise Refused("bad_args", str(e))
        if len(args) > 1 and args[1] not in TILT_CODES:
            raise Refused("bad_args", "unknown tilt code %r" % args[1])
        codes = [a["code"] for a in self.tilt.active()]
        one = args[1] if len(args) > 1 else None
        if "meters_corrupt" in codes and one in (None, "meters_corrupt") and \
                self._meters_bad is not None:
            raise Refused("meters_corrupt", "the meters are damaged (%s): an authenticated "
                          "meters-reset OPERATOR sets them aside and starts new ones; "
                          "clearing the tilt alone would zero them" % self._meters_bad)
        if "journal_full" in codes and one in (None, "journal_full") and self.journal.full:
            raise Refused("journal_full", "the journal is still full: export and "
                          "acknowledge it first (pitboss export)")
        if "journal_corrupt" in codes and (len(args) < 2 or args[1] == "journal_corrupt"):
            # The damaged journal is set aside (kept for investigation), never replayed;
            # numbering continues after the highest seq ever seen.
            self.table = None
            self._events = []
            self._lost = None
            self.journal.quarantine(self.meters.seq + 1)
            self._corrupt_seen = False
            self._settle_seqs = []  # they were in the journal set aside
        cleared = self.tilt.clear(args[0], args[1] if len(args) > 1 else None)
        if cleared:
            self._log_event({"ev": "tilt_clear", "codes": cleared, "op": args[0]})
        if self._unrecorded is not None and (len(args) < 2
                                             or args[1] == self._unrecorded["code"]):
            cleared.append(self._unrecorded["code"])
            self._unrecorded = None
        reply = {"cleared": cleared, "active": self.active_tilts()}
        if self._lost and cleared:
            # The misdealt round is voided, never settled misaligned: wagers returned,
            # journalled (recall shows it).
            reply["voided"] = self._apply({"ev": "void"})["result"]
        self._show()
        return reply

    def _meters_reset(self, args):
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
        if self._meters_bad is None:
            raise Refused("wrong_phase", "the meters are not damaged: lifetime meters are "
                          "never reset")
        if self.journal.state != "open":
            raise Refused("journal_corrupt", "clear journal_corrupt first (the reset "
                          "must be journalled)")
        seq = self.journal.last_seq
        kept = self.meters.reset(seq)
        self._log_event({"ev": "meters_reset", "op": args[0], "reason": self._meters_bad,
                         "kept": kept, "seq": seq})
        self._meters_bad = None
        cleared = self.tilt.clear(args[0], "meters_corrupt")
        if cleared:
            self._log_event({"ev": "tilt_clear", "codes": cleared, "op": args[0]})
        self._show()
        return {"reset": seq, "kept": kept, "cleared": cleared,
                "active": self.active_tilts()}

    # ---- export ------------------------------------------------------------------------
    def export_limit(self):
        """The last seq an export may send: the round in play's cards stay on the board
        until it settles (nothing hidden leaves before the game reveals it)."""
        return self._hidden_from - 1 if self._hidden_from else self.journal.last_seq

    def cmd_export(self, args):
        """export FROM [N]: up to N records from seq FROM, each with its kind, the CRC-32
        it has on flash and an HMAC-SHA256 under the board's key over
        "SEQ KIND CRC " + payload, so the host can prove where each came from."""
        if not 1 <= len(args) <= 2:
            raise Refused("bad_args", "usage: export FROM [N]")
        start = _int(args[0], "from")
        n = _int(args[1], "n") if len(args) > 1 else EXPORT_MAX
        if start < 1 or not 1 <= n <= EXPORT_MAX:
            raise Refused("bad_args", "export FROM (>= 1) [N (1..%d)]" % EXPORT_MAX)
        mac = self.auth.mac()
        if mac is None:
            raise Refused("no_key", "export needs the board's key (provision first)")
        if self.journal.state != "open":
            raise Refused("journal_corrupt", "the journal is %s" % self.journal.state)
        limit = self.export_limit()
        recs = ExportRows(self.journal, start, n, limit, mac, self.feed, raw=self.stream)
        # The main loop writes the records out one at a time as they are read and signed
        # (pitboss.app.json_writer): a reply of 4 KB of payloads held as records, their
        # text and their MACs at once took ~16 KB of a Pico's heap (issue 11: the lowest
        # free heap of a 200-round Pai Gow session fell under 64 KB at its first export).
        return {"records": recs if self.stream else list(recs),
                "first": self.journal.first_seq, "last": limit, "acked": self.journal.acked}

    def _export_ack(self, args):
        """export-ack SEQ (authenticated): the host has stored every record up to SEQ.
        Their segments may then be deleted when space is needed; journal_full clears."""
        seq = _int(_one(args, "export-ack SEQ"), "seq")
        if not self.journal.acked <= seq <= self.export_limit():
            raise Refused("bad_args", "export-ack takes %d..%d, got %d"
                          % (self.journal.acked, self.export_limit(), seq))
        self.journal.acknowledge(seq)
        cleared = []
        if not self.journal.full and "journal_full" in [a["code"]
                                                        for a in self.tilt.active()]:
            cleared = self.tilt.clear("export", "journal_full")
            if cleared:
                self._log_event({"ev": "tilt_clear", "codes": cleared, "op": "export"})
            self._show()
        return {"acked": seq, "first": self.journal.first_seq, "full": self.journal.full,
                "cleared": cleared}

    # ---- display -----------------------------------------------------------------------
    def _show(self):
        """Redraw the display. A display that fails is a display_fault tilt (play halts
        until an operator clears it) and is let go: the table then runs without it
        (issue 11). It never undoes or hides the command that was applied and journalled."""
        try:
            self._draw()
        except Exception as e:
            self.display = None
            self.raise_tilt("display_fault", ("display: %s %s" % (type(e).__name__, e))[:80])

    def _draw(self):
        d = self.display
        if d is None:
            return
        if self.halted():
            a = self.active_tilts()[0]
            d.alarm(a["code"].replace("_", " "), a["detail"])
            return
        t = self.table
        if t is None:
            d.message("PITBOSS", ["NOT CONFIGURED"])
            return
        if t.phase == SETTLED and t.settled_rows() is not None:
            # what to pay (issue 30: the pay screen of TableDisplay.result); a round
            # restored settled from a snapshot has no rows: the status screen says so
            d.result(t.game, t.settled_rows(), t.round)
            return
        if t.phase == DEALING and t.dealt % _DEAL_REDRAW:
            # A full redraw is 1 KB over I2C (~25 ms at 400 kHz): while cards stream in,
            # show the count every few cards; every phase change still redraws at once.
            # (Asked before status(), whose dict would be garbage at every card.)
            return
        st = t.status()
        d.status(t.game, st["seats"], t.round, st["phase"],
                 ("CARDS %d/%d" % (st["dealt"], st["to_deal"]),) if st["to_deal"] else ())


# The events a boot's replay applies to the table (and the configured game's decisions:
# Table.decisions()).
_ROUND_EVENTS = ("config", "new", "wager", "deal", "card", "settle", "lost", "void")
# Events after which the journal's segment is closed (Journal.append's hold): the round
# is over, the table reconfigured, or the event is not a round's (the host's clock).
_CLOSING_EVENTS = ("settle", "void", "config", "clock")
# Commands that only read: what the display shows cannot have changed, so no redraw. A
# redraw of a settled seven-seat table is 1 KB over I2C: measured on the emulated Pico,
# `version` took 75.8 ms with it and 9.3 ms without, `status` 143.8 and 77.1 ms.
_QUIET_VERBS = ("status", "recall", "meters", "tilt", "export", "version", "deck",
                "verify", "mem", "screen", "rank", "best", "games")
# Commands that move the round; refused while a tilt is active.
_TABLE_VERBS = ("wager", "deal", "card", "hand", "houseway", "decide", "settle",
                "newround")


def now_ms():
    f = getattr(time, "ticks_ms", None)  # MicroPython; CPython has no ticks
    return f() if f is not None else int(time.time() * 1000)


def _lap(into, step, t0):
    """into[step] = ms since t0 (the ticks counter wraps: small differences only)."""
    t = now_ms()
    into[step] = (t - t0) & 0x3FFFFFFF
    return t


def _nothing():
    pass


class Rows:
    """recall's rounds, read from the journal one record at a time, oldest first, as
    they are iterated (one pass from the first seq): nothing but the seqs is held."""

    stream_rows = True  # what pitboss.app.json_writer looks for

    def __init__(self, journal, seqs, feed=None, raw=False):
        self.journal = journal
        self.seqs = seqs
        self.feed = feed or _nothing
        # raw: each result left as its stored JSON (a memoryview), for json_writer to
        # write in small pieces, where the record allows it (_raw_result).
        self.raw = raw

    def __len__(self):
        return len(self.seqs)

    def __iter__(self):
        seqs = self.seqs
        i = 0
        if not seqs:
            return
        for seq, _, payload in self.journal.records(seqs[0]):
            self.feed()
            if seq != seqs[i]:
                continue
            r = _raw_result(payload) if self.raw else None
            if r is not None:
                yield {"seq": seq, "game": r[0], "round": r[1], "result": r[2]}
            else:
                r = json.loads(payload)
                yield {"seq": seq, "game": r["game"], "round": r["round"],
                       "result": r["result"]}
            i += 1
            if i == len(seqs):
                return


class ExportRows:
    """export's records from seq `start`, read, signed and handed out one at a time as
    they are iterated: up to n records, none after `limit`, and no more payload bytes
    than _EXPORT_BYTES (one record at least)."""

    stream_rows = True  # what pitboss.app.json_writer looks for

    def __init__(self, journal, start, n, limit, mac, feed=None, raw=False):
        self.journal = journal
        self.start = start
        self.n = n
        self.limit = limit
        self.mac = mac
        self.feed = feed or _nothing
        # raw: each payload left as the bytes read, for json_writer to write as a JSON
        # string in small pieces (a Pai Gow settlement is 2.3 KB: no str copy of it).
        self.raw = raw

    def __iter__(self):
        from binascii import hexlify

        k = size = 0
        mac = self.mac
        for seq, kind, payload, crc in self.journal.records_crc(self.start):
            if seq > self.limit or k >= self.n or (k and size + len(payload) > _EXPORT_BYTES):
                return
            self.feed()
            size += len(payload)
            k += 1
            # export_message(), fed to the MAC in two parts: no copy of the payload
            h = mac.start()
            h.update(export_header(seq, kind, crc))
            h.update(payload)
            yield {"seq": seq, "kind": chr(kind), "crc": crc,
                   "mac": hexlify(mac.finish(h)).decode(),
                   "payload": payload if self.raw else payload.decode()}


def _is_settle(kind, payload):
    # A round's end: settled, or voided after a misdeal (recall shows both).
    return b'"ev":"settle"' in payload or b'"ev":"void"' in payload


def export_header(seq, kind, crc):
    """What an exported record's MAC covers before its payload."""
    return ("%d %d %d " % (seq, kind, crc)).encode()


def export_message(seq, kind, crc, payload):
    """What an exported record's MAC covers (the host builds the same bytes)."""
    return export_header(seq, kind, crc) + bytes(payload)


def _err(code, message):
    return {"ok": False, "error": {"code": code, "message": message}}


def _int(text, what):
    try:
        return int(text)
    except (ValueError, TypeError):
        raise Refused("bad_args", "%s must be an integer, got %r"
                                     % (what, text))


def _one(args, usage):
    if len(args) != 1:
        raise Refused("bad_args", "usage: " + usage)
    return args[0]
