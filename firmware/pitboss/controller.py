# The table controller: the one object that owns the round (pitboss.games.table), its journal,
# meters, tilts and authentication, and answers the bench protocol (its verbs and their
# handlers: pitboss.verbs, one table). Its one job is the round as an event log; the
# pieces of that one object are mixins by job: recovery (boot, replay, snapshots),
# recording (journal writes) and halting (tilts, faults, the shoe's cards and misdeals).
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

from pitboss import games, protocol
from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.games.table import CONFIGURED, DEALING, SETTLED, Table
from pitboss.halting import CARD_RESERVE, Dealing, Halting
from pitboss.recording import Recording
from pitboss.recovery import Recovery
from pitboss.store.auth import Auth
from pitboss.store.cardrec import CardRecord
from pitboss.store.journal import Journal
from pitboss.store.record import JournalError
from pitboss.store.meters import Meters, lines_from_result
from pitboss.store.tilt import Tilt
from pitboss.verbs import APP, AUTH, QUIET, RAW, ROUND, VERBS, handler
from pitboss.store.record import RECALL_HELD, RECALL_MAX

# A checkpoint (a snapshot record, pitboss.store.journal) once this many bytes were journalled
# after the last one, written between rounds: a boot replays at most that plus the round
# in play. Measured on the emulated Pico (issue 11's 2 s boot): re-applying 18.8 KB of a
# session's records took 1,442 ms of the boot, 346 ms with checkpoints every 4 KB; a
# checkpoint is ~200-500 bytes.
_CHECKPOINT_BYTES = const(2048)
_DEAL_REDRAW = const(7)  # cards between display updates during a deal (a Pai Gow packet)


# (Bases in the order a dealt card looks its methods up: Dealing.deal, then
# Halting.shoe_deal, Recording._journal; each class before the one holding a name is a
# map lookup that misses, on every card. No name is defined in two of them.)
class Controller(Dealing, Halting, Recording, Recovery):
    production = False  # the app sets it when the service switch was not held at boot

    def __init__(self, root="", fs=None, clock=None, rng=None, display=None,
                 integrity=None, segment_size=65536, keep=10, max_payload=6144,
                 region=None, segment_sectors=8, program=None):
        self._rng = rng
        self.display = display
        self._integrity = integrity  # callable() -> list of problems ([] = approved)
        # callable() -> one chunk of the program check the boot deferred (None: more
        # left; "" or the mismatch once done): pitboss.halting check_program
        self._program_step = program
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
        # The shoe's last dealt frame, as its card event's int (card | (seq + 1) << 6:
        # halting.event_dict), journalled with each shoe card and in snapshots, so the
        # frame sequence runs on across power cycles too: frames sent while the board was
        # off show as a gap (App primes the shoe with it at boot).
        self.shoe_last = None
        self._replaying = False
        self._card_rec = CardRecord()
        self._stale = False  # a dealt card changed what the display shows (redraw())
        # True where replies are written out by pitboss.loop.json_writer (the main loop):
        # recall's rounds are then a Rows, read from flash as they are written.
        self.stream = False
        # True where the main loop redraws after writing each line's reply (redraw()):
        # the host's answer does not wait for the display (a settlement's pay screen is
        # up to 1 KB over I2C, ~23 ms at 400 kHz; issue 27). Elsewhere a line redraws
        # before command() returns.
        self.draw_after_reply = False
        # True where the main loop's idle passes run (pitboss.loop): the meters' record of
        # a settlement is saved in the next one (Halting.idle) instead of in the line.
        self.save_when_idle = False
        # (result dict, its key count, its compact JSON) of the last record that carried
        # a result, for reply_text() (pitboss.recording)
        self._result_json = None
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
        # The App behind this controller (pitboss.app), which answers the APP verbs.
        self.app = None  # type: object

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
            # Any new segment starts now, its snapshot the state before this event. A
            # card reserves only its record's room: a segment full to within a
            # settlement's room then rotates at a line (the round's wagers, deal or
            # settle) and not inside a card's path, where the snapshot and the pages
            # of the new segment took a card 23-70 ms on the emulated Pico (issue 27).
            self.reserve(CARD_RESERVE if kind == "card" else None)
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
                # (the card's int in the round's events: halting.event_dict)
                self.shoe_last = ev["c"] | (ev["s"] + 1) << 6
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
                                if isinstance(e, int) or e["ev"] in ("deal", "card", "lost")
                                or e.get("seat") != ev["seat"]
                                or (kind == "wager") != (e["ev"] == "wager")]
            held = ev
            if kind == "card":
                # A shoe's card ({"ev", "c"[, "s"]}: an id, a frame count) as Dealing.deal
                # holds it (halting: an int), whichever way it came; anything else as is.
                c = ev["c"]
                s = ev.get("s", -1)
                if (type(c) is int and 0 <= c <= 52 and type(s) is int and s >= -1  # JOKER
                        and len(ev) == 3 - (s < 0)):
                    held = c | (s + 1) << 6
            self._events.append(held)
        else:
            self._events = []
        if t is not None and t.round > self._round_hw:
            self._round_hw = t.round
            self.journal.meta["round"] = self._round_hw  # committed with this event
        if not self._replaying:
            seq = self.append(ev)
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
            # Where the loop's idle passes run, the meters' A/B record is saved there
            # (Halting.idle), not inside the settle line: a littlefs write, and at times
            # a 4 KB erase, 47 ms of a Pico's first settlement after power-on (issue 27).
            self.meters.apply(seq, ev["game"], ev["lines"], not self.save_when_idle)
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

    # ---- commands: one line, dispatched by the verb table (pitboss.verbs) ------------
    def command(self, line):
        """One bench-protocol line -> reply dict. Never raises (see the top of the
        file)."""
        try:
            words = line.split()
            if not words:
                return protocol.error("empty", "empty command")
            verb = words[0].lower()
            e = VERBS.get(verb)
            if e is None or (e[2] & APP and self.app is None):
                return protocol.error("unknown_command",
                                      "unknown command %r" % words[0][:32])
            return self._guarded(verb, e, words[1:])
        except Exception as e:
            return self.fault(e)

    def _guarded(self, verb, e, args):
        flags = e[2]
        try:
            if flags & AUTH:
                return protocol.error("auth_required", "%s needs an authenticated command: auth "
                            "COUNTER MAC %s ..." % (verb, verb))
            if flags & ROUND:
                self.check_program(True)  # the core's deferred hash first (halting.py)
                if self.halted():
                    return protocol.error("tilted", "the table is halted by a tilt (%s); an "
                                          "operator must clear it" % ", ".join(
                                              a["code"] for a in self.active_tilts()))
            seq0 = self.journal.last_seq
            # (The loop collects a line's garbage once, around its reply: pitboss.loop.)
            reply = protocol.call(handler(e), self, args, self.fault)
            err = reply.get("error")
            if err and verb in ("card", "settle") and err["code"] in ("duplicate_card",
                                                                     "wrong_count"):
                # The table's refusals that halt play rather than just refuse the input.
                self.raise_tilt("wrong_card_count" if err["code"] == "wrong_count"
                                else "duplicate_card", err["message"][:80])
            if reply.get("ok") and not flags & QUIET and (
                    verb != "newround" or self.journal.last_seq != seq0):
                # (a newround with nothing to close changed nothing)
                if self.draw_after_reply:
                    self._stale = True
                else:
                    self.show()
            return reply
        except Exception as e:
            return self.fault(e)

    def authenticated(self, verb, rest):
        """Run an authenticated line's verb (pitboss.verbs.operator.auth has checked its
        MAC and counter): one the table marks AUTH, with the rest of the line."""
        e = VERBS.get(verb)
        if e is None or not e[2] & AUTH or (e[2] & APP and self.app is None):
            raise Refused("bad_args", "authenticated commands: %s" % ", ".join(sorted(
                v for v in VERBS if VERBS[v][2] & AUTH
                and (self.app is not None or not VERBS[v][2] & APP))))
        return handler(e)(self, rest if e[2] & RAW else rest.split())

    def dealing(self):
        """Is a deal in progress (the shoe's cards are what the table waits for)?"""
        return self.table is not None and self.table.phase == DEALING

    def require_table(self):
        if self.table is None:
            raise Refused("not_configured", "the table has no configuration yet "
                          "(an authenticated config command sets it)")
        return self.table

    def between_rounds(self):
        """True when no round is in play (nothing dealt that a change could orphan)."""
        return self.table is None or self.table.phase in ("configured", SETTLED)

    # ---- export ------------------------------------------------------------------------
    def export_limit(self):
        """The last seq an export may send: the round in play's cards stay on the board
        until it settles (nothing hidden leaves before the game reveals it)."""
        return self._hidden_from - 1 if self._hidden_from else self.journal.last_seq

    # ---- display -----------------------------------------------------------------------
    def show(self):
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


def _nothing():
    pass
