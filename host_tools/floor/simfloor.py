"""Many tables for the floor's load and failure tests: the real firmware (pitboss.app on
CPython, the same controller, journal, meters and auth as a board's) behind one pty a
table, each answering the bench protocol exactly as a production board's main loop
does (pitboss.loop.pump), while a dealer in the same process plays seeded rounds on it
(wagers, the deal, each card, decisions, settlement; host_tools.table.rounds.plan_round).

    python -m host_tools.floor.simfloor --dir DIR --tables 10 [--prefix sim] [--rounds 5]
        [--seed 1] [--pace 0.05] [--games pr-pai-gow,nj-3card] [--tilt-every 0]

Files under DIR: keys/ (the floor's key store: each table provisioned on first start),
boards/ID/ (each table's flash: journal, meters, auth), tty/ID (a symlink to its pty,
renewed at every start: what the collector's configuration names), settled-PREFIX.jsonl
(each settlement as the dealer saw it: board, round, seq, time: for lag figures) and
PREFIX.json (pid and tables, written once every table answers).

A power cut is `kill -9` of this process: the tables' journals are as the firmware left
them at that instant (a record half written included) and the next start boots each from
its journal (a round in play resumes where it was). Journals are written without fsync:
a killed process loses nothing the kernel was given, and fifty tables' fsyncs would
measure the disk, not the floor.

Control files (for tests and demos): DIR/ctl/ID.tilt makes the shoe report a gap (a
misdeal: the shoe_gap tilt, the round in play lost); DIR/ctl/ID.clear (its text: the
operator) clears it with an authenticated tilt-clear, which voids the lost round. With
--tilt-every K, every Kth round of a table is a misdeal, cleared by "op-sim" after
--tilt-hold seconds.
"""
import argparse
import json
import os
import pty
import selectors
import signal
import sys
import time
import tty


GAMES = ("pr-pai-gow", "nj-3card", "qc-caribbean", "pa-three-card-prime", "nj-5card")
SEATS = {"pr-pai-gow": 4, "nj-3card": 4, "qc-caribbean": 4, "pa-three-card-prime": 4,
         "nj-5card": 4, "pa-all-six": 4, "pr-pai-gow-a5-low": 4}


class SimHW:
    """A board file for one simulated table: its own shoe UART (boards.virtual's
    peripherals are one set a process), no display."""

    NAME = "sim"
    PERIPHERALS = ("shoe",)

    def __init__(self):
        from boards.virtual import BufferUART
        self._shoe = BufferUART()

    def shoe_uart(self):
        return self._shoe


class Out:
    """The stream json_writer writes a reply into; flushed to the pty after each pass."""

    def __init__(self):
        self.parts = []

    def write(self, s):
        self.parts.append(s)

    def take(self):
        data = "".join(self.parts).encode()
        self.parts = []
        return data


class SimTable:
    def __init__(self, floor, ident, index, game):
        from pitboss import app as appmod
        from pitboss import loop
        from pitboss.store.osfs import OsFS

        self.floor = floor
        self.id = ident
        self.index = index
        self.root = os.path.join(floor.dir, "boards", ident)
        fresh = not os.path.isdir(self.root)
        os.makedirs(self.root, exist_ok=True)
        self.app = appmod.App(SimHW(), root=self.root, check_firmware=False,
                              fs=OsFS(durable=False))
        self.ctl = self.app.ctl
        self.ctl.stream = True  # as pitboss.loop.main sets it: rows written as read
        keys = floor.keys
        if fresh or not keys.key_path(ident).exists():
            from pitboss.store import auth
            key = keys.provision(ident, force=True)
            auth.provision(key, self.root + "/auth")
            self.ctl.auth.load()
        if self.ctl.table is None:
            cfg = {"game": game, "seats": SEATS.get(game, 4)}
            # These tables run in production, which refuses a placeholder paytable
            # (issue 30): a game whose defaults are unverified gets the test's own.
            from host_tools.table.rounds import stand_in_paytables
            own = stand_in_paytables(game)
            if own:
                cfg["paytables"] = own
            r = self.command("config " + json.dumps(cfg, separators=(",", ":")), signed=True)
            if not r.get("ok"):
                raise RuntimeError("%s: configuration refused: %s" % (ident, r))
        self.out = Out()
        self.write = loop.json_writer(self.out)
        self.reader = loop.LineReader()
        self.pump = loop.pump
        self.master, slave = pty.openpty()
        tty.setraw(slave)
        # The slave end stays open here too: a collector that closes it (or has not
        # opened it yet) must not make the board's side read EIO.
        self.slave = slave
        os.set_blocking(self.master, False)
        self.pending = b""
        link = os.path.join(floor.dir, "tty", ident)
        tmp = link + ".new"
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(os.ttyname(slave), tmp)
        os.replace(tmp, link)
        self.steps = None
        self.tilted_at = None

    # ---- the protocol line -------------------------------------------------------------
    def readable(self):
        try:
            data = os.read(self.master, 65536)
        except (BlockingIOError, OSError):
            return
        self.pump(self.app, self.reader, data, self.write)
        self.send(self.out.take())

    def send(self, data):
        self.pending += data
        while self.pending:
            try:
                n = os.write(self.master, self.pending)
            except BlockingIOError:
                break
            except OSError:
                self.pending = b""
                break
            self.pending = self.pending[n:]
        if len(self.pending) > 1 << 20:
            self.pending = b""  # nobody reads: a USB serial port drops it too

    # ---- the dealer --------------------------------------------------------------------
    def command(self, line, signed=False):
        if signed:
            line = self.floor.keys.sign(self.id, line, board_last=self.ctl.auth.counter)
        return self.ctl.command(line)

    def tick(self):
        """One step of play: wagers, the deal, a few cards, decisions, the settlement."""
        f = self.floor
        ctl = self.ctl
        if self.tilted_at is not None or ctl.halted():
            if self.tilted_at is None:
                self.tilted_at = time.monotonic()
            if f.tilt_hold and time.monotonic() - self.tilted_at >= f.tilt_hold:
                self.clear("op-sim")
            return False
        t = ctl.table
        if self.steps is None:
            if t.phase == "settled" and t.round >= f.rounds:
                return True  # done
            if t.phase in ("configured", "settled"):
                n = t.round + 1 if t.phase == "settled" else t.round
            else:
                n = t.round  # a round replayed from the journal at boot: resumed
            self.steps = self.plan(n)
        try:
            step = next(self.steps)
        except StopIteration:
            self.steps = None
            return False
        for line in step:
            r = self.command(line)
            if not r.get("ok") and r.get("error", {}).get("code") not in (
                    "wrong_phase", "bad_decision"):
                raise RuntimeError("%s: %r refused: %s" % (self.id, line, r))
            if line == "settle" and r.get("ok"):
                f.settled(self.id, r["round"], ctl.journal.last_seq)
        return False

    def plan(self, number):
        """The steps of round `number` from where the table is: a fresh round, or one a
        power cut interrupted (replayed from the journal at boot, resumed here)."""
        from host_tools.table.rounds import plan_round

        f = self.floor
        t = self.ctl.table
        before, frames, after = plan_round(t.game, SEATS.get(t.game, 4),
                                           f.seed + self.index * 100000 + number)
        cards = [int(frames[i + 1:i + 3], 16) for i in range(0, len(frames), 12)]
        fresh = t.phase in ("configured", "settled", "wagers")
        if fresh:
            yield before[:-1]  # every seat's wagers
            yield before[-1:]  # the deal
        dealt = self.ctl.table.dealt if self.ctl.table.phase == "dealing" else len(cards)
        stop = len(cards)
        tilt = fresh and f.tilt_every and number % f.tilt_every == 0
        if tilt:
            stop = len(cards) // 2
        for i in range(dealt, stop, 4):
            yield ["card %d" % c for c in cards[i:min(i + 4, stop)]]
        if tilt:
            self.misdeal()  # the shoe lost frames halfway: the round is lost
            return
        yield after[:-1]  # decisions
        yield after[-1:]  # the settlement

    def misdeal(self):
        self.ctl.misdeal("shoe_gap", "frames missing (the floor simulator)")
        self.tilted_at = time.monotonic()
        self.steps = None

    def clear(self, operator):
        for _ in range(3):
            r = self.command("tilt-clear %s" % operator, signed=True)
            if r.get("error", {}).get("code") != "replay":
                break
            # the collector signed an acknowledgement with the same counter first (one
            # key store, two signers): the next counter is above it
        if r.get("ok"):
            self.tilted_at = None
            self.steps = None
        return r


class SimFloor:
    def __init__(self, folder, n, prefix="sim", first=1, rounds=5, seed=1, pace=0.05,
                 games=GAMES, tilt_every=0, tilt_hold=2.0):
        from host_tools.table.auth import KeyStore

        self.dir = os.path.abspath(folder)
        for sub in ("boards", "tty", "ctl", "keys"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        self.keys = KeyStore(os.path.join(self.dir, "keys"))
        self.rounds = rounds
        self.seed = seed
        self.pace = pace
        self.tilt_every = tilt_every
        self.tilt_hold = tilt_hold
        self.prefix = prefix
        self.log = open(os.path.join(self.dir, "settled-%s.jsonl" % prefix), "a")
        self.tables = [SimTable(self, "%s%03d" % (prefix, first + i), first + i,
                                games[(first + i) % len(games)]) for i in range(n)]

    def settled(self, board, rnd, seq):
        self.log.write(json.dumps({"board": board, "round": rnd, "seq": seq,
                                   "at": time.time()}) + "\n")
        self.log.flush()

    def state(self):
        return {"pid": os.getpid(), "prefix": self.prefix,
                "tables": [{"id": t.id, "port": os.path.join(self.dir, "tty", t.id),
                            "game": t.ctl.table.game} for t in self.tables]}

    def control(self):
        for t in self.tables:
            base = os.path.join(self.dir, "ctl", t.id)
            if os.path.exists(base + ".tilt"):
                os.unlink(base + ".tilt")
                t.misdeal()
            if os.path.exists(base + ".clear"):
                with open(base + ".clear") as f:
                    op = f.read().strip() or "op-sim"
                os.unlink(base + ".clear")
                t.clear(op)

    def serve(self, seconds=None):
        sel = selectors.DefaultSelector()
        for t in self.tables:
            sel.register(t.master, selectors.EVENT_READ, t)
        path = os.path.join(self.dir, "%s.json" % self.prefix)
        with open(path + ".tmp", "w") as f:
            json.dump(self.state(), f)
        os.replace(path + ".tmp", path)
        end = None if seconds is None else time.monotonic() + seconds
        next_tick = time.monotonic()
        next_ctl = 0
        while end is None or time.monotonic() < end:
            wait = max(0.0, next_tick - time.monotonic())
            if any(t.pending for t in self.tables):
                # A reply larger than the pty's buffer (an export is ~10 KB) goes out as
                # the reader takes it: no more input may come until it has all of it.
                wait = min(wait, 0.005)
            for key, _ in sel.select(wait):
                key.data.readable()
            for t in self.tables:
                if t.pending:
                    t.send(b"")
            now = time.monotonic()
            if now >= next_ctl:
                self.control()
                next_ctl = now + 0.2
            if now >= next_tick:
                for t in self.tables:
                    t.tick()
                next_tick = now + self.pace


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.floor.simfloor",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--tables", type=int, default=10)
    ap.add_argument("--prefix", default="sim")
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5, help="rounds a table plays in all")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pace", type=float, default=0.05, help="seconds between steps")
    ap.add_argument("--games", default=",".join(GAMES))
    ap.add_argument("--tilt-every", type=int, default=0)
    ap.add_argument("--tilt-hold", type=float, default=2.0)
    ap.add_argument("--seconds", type=float, default=None)
    a = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    from host_tools.emu import framebuf_shim
    from host_tools.fast import hostfast
    framebuf_shim.install()
    hostfast.install()
    floor = SimFloor(a.dir, a.tables, a.prefix, a.first, a.rounds, a.seed, a.pace,
                     a.games.split(","), a.tilt_every, a.tilt_hold)
    floor.serve(a.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
