# The table controller: the one object that owns the round (pitboss.table), its journal,
# meters, tilts and authentication, and answers the bench protocol.
#
# Every state change is an *event* (a small dict, journalled as compact JSON):
#   config  {"ev":"config","cfg":{...}}          authenticated only
#   new     {"ev":"new"}                         next round (or void the one in play)
#   wager   {"ev":"wager","seat":3,"w":{"ante":500}}
#   deal    {"ev":"deal","dice":12}              the dice are journalled, never re-rolled
#   card    {"ev":"card","c":48}
#   a seat's decision after the deal, named by the game's DECISIONS (pitboss.games):
#   set     {"ev":"set","seat":3,"high":[..],"low":[..]}     Pai Gow
#   hw      {"ev":"hw","seat":3}                 house way asked for (Pai Gow)
#   decide  {"ev":"decide","seat":3,"play":true}             Three Card Prime, Caribbean
#   settle  {"ev":"settle","game":G,"round":N,"lines":[[type,wagered,paid]..],"result":{..}}
# An event is applied to the table first (which checks everything and changes nothing
# when it refuses), then appended to the journal, then answered. A power cut before the
# append loses an event nobody was told about; after it, replay at boot re-applies it:
# either way the table is in the old or the new state, never between.
#
# Each journal segment starts with a snapshot (configuration, round number and the events
# of the round in play), so replay never needs a rotated-out segment. At boot the newest
# snapshot and the records after it are re-applied with journalling off; a settlement is
# recomputed and must equal the journalled one, or the table tilts.
#
# command() and shoe_card() never raise: a refusal (pitboss.errors.Refused) is an error
# reply that changed nothing; anything else raised inside a command is a bug or a fault,
# answered `internal_error` (an OSError: `storage_error`) and halting the table with a
# tilt of that code, since the state it left cannot be vouched for.
import json

from pitboss import protocol
from pitboss.auth import Auth
from pitboss.cards import name, parse
from pitboss.errors import Refused
from pitboss.journal import KIND_SNAPSHOT, Journal, JournalCorrupt, JournalError
from pitboss.meters import Meters, MetersCorrupt, lines_from_result
from pitboss.table import SETTLED, Table
from pitboss.tilt import CODES as TILT_CODES
from pitboss.tilt import Tilt, check_operator

RECALL_MAX = 50
CLOCK_MIN = 1577836800  # 2020-01-01: a time before it is a host with a wrong clock
CLOCK_MAX = 4102444800  # 2100-01-01
_BAD_MAC_TILT = 3  # refused authenticated commands in a row before the table tilts

# Shoe alarms that mean a card may be missing or wrong (pitboss.shoe event codes):
# dropped, bad card, conflict, duplicate, unknown tag, wrong deck, collision.
_SHOE_TILTS = {5: "shoe_fault", 4: "shoe_fault", 7: "shoe_fault", 10: "duplicate_card",
               11: "unknown_rfid_tag", 12: "unknown_rfid_tag", 13: "shoe_fault"}
# Refusal codes from the table that halt play rather than just refuse the input.
_CARD_TILTS = {"duplicate_card": "duplicate_card", "wrong_count": "wrong_card_count"}


def _compact(obj):
    return json.dumps(obj, separators=(",", ":"))


class Controller:
    def __init__(self, root="", fs=None, clock=None, rng=None, display=None,
                 integrity=None, segment_size=65536, keep=4, max_payload=6144):
        self._rng = rng
        self.display = display
        self._integrity = integrity  # callable() -> list of problems ([] = approved)
        self.journal = Journal(root + "/journal", snapshot=self._snapshot, fs=fs,
                               segment_size=segment_size, keep=keep,
                               max_payload=max_payload)
        self.meters = Meters(root + "/state/meters", fs)
        self.tilt = Tilt(root + "/state/tilt", fs, clock)
        self.clock = self.tilt.clock  # pitboss.clock.Clock on a board; set by `clock UNIX`
        self.auth = Auth(root + "/auth", fs)
        self.table = None
        self._events = []  # the round in play, for the next snapshot
        self._replaying = False
        # A tilt the tilt store itself failed to take (raise_tilt): still halts the table
        # for this power cycle.
        self._unrecorded = None
        self.on_new_round = _nothing  # e.g. the shoe's reset(): each round is a new shuffle
        # (card, shoe frame seq) of the round's last card, journalled with it: after a
        # power cut the app tells the shoe, so a frame sent again is a repeat (pitboss.app)
        self.shoe_last = None
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
                         ("clock", self.cmd_clock),
                         ("config", self._needs_auth), ("tilt-clear", self._needs_auth),
                         ("auth", self.cmd_auth)):
            self.commands[verb] = fn

    # ---- boot and recovery -----------------------------------------------------------
    def boot(self):
        """Load tilts, keys, journal and meters; replay the round in play. Anything that
        cannot be trusted becomes a tilt (which persists) instead of a guess."""
        rep = {"replayed": 0, "torn": 0, "meters_recovered": 0}
        self.tilt.load()
        self.auth.load()
        if self.auth.fault in ("key_corrupt", "counter_corrupt"):
            self.raise_tilt("auth_store_corrupt", self.auth.fault)
        if self._integrity is not None:
            bad = self._integrity()
            if bad:
                self.raise_tilt("firmware_mismatch", "; ".join(bad)[:80])
        try:
            r = self.journal.open()
            rep["torn"] = r["torn"]
            rep["replayed"] = self._replay()
        except JournalCorrupt as e:
            self.raise_tilt("journal_corrupt", "%s %s" % (e.reason, e.where))
        except (ValueError, KeyError, TypeError) as e:  # Refused is a ValueError
            self.raise_tilt("journal_corrupt", "replay: %s" % e)
        try:
            self.meters.load()  # even with a damaged journal: quarantine numbers after it
            if self.journal.state == "open":
                rep["meters_recovered"] = self.meters.recover(self.journal)
        except MetersCorrupt as e:
            self.raise_tilt("meters_corrupt", e.reason)
        self._show()
        return rep

    def _replay(self):
        n = 0
        self._replaying = True
        try:
            for seq, kind, payload in self.journal.replay():
                obj = json.loads(payload)
                if kind == KIND_SNAPSHOT:
                    self._restore(obj)
                elif obj.get("ev") in _ROUND_EVENTS or (
                        self.table is not None and obj.get("ev") in self.table.decisions()):
                    self._apply(obj)
                else:
                    continue  # a log entry (auth_refused): no state in it
                n += 1
        finally:
            self._replaying = False
        return n

    def _snapshot(self, seq):
        # Meters must never fall behind the oldest segment the journal keeps.
        self.meters.checkpoint(seq - 1)
        if self.table is None:
            return _compact({"ev": "snap", "cfg": None})
        return _compact({"ev": "snap", "cfg": self.table.config(),
                         "round": self.table.round, "events": self._events})

    def _restore(self, snap):
        self.table = None
        self._events = []
        self.shoe_last = None
        if snap.get("cfg") is None:
            return
        self.table = Table(snap["cfg"], rng=self._rng)
        self.table.round = snap["round"]
        for ev in snap["events"]:
            self._apply(ev)

    # ---- events ----------------------------------------------------------------------
    def _apply(self, ev):
        """Apply one event to the table (raises Refused, changing nothing, if the
        table refuses it); journal it unless replaying. Returns the table's answer."""
        kind = ev["ev"]
        if not self._replaying:
            # Any new segment starts now, its snapshot the state before this event.
            self._reserve()
        t = self.table
        if kind == "config":
            if t is not None and t.phase not in ("configured", SETTLED):
                raise Refused("wrong_phase", "finish or void the round (newround) "
                              "before changing the configuration")
            t = Table(ev["cfg"], rng=self._rng)
            if self.table is not None:
                t.round = self.table.round
            out = t.config()
            self.table = t
            self._events = []
            self._new_shuffle()
        elif t is None:
            raise Refused("not_configured", "the table has no configuration yet")
        elif kind == "new":
            t.new_round()
            self._events = []
            self._new_shuffle()
            out = t.status()
        elif kind == "wager":
            out = t.wager(ev["seat"], ev["w"]) or t.status()
        elif kind == "deal":
            out = t.deal(ev.get("dice"))
            ev = {"ev": "deal", "dice": out["dice"]}  # journal the roll, not the request
        elif kind == "card":
            out = t.card_in(ev["c"])
            self.shoe_last = (ev["c"], ev.get("s", -1))
        elif kind == "settle":
            out = t.settle()
            lines = [list(x) for x in lines_from_result(out)]
            if self._replaying:
                if json.loads(_compact(out)) != ev["result"] or lines != ev["lines"]:
                    raise ValueError("settlement of round %d differs from the journal"
                                     % out["round"])
            ev = {"ev": "settle", "game": out["game"], "round": out["round"],
                  "lines": lines, "result": out}
        else:
            # A seat's decision; the table refuses one its game does not take.
            out = t.choose(ev["seat"], kind, ev)
        if kind not in ("config", "new", "settle"):
            self._events.append(ev)
        elif kind == "settle":
            self._events = []
        if not self._replaying:
            seq = self._append(ev)
            if kind == "settle":
                self.meters.apply(seq, ev["game"], ev["lines"])
        return out

    def _new_shuffle(self):
        self.shoe_last = None
        self.on_new_round()

    def _reserve(self):
        try:
            self.journal.reserve()
        except (OSError, JournalError) as e:
            self.raise_tilt("storage_error", "journal: %s" % e)
            raise Refused("storage_error", "the journal could not be written; the table "
                          "is halted")

    def _append(self, ev):
        if "t" not in ev:
            ev["t"] = self.clock()  # when: the host's time once it has set the clock
        try:
            return self.journal.append(_compact(ev))
        except (OSError, JournalError) as e:
            # The table is ahead of flash now: halt; a reboot replays what is durable.
            self.raise_tilt("storage_error", "journal append: %s" % e)
            raise Refused("storage_error", "the journal could not be written; the table "
                          "is halted")

    def raise_tilt(self, code, detail=""):
        """Halt the table: persisted, logged with the time, shown on the display. Never
        raises: a tilt that cannot be recorded still halts the table in RAM."""
        try:
            self.tilt.raise_tilt(code, detail, max(self.journal.last_seq, 0))
        except OSError:
            pass  # raise_tilt halts in RAM first; the table stays halted this power cycle
        except Exception:  # the tilt store itself failed: halt here instead
            self._unrecorded = {"n": 0, "code": code, "detail": detail[:80], "time": 0,
                                "jseq": 0}
        try:
            if self.display is not None:
                self.display.alarm(code.replace("_", " "), detail)
        except Exception:
            pass  # a broken display must not hide the tilt from the host

    def halted(self):
        return self._unrecorded is not None or self.tilt.tilted

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
        """Callback for pitboss.shoe: alarms that can mean a lost or wrong card tilt."""
        t = _SHOE_TILTS.get(code)
        if t is not None:
            from pitboss.shoe import describe
            self.raise_tilt(t, describe(code, seq, info))

    def shoe_card(self, card, seq):
        """A card from the shoe (a card id; seq is the shoe's frame count, whose gaps
        and repeats the shoe itself reports as alarms): dealt as the `card` command is,
        with the same reply, refusals and tilts. Never raises."""
        return self._guarded("card", lambda c: self._deal_card(c, seq), card)

    def _deal_card(self, card, seq=-1):
        self._table()
        ev = {"ev": "card", "c": parse(card)}
        if seq >= 0:
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
            reply = protocol.call(fn, args, self._fault)
            err = reply.get("error")
            if err and err["code"] in _CARD_TILTS and verb in ("card", "settle"):
                self.raise_tilt(_CARD_TILTS[err["code"]], err["message"][:80])
            if reply.get("ok"):
                self._show()
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
        st["journal_seq"] = self.journal.last_seq
        if self.table is not None:
            # What each seat holds so far: dealt cards only. Undealt cards and the shoe
            # order are never known here, so they can never be revealed.
            st["hands"] = {str(r): [name(c) for c in self.table.hand(r)]
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
        self._table()
        return self._apply({"ev": "new"})

    def cmd_recall(self, args):
        n = _int(args[0], "n") if args else 10
        if not 1 <= n <= RECALL_MAX:
            raise Refused("bad_args", "recall 1..%d rounds" % RECALL_MAX)
        recs = self.journal.last(n, lambda kind, p: b'"ev":"settle"' in p)
        rounds = []
        for seq, _, payload in recs:
            r = json.loads(payload)
            rounds.append({"seq": seq, "game": r["game"], "round": r["round"],
                           "result": r["result"]})
        return {"rounds": rounds}

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
        raise Refused("auth_required", "configuration and tilt clearing "
                                     "need an authenticated command: auth COUNTER MAC ...")

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
        fn = self.auth_commands.get(verb)
        if fn is not None:
            return fn(rest.split())
        raise Refused("bad_args", "authenticated commands: config JSON, "
                                     "tilt-clear OPERATOR [CODE], %s"
                                     % ", ".join(sorted(self.auth_commands)))

    def between_rounds(self):
        """True when no round is in play (nothing dealt that a change could orphan)."""
        return self.table is None or self.table.phase in ("configured", SETTLED)

    def _log_refusal(self, reason, cmd):
        # Logged in the journal (not a round event: replay skips it) and counted.
        try:
            self.journal.append(_compact({"ev": "auth_refused", "reason": reason,
                                          "cmd": cmd[:40]}))
        except (OSError, JournalError):
            pass
        if self.auth.failures >= _BAD_MAC_TILT:
            self.raise_tilt("bad_mac", "%d refused authenticated commands in a row"
                       % self.auth.failures)

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
        if "journal_corrupt" in codes and (len(args) < 2 or args[1] == "journal_corrupt"):
            # The damaged journal is set aside (kept for investigation), never replayed;
            # numbering continues after the highest seq ever seen.
            self.table = None
            self._events = []
            self.journal.quarantine(self.meters.seq + 1)
        cleared = self.tilt.clear(args[0], args[1] if len(args) > 1 else None)
        if self._unrecorded is not None and (len(args) < 2
                                             or args[1] == self._unrecorded["code"]):
            cleared.append(self._unrecorded["code"])
            self._unrecorded = None
        self._show()
        return {"cleared": cleared, "active": self.active_tilts()}

    # ---- display -----------------------------------------------------------------------
    def _show(self):
        """Redraw the display. A display that fails halts play (internal_error) but
        never undoes or hides the command that was applied and journalled."""
        try:
            self._draw()
        except Exception as e:
            self._fault(e)

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
        if t.phase == SETTLED:
            rows = []
            for s in (t.result() or {"seats": ()})["seats"]:
                cat = s.get("high_category") or s.get("category") or ""
                out = s.get("outcome") or ("win" if s["amount"] > 0 else
                                           "push" if s["amount"] == 0 else "lose")
                rows.append((s["seat"], cat, out))
            d.result(t.game, rows, t.round)
            return
        st = t.status()
        if st["phase"] == "dealing" and st["dealt"] % _DEAL_REDRAW:
            # A full redraw is 1 KB over I2C (~25 ms at 400 kHz): while cards stream in,
            # show the count every few cards; every phase change still redraws at once.
            return
        d.status(t.game, st["seats"], t.round, st["phase"],
                 ("CARDS %d/%d" % (st["dealt"], st["to_deal"]),) if st["to_deal"] else ())


_DEAL_REDRAW = 7  # cards between display updates during a deal (a Pai Gow packet)
# (and the configured game's decisions: Table.decisions())
_ROUND_EVENTS = ("config", "new", "wager", "deal", "card", "settle")
# Commands that move the round; refused while a tilt is active.
_TABLE_VERBS = ("wager", "deal", "card", "hand", "houseway", "decide", "settle",
                "newround")


def _nothing():
    pass


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
