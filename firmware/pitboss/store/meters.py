# Lifetime meters per game: rounds, amount wagered, amount paid, and the same per wager
# type (ante, play, pair_plus...), as ints in the table's smallest unit.
#
# Kept beside the journal in an A/B double-buffered record (pitboss.store.slots.Slots), not
# derived from the journal, because:
#   - the journal is bounded and rotates: lifetime meters cannot be recomputed from the
#     last few segments, and must survive a journal that is quarantined after corruption;
#   - two copies with a generation and a CRC each is the redundancy gaming labs ask of
#     critical memory, and a torn save leaves the previous meters, never a mix.
# The record names the journal sequence number it includes (`seq`): a settlement is
# counted only if its seq is above it, so replaying the journal after a crash (between
# "settlement journalled" and "meters saved", or during the save) counts every settlement
# exactly once.
#
# Controller contract (docs/journal.md):
#   settle: seq = journal.append(record); meters.apply(seq, game, lines)
#   snapshot callback (a new segment starts at `seq`): meters.checkpoint(seq - 1), so the
#     meters never fall behind the oldest segment the journal keeps;
#   boot: journal.open(); meters.load(); meters.recover(journal)
import json

from pitboss.store.record import KIND_RECORD, loads
from pitboss.store.osfs import write_file
from pitboss.store.slots import SlotCorrupt, Slots
from pitboss.compat import const

_VERSION = const(1)


class MetersCorrupt(Exception):
    """reason: store_corrupt, bad_data, bad_settlement, ahead_of_journal,
    journal_missing_records."""

    def __init__(self, reason, detail=""):
        super().__init__("meters: %s %s" % (reason, detail))
        self.reason = reason


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _check_lines(game, lines):
    """-> a list of (wager_type, wagered, paid) or ValueError/TypeError naming the fault."""
    if not isinstance(game, str) or not game or len(game) > 40:
        raise ValueError("game must be a non-empty id, not %r" % (game,))
    out = []
    for line in lines:
        if not isinstance(line, (list, tuple)) or len(line) != 3:
            raise ValueError("a settlement line is (wager_type, wagered, paid), not %r"
                             % (line,))
        wt, wagered, paid = line
        if not isinstance(wt, str) or not wt or len(wt) > 24:
            raise ValueError("bad wager type %r" % (wt,))
        if not _is_int(wagered) or not _is_int(paid) or wagered < 0 or paid < 0:
            raise ValueError("%s: amounts must be ints >= 0, not %r/%r"
                             % (wt, wagered, paid))
        out.append((wt, wagered, paid))
    return out


def parse_settlement(payload):
    """The default parser for journal payloads: a settlement is the JSON object
    {"ev": "settle", "game": GAME, "lines": [[WAGER_TYPE, WAGERED, PAID], ...]};
    -> (game, lines), or None for any other record."""
    if type(payload) is memoryview:
        # A view of the boot's scratch buffer (RegionJournal.scratch): parsed in place,
        # no copy of it as text.
        obj = loads(payload)
    else:
        if isinstance(payload, (bytes, bytearray)):
            payload = bytes(payload).decode()
        if '"settle"' not in payload:  # cheap test before parsing every card record
            return None
        obj = json.loads(payload)
    if not isinstance(obj, dict) or obj.get("ev") != "settle":
        return None
    return obj.get("game"), obj.get("lines", ())


def lines_from_result(result):
    """Settlement lines from pitboss.games.table's settle() result: one (wager_type, wagered,
    paid) per wager of every seat, paid = wager + net amount (what goes back to the
    player: 0 for a loss, the wager for a push). Seats with per-wager "results" (Three
    Card Prime, Caribbean) give one line per wager; the others (Pai Gow, showdown) hold a
    single wager whose net is the seat's "amount"."""
    lines = []
    for seat in result["seats"]:
        per = seat.get("results")
        if per:
            for wt in sorted(per):
                r = per[wt]
                lines.append((wt, r["wager"], r["wager"] + r["amount"]))
        else:
            wagers = seat["wagers"]
            if len(wagers) != 1:
                raise ValueError("seat %r: expected one wager, got %r"
                                 % (seat.get("seat"), sorted(wagers)))
            for wt in wagers:
                lines.append((wt, wagers[wt], wagers[wt] + seat["amount"]))
    for wt, w, p in lines:
        if p < 0:
            raise ValueError("%s: paid %d < 0" % (wt, p))
    return lines


class Meters:
    def __init__(self, path="/journal/meters", fs=None):
        self._slots = Slots(path, fs)
        self.seq = 0  # the highest journal seq whose settlement is included
        # game -> [rounds, wagered, paid, {wager_type: [count, wagered, paid]}]
        self._games = {}
        # Counted by apply(save=False) and not saved yet (flush(), checkpoint()): the
        # journal holds those settlements, and recover() counts them again after a cut.
        self.unsaved = False

    # ---- persistence ----
    def load(self):
        try:
            text = self._slots.load()
        except SlotCorrupt as e:
            raise MetersCorrupt("store_corrupt", str(e))
        if text is None:
            self.seq = 0
            self._games = {}
            return self
        try:
            obj = json.loads(text)
            if obj["v"] != _VERSION:
                raise ValueError("version %r" % (obj["v"],))
            games = {}
            for g, rounds, wagered, paid, types in obj["games"]:
                games[g] = [rounds, wagered, paid,
                            dict((t, [c, w, p]) for t, c, w, p in types)]
            seq = obj["seq"]
        except (ValueError, KeyError, TypeError) as e:
            # The CRC was good, so this is a bug or a foreign file: do not guess.
            raise MetersCorrupt("bad_data", str(e))
        self.seq = seq
        self._games = games
        return self

    def _text(self, games, seq):
        # Sorted lists, not dicts: the same bytes on CPython and MicroPython.
        rows = []
        for g in sorted(games):
            rounds, wagered, paid, types = games[g]
            rows.append([g, rounds, wagered, paid,
                         [[t] + types[t] for t in sorted(types)]])
        return json.dumps({"v": _VERSION, "seq": seq, "games": rows})

    # ---- updates ----
    def apply(self, seq, game, lines, save=True):
        """Count one settlement (journal record `seq`) for `game`: rounds += 1, and each
        (wager_type, wagered, paid) line. Returns False, changing nothing, if seq is
        already included (a replay). Bad input raises and changes nothing. save=False:
        counted in RAM, saved by flush() or the next checkpoint() (the settlement is in
        the journal already, so a cut before then is recovered at boot)."""
        if not _is_int(seq) or seq < 1:
            raise ValueError("seq must be an int >= 1")
        lines = _check_lines(game, lines)
        if seq <= self.seq:
            return False
        old = self._games.get(game)
        if old is None:
            entry = [0, 0, 0, {}]
        else:  # a copy: RAM changes only once the save has succeeded
            entry = [old[0], old[1], old[2], dict((t, list(v)) for t, v in old[3].items())]
        entry[0] += 1
        for wt, wagered, paid in lines:
            entry[1] += wagered
            entry[2] += paid
            c = entry[3].get(wt)
            if c is None:
                c = entry[3][wt] = [0, 0, 0]
            c[0] += 1
            c[1] += wagered
            c[2] += paid
        games = dict(self._games)
        games[game] = entry
        if save:
            self._slots.save(self._text(games, seq))
        self._games = games
        self.seq = seq
        self.unsaved = self.unsaved or not save
        return True

    def flush(self):
        """Save what apply(save=False) counted, if anything (an OSError as a save's)."""
        if self.unsaved:
            self._slots.save(self._text(self._games, self.seq))
            self.unsaved = False

    def checkpoint(self, seq):
        """Record that every settlement up to journal seq `seq` is included (called when
        the journal starts a segment; see the module comment)."""
        if not _is_int(seq) or seq < 0:
            raise ValueError("seq must be an int >= 0")
        if seq > self.seq or self.unsaved:
            # (Unsaved counts are included: the segments they were journalled in may go
            # once this is saved.)
            seq = max(seq, self.seq)
            self._slots.save(self._text(self._games, seq))
            self.seq = seq
            self.unsaved = False

    def recover(self, journal, parse=parse_settlement):
        """At boot, after journal.open(): count the settlements journalled after self.seq
        (the crash window). Returns how many were applied. Raises MetersCorrupt if the
        meters and the journal disagree about history."""
        if self.seq > journal.last_seq:
            raise MetersCorrupt("ahead_of_journal", "meters at seq %d, journal ends at %d"
                                % (self.seq, journal.last_seq))
        if self.seq < journal.first_seq - 1:
            raise MetersCorrupt("journal_missing_records", "meters at seq %d, journal "
                                "starts at %d" % (self.seq, journal.first_seq))
        n = 0
        for seq, kind, payload in journal.records(self.seq + 1):
            if kind != KIND_RECORD:
                continue
            try:
                s = parse(payload)
                if s is not None and self.apply(seq, s[0], s[1]):
                    n += 1
            except (ValueError, TypeError) as e:
                # A record with a good CRC that is not a settlement we can count: the
                # engine and the meters disagree; stop rather than skip money.
                raise MetersCorrupt("bad_settlement", "seq %d: %s" % (seq, e))
        return n

    def reset(self, seq):
        """After damage (an authenticated, journalled meters-reset; docs/journal.md):
        copy each existing copy to NAME.SEQ.bad (kept for the investigation), then write
        empty meters that include everything up to journal seq `seq` into both copies.
        Returns the names kept. A cut part-way leaves the damage readable as before, so
        the tilt stays and the reset is repeated."""
        if not _is_int(seq) or seq < 0:
            raise ValueError("seq must be an int >= 0")
        fs = self._slots.fs
        kept = []
        for p in self._slots.paths:
            if fs.size(p) < 0:
                continue
            f = fs.open(p, "rb")
            try:
                blob = f.read()
            finally:
                f.close()
            dot = p.rfind(".")
            name = "%s.%d%s.bad" % (p[:dot], seq, p[dot:])
            write_file(fs, name, blob, self._slots.parent)
            kept.append(name)
        text = self._text({}, seq)
        self._slots.gen = 0
        self._slots.save(text)  # both copies: no damaged generation is read again
        self._slots.save(text)
        self._games = {}
        self.seq = seq
        self.unsaved = False
        return kept

    # ---- reading ----
    def games(self):
        return sorted(self._games)

    def game(self, gid):
        """{'rounds', 'wagered', 'paid', 'types': {wager_type: {'count','wagered','paid'}}}
        (zeros for a game never played)."""
        e = self._games.get(gid) or [0, 0, 0, {}]
        return {"rounds": e[0], "wagered": e[1], "paid": e[2],
                "types": dict((t, {"count": v[0], "wagered": v[1], "paid": v[2]})
                              for t, v in e[3].items())}

    def totals(self):
        r = w = p = 0
        for e in self._games.values():
            r += e[0]
            w += e[1]
            p += e[2]
        return {"rounds": r, "wagered": w, "paid": p, "seq": self.seq}
