"""The board tier on the emulated Raspberry Pi Pico, run in the background.

The emulator is a Node process doing all the work while this side waits on its serial
port, so the Pico's jobs run from a thread (each in one worker process: PicoTier says
why) from the end of collection (conftest.py) while
the rest of the suite uses the other core; tests/pico/test_pico_board.py asserts on each job's
result when it gets there. One flashed Pico does the jobs in order; the power-cut jobs run
on a second Pico started from a copy of the first one's flash taken right after flashing.

Every figure here is emulated: chip time is the emulator's clock at 125 MHz.
"""
import concurrent.futures
import json
import os
import random
import shutil
import tempfile
import threading
import time
from pathlib import Path

from host_tools.deploy import flash as flashing
from host_tools.emu import vboard
from host_tools.emu import vboard_state
from host_tools.deploy import verify
from host_tools.table.auth import KeyStore
from host_tools.deploy.board_rank import rank_lines
from host_tools.deploy.board_vectors import board_run, cpython_run
from host_tools.link.boardlink import Board
from host_tools.output import BoardError
from host_tools.emu.pico import control_for
from host_tools.table.configurator import Configurator
from host_tools.table.targets import PicoTarget
from pitboss.rules import profiles
from pitboss.rules.cards import names
from tests.support import timeline

# Random hands per game ranked on the Pico vs CPython. The virtual board tier ranks 1,000
# per game (tests/board/test_board_e2e.py); on the Pico each costs ~13 ms of chip time (~30 ms of
# wall time), so CI ranks 125 per game (1,000 in all) to stay within its 15 minutes on 2
# cores; PITBOSS_PICO_HANDS=1000 runs the full 1,000 per game (about 4 more minutes).
HANDS_PER_GAME = int(os.environ.get("PITBOSS_PICO_HANDS", "125"))
# Rounds of every game through UART1 against CPython: the survive job's session plays
# each game in production (tests/support/pico_survive.py, CI_SEATS), so this tier has no job of
# its own for them (one took CI ~75-100 s of the emulator for the same proof, over the
# raw REPL instead of the table's loop).

# Power cuts inside the flash operations of a settlement: (operations that finish first,
# bytes of the cut one that reach the chip).
CUTS = ((0, 0), (2, 100), (4, 3000))
CUT_GAME, CUT_SEATS = "nj-3card", 3
# The stock image's job (issue 27: the pitboss image is the board of record, the stock
# one must still run a table): its flash, a round through the file-backed journal, and
# the vectors of the games whose code and heap differ most (the three-card table it
# runs, Pai Gow's largest hands), not all eight files: the same bytecode passes every
# vector on the image's job, and all of them on stock cost CI 312 s of its wall
# (2026-12-03, the stock job 381 s of the Pico tier's 1,754).
STOCK_VECTORS = ("nj-3card", "pr-pai-gow")
JOBS = ("flash", "vectors", "hands", "names", "serial", "screen", "rfid", "powercut",
        "romfs", "stock", "release", "session", "survive")
# The budget session (issue 27; issue 11's budget) on the release image, at the
# budget's own size, on a Pico and a thread of its own from when the flash job is done,
# beside the first Pico's jobs and the rest of the suite: every game at a full table
# (pico_survive.SESSION_SEATS) for SESSION_ROUNDS rounds, each settled as on CPython,
# SESSION_LINES protocol lines, exports and acknowledgements, `recall 50`, a deck
# registered through the MFRC522, a power cycle. It took 59.5 minutes of rp2040js's
# interpreter (2026-12-06); with its core in WebAssembly (fix 8), ~9 of CI's wall time
# (docs/bench.md).
# PITBOSS_SESSION_ROUNDS / PITBOSS_SESSION_LINES run a smaller one (a quick local run).
SESSION_ROUNDS = int(os.environ.get("PITBOSS_SESSION_ROUNDS", "200"))
SESSION_LINES = int(os.environ.get("PITBOSS_SESSION_LINES", "10000"))
# The budget's full journal (issue 11: the journal near its budget), after the session.
FULL_JOURNAL_SEGMENTS = 7
# Jobs on a Pico and a thread of their own, started when "flash" is done: survive (from
# its fresh flash) is as long as all the others together, and the budget session (its
# own flash of the release image) longer than all of them.
SIDE_JOBS = ("survive", "session")
# Issue 11 on the serial line (job "serial", before "rfid" registers a deck and makes the
# RFID reader the table's shoe): a round dealt through UART1 while the host sends
# `status` and `recall` between frames; then LINK_CARDS cards through the acknowledged
# link with the flash chip at its worst case (W25Q16JV: 400 ms sector erase, 3 ms page
# program), so bytes are really dropped. `python -m host_tools.proofs.pico_link --cards 10000`
# is the long run.
SERIAL_GAME, SERIAL_SEATS, SERIAL_SEED = "nj-3card", 3, 40
LINK_GAME, LINK_SEATS = "nj-5card", 6
LINK_CARDS = int(os.environ.get("PITBOSS_PICO_LINK_CARDS", "90"))
WORST_FLASH_MS = (400, 3)
# On the pitboss image a card's path programs a page of the raw region and erases
# nothing (sectors are erased ahead between rounds), and a page program at its
# datasheet maximum (3 ms) is shorter than the FIFO's 32 bytes at 9600 baud: no byte
# is ever dropped. To still prove the resends recover dropped bytes, the page program
# is made as slow as the worst erase there (longer than three 100 ms resends).
WORST_FLASH_MS_IMAGE = (400, 400)
# A job needs these to have run first (on the same Pico).
NEEDS = {}


def report_session(write):
    """The budget session's figures (job `session`), if it ran in this process's tier."""
    t = PicoTier._instance
    f = t.futures.get("session") if t is not None else None
    if f is None or not f.done() or f.exception() is not None:
        return
    fig = f.result()
    if "skipped" in fig:
        return
    for line in session_summary(fig):
        write(line)


def session_summary(fig):
    """The lines a budget session's figures print as (pico_survive.session's)."""
    c, n = fig["card_ms"], fig["meters_rounds"]
    return [
        "budget session (issue 27; release image, emulated Pico, chip time at 125 MHz): "
        "%d rounds of each of %d games at full tables, %d lines, %d exports" % (
            fig["rounds"], len(fig["seats"]), fig["lines"], fig["exports"]),
        "  lowest free heap %d B (budget >= %d), smallest largest block %d B" % (
            fig["min_free"], 150 * 1024, fig["min_max_block"]),
        "  %d cards, frame to acknowledgement: p50 %.2f ms, p99 %.2f ms, max %.2f ms "
        "(budget 2 / 5 / 15)" % (c["n"], c["p50"], c["p99"], c["max"]),
        "  boot %d ms, after the session's power cycle %d ms (budget 400); free %d / %d B" % (
            fig["boot"]["up_ms"], fig["boot_after_session"]["up_ms"], fig["boot"]["free"],
            fig["boot_after_session"]["free"]),
        "  %.1f s of chip time, %.0f s of wall time (%.0f s for the lines); flash: %d "
        "sector erases, %.2f a round" % (
            fig["chip_s"], fig["wall_s"], fig["lines_wall_s"],
            fig["flash"]["sectors_erased"], fig["flash"]["sectors_erased"] / max(n, 1)),
    ] + ([
        "  after a power cycle with a full journal (%d segments): first line %d ms, "
        "free %d B (budget >= %d), largest block %d B" % (
            len(fj["segments"]), fj["boot"]["up_ms"], fj["boot"]["free"], 180 * 1024,
            fj["boot"]["max_block"])] if (fj := fig.get("full_journal")) else [])


def random_hands(game, n, seed):
    p = profiles.get(game)
    rng = random.Random(seed)
    return [" ".join(names(rng.sample(range(p.deck), p.size))) for _ in range(n)]


def full_journal_segments():
    """Segments of the survive job's long journal: ~64 KB before the newest one."""
    return 3 if image_is_pitboss() else 2


def image_is_pitboss():
    """Does the tier's Pico boot the pitboss image (the default, or its release variant:
    the same layout and journal region) rather than stock?"""
    from host_tools.emu.pico import PITBOSS, PITBOSS_UF2, RELEASE, RELEASE_UF2
    want = os.environ.get("PITBOSS_PICO_UF2") or PITBOSS
    return want in (PITBOSS, RELEASE) or Path(want).resolve() in (
        PITBOSS_UF2.resolve(), RELEASE_UF2.resolve())


class Pico:
    """One emulated Pico with its own state dir and flash file."""

    def __init__(self, base, flash_dir=None, gpio=None, uf2=None):
        self.state = base / "state"
        self.flash = Path(flash_dir or base / "flash")
        self.gpio = gpio
        self.uf2 = uf2
        self.keys = KeyStore(str(base / "keys"))
        self.board = None
        self.up()

    def up(self):
        st = vboard.start(self.flash, state_dir=self.state, kind="pico", gpio=self.gpio,
                          parent_pid=os.getpid(), uf2=self.uf2)
        self.port, self.pid = st["port"], st["pid"]
        self.ctl = control_for(self.port)

    def connect(self):
        self.board = Board(self.port)
        self.target = PicoTarget(self.board)
        self.conf = Configurator(self.target, "pico", self.keys)
        return self.board

    def wait_off(self, timeout=120):
        """The emulator stopped itself (a power cut): wait until its daemon is gone. One
        still there after `timeout` is stopped (vboard_state.stop: SIGTERM, then SIGKILL, and
        its state cleared): a SIGKILL here alone, then status(), left its state behind
        when the daemon had not died yet, and the next start() refused ("a board is
        already running"; a clean-clone run on a loaded machine, 2026-12-03)."""
        deadline = time.monotonic() + timeout
        while vboard_state.alive(self.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        vboard_state.stop(self.state)  # nothing left running: only clears stale state

    def close(self):
        if self.board is not None:
            self.board.close()
            self.board = None

    def stop(self):
        self.close()
        vboard_state.stop(self.state)


class PicoTier:
    """The session's Pico jobs, run one after another by a thread of this process, each
    in a worker process of its own (one for all the jobs, so the flashed Pico carries
    from job to job): the jobs check the Pico against the firmware on CPython, and the
    foreground tests patch that firmware's module state (tests/host/test_tables.py patches
    the evaluator's tables), which a reference in this process would settle with (in a
    CI run on 2026-12-01 the survive job's CPython twin tilted where the Pico did not,
    most likely so)."""
    _instance = None
    _lock = threading.Lock()

    @classmethod
    def get(cls, jobs=None):
        """The session's tier, started on first use with `jobs` (default: all)."""
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls(jobs)
                cls._instance.start()
            return cls._instance

    @classmethod
    def shutdown(cls):
        with cls._lock:
            if cls._instance is not None:
                cls._instance.stop()

    def __init__(self, jobs=None):
        want = set(jobs or JOBS) | {"flash"}
        for j in list(want):
            want.update(NEEDS.get(j, ()))
        self.jobs = [j for j in JOBS if j in want]
        self.base = Path(tempfile.mkdtemp(prefix="pitboss-pico-tier-"))
        self.futures = {j: concurrent.futures.Future() for j in JOBS}
        self.thread = threading.Thread(target=self._run, name="pico-tier", daemon=True)
        self.pool = None
        self.side_threads, self.side_pools = [], []
        self.stopping = False

    def start(self):
        self.thread.start()

    def result(self, job, timeout=1500):
        with timeline.waiting(job):
            return self.futures[job].result(timeout)

    def stop(self):
        self.stopping = True
        self.thread.join(60)  # it joins the side threads before it ends
        done = not self.thread.is_alive()
        for pool in [self.pool] + self.side_pools:
            if pool is None:
                continue
            if done:
                try:
                    pool.apply(_stop_jobs)  # the boards stopped cleanly
                except Exception:
                    pass
            # A worker still in a job is killed; its boards see their owner gone and
            # stop by themselves (vboard's parent_pid).
            pool.terminate()
        shutil.rmtree(self.base, ignore_errors=True)

    def _run(self):
        from host_tools import process_pool
        self.pool = process_pool(1)
        for job in JOBS:
            fut = self.futures[job]
            if job not in self.jobs:
                fut.set_exception(RuntimeError("pico job %s was not selected" % job))
                continue
            if job in SIDE_JOBS:
                continue  # started on its own thread once the flash job is done
            if self.stopping:
                fut.set_exception(RuntimeError("pico tier stopped"))
                continue
            try:
                with timeline.job("pico", job):
                    fut.set_result(self.pool.apply(_run_job, (str(self.base), job)))
            except BaseException as e:  # each test reports its own job's failure
                fut.set_exception(e)
            if job == "flash":
                for side in SIDE_JOBS:
                    if side in self.jobs:
                        t = threading.Thread(target=self._run_side, args=(side,),
                                             name="pico-" + side, daemon=True)
                        self.side_threads.append(t)
                        t.start()
        for t in self.side_threads:
            t.join()

    def _run_side(self, job):
        """A job on a Pico of its own from the fresh flash (tests/support/pico_survive.py), in a
        worker process of its own, while the first Pico's jobs go on: the longest job,
        so CI's wall time is set by it and not by the sum."""
        from host_tools import process_pool
        pool = process_pool(1)
        self.side_pools.append(pool)
        fut = self.futures[job]
        try:
            if self.stopping:
                raise RuntimeError("pico tier stopped")
            with timeline.job("pico-2", job):
                fut.set_result(pool.apply(_run_job, (str(self.base), job)))
        except BaseException as e:
            fut.set_exception(e)


_jobs = None  # the worker process's Jobs


def _run_job(base, job):
    global _jobs
    if _jobs is None:
        _jobs = Jobs(Path(base))
    return _jobs.run(job)


def _stop_jobs():
    if _jobs is not None:
        _jobs.stop()


class Jobs:
    """The jobs themselves, in the worker process: one flashed Pico (`a`) for all but
    the power cuts (a second Pico) and the survive run (a third)."""

    def __init__(self, base):
        self.base = base
        self.boards = []
        self.a = None

    def stop(self):
        for b in self.boards:
            try:
                b.stop()
            except Exception:
                pass

    def run(self, job):
        if job == "flash":
            self.a = Pico(self.base / "a")
            self.a.provisioned = False
            self.boards.append(self.a)
            return self.job_flash(self.a)
        return getattr(self, "job_" + job)(self.a)

    def _chip(self, pico, fn):
        """fn()'s result and the emulated chip seconds and wall seconds it took."""
        c0, t0 = pico.ctl.cycles(), time.monotonic()
        out = fn()
        c1 = pico.ctl.cycles()
        return out, (c1["ns"] - c0["ns"]) / 1e9, time.monotonic() - t0

    def job_flash(self, a):
        flash_from = a.ctl.cycles()["ns"]  # (chip ns since power-on when the flash began)
        res, chip, wall = self._chip(a, lambda: flashing.flash(a.port, progress=None))
        # A freshly flashed board's flash, never run on: the power-cut and survive Picos
        # start from copies of it.
        shutil.copytree(a.flash, self.base / "fresh-flash")
        verified = verify.verify(a.port, progress=None).ok
        a.connect()
        boot = a.ctl.cycles()
        # Which journal region the board gives (boards/pico.py): the raw one on the
        # pitboss image, sector files on a stock one.
        region = a.board.exec("import board\nfrom pitboss.hw import board as drivers\n"
                              "print(type(drivers.journal_region(board)).__name__)")
        # The pitboss image's heap figures in C (pitboss_heap, what compat.mem_free,
        # mem_alloc and max_block use there) against MicroPython's own over heaps of many
        # shapes: free() and gc.mem_free(), alloc() and gc.mem_alloc(), max_block() and the
        # "max free sz" (blocks) micropython.mem_info() prints, read in that order with
        # nothing allocated between; [] on a stock image. (At most ~110 KB held at once,
        # the last list built beside the one before it: at 150 * k, ~170 KB, the heap 6
        # KB smaller for the Python stack (then) ran out.)
        heap = a.board.exec(
            "import gc, json, micropython\ntry:\n import pitboss_heap\nexcept ImportError:\n"
            " pitboss_heap = None\nout = []\nkeep = None\n"
            "f0 = f1 = a0 = a1 = m0 = 0\n"  # (a first store of a global grows the dict)
            "for k in range(5 if pitboss_heap else 0):\n"
            " keep = [bytearray(k * 37 + i % 5) for i in range(100 * k)]\n"
            " if k == 3:\n  gc.collect()\n"
            " f0 = pitboss_heap.free()\n f1 = gc.mem_free()\n"
            " a0 = pitboss_heap.alloc()\n a1 = gc.mem_alloc()\n"
            " m0 = pitboss_heap.max_block()\n micropython.mem_info()\n"
            " out.append([f0, f1, a0, a1, m0])\n"
            "print(json.dumps(out))")
        lines = heap.strip().splitlines()
        # mem_info()'s "... max blk sz: N, max free sz: N" (blocks of 16 bytes), one a shape
        free_runs = [int(ln.rsplit(":", 1)[1]) * 16 for ln in lines if "max free sz" in ln]
        # When this run of MicroPython began (pitboss_heap.started, what `mem`'s up_ms and
        # the boot's figures count from): [ticks_ms(), started()], started None on a
        # stock image. The flash and the raw REPL soft-reset the board long after its
        # power-on.
        started = a.board.exec(
            "import time\ntry:\n from pitboss_heap import started\nexcept ImportError:\n"
            " started = None\nprint(time.ticks_ms(), started and started())").split()
        # `pitboss bench --port pico` runs its board script as a module written to the
        # littlefs root, which the pitboss image keeps off sys.path (host_tools/bench/pico.py
        # puts '/' on it for that import only): the same two steps with a probe.
        from host_tools.bench.pico import import_module, put_module
        put_module(a.board, "pitboss_probe", "import sys\nprint('probe', '/' in sys.path)\n")
        probe = import_module(a.board, "pitboss_probe", timeout=60).split()
        probe += a.board.exec("import os, sys\nprint('/' in sys.path, "
                              "'pitboss_probe.mpy' in os.listdir('/'))").split()
        return {"copied": len(res.copied), "verified": verified, "region": region.strip(),
                "probe": probe,
                "chip_s": chip, "wall_s": wall, "boot_ready_ns": boot["boot_ready_ns"],
                "heap": json.loads(lines[-1]), "max_free_runs": free_runs,
                "started": [int(started[0]), None if started[1] == "None" else int(started[1])],
                "flash_from_ms": flash_from / 1e6}

    def job_vectors(self, a):
        host = cpython_run()
        on_board, chip, wall = self._chip(a, lambda: board_run(a.board))
        return {"host": host, "board": on_board, "chip_s": chip, "wall_s": wall}

    def job_hands(self, a):
        out = {}
        for i, game in enumerate(profiles.GAMES):
            hands = random_hands(game, HANDS_PER_GAME, seed=1000 + i)
            out[game] = (hands, rank_lines(a.board, game, hands))
        return out

    def _provisioned(self, a):
        if not getattr(a, "provisioned", False):
            a.conf.provision()
            a.provisioned = True

    def job_serial(self, a):
        """Protocol lines to the running loop (service mode; the loop runs there too)."""
        from host_tools.proofs.pico_link import deal_rounds
        from host_tools.table.rounds import plan_round
        from host_tools.table.targets import ProtoTarget

        self._provisioned(a)
        a.close()  # a soft reset: the table's loop runs again
        t = ProtoTarget(a.port)
        out = {}
        ok = False
        try:
            t0 = time.monotonic()
            t.link.ready(900)
            t.commands(["clock %d" % int(time.time())])
            conf = Configurator(t, "pico", a.keys)
            r = conf.configure(SERIAL_GAME, SERIAL_SEATS)
            assert r.get("ok"), r
            plans = [plan_round(SERIAL_GAME, SERIAL_SEATS, SERIAL_SEED + i) for i in (0, 1)]
            ctl = a.ctl
            # Round 1: nothing but the deal. Round 2: `status` and `recall 3` after every
            # frame the shoe (the emulator's acknowledging shoe on UART1) got acknowledged.
            quiet = t.commands(plans[0][0])
            fl = t.renumber(plans[0][1])
            ctl("shoe", id=1, hex=b"".join(fl).hex(), wait=True)
            quiet += t.link.wait_events(len(fl), timeout=120)
            quiet += t.commands(plans[0][2])
            busy = t.commands(plans[1][0])
            asked = []
            fl = t.renumber(plans[1][1])
            for f in fl:
                ctl("shoe", id=1, hex=f.hex(), wait=True)
                asked += t.commands(["status", "recall 3"])
            busy += t.link.wait_events(len(fl), timeout=120)
            busy += t.commands(plans[1][2])
            out["serial"] = {"quiet": quiet, "busy": busy, "asked": asked,
                             "plans": plans, "wall_s": time.monotonic() - t0}
            # The acknowledged link with bytes really dropped in flash writes.
            t1 = time.monotonic()
            r = conf.configure(LINK_GAME, LINK_SEATS)
            assert r.get("ok"), r
            worst = WORST_FLASH_MS_IMAGE if image_is_pitboss() else WORST_FLASH_MS
            ctl("flash", erase_ms=worst[0], page_ms=worst[1])
            try:
                link = deal_rounds(t, ctl, LINK_CARDS, LINK_GAME, LINK_SEATS, seed=7)
            finally:
                ctl("flash", erase_ms=45, page_ms=0.7)
            link["wall_s"] = time.monotonic() - t1
            out["link"] = link
            ok = True
        finally:
            t.close()
            # The raw REPL again, for the jobs after this one; after a failure above, a
            # failure here must not hide that one (BoardError's `from` drops the context).
            try:
                a.connect()
            except BoardError:
                if ok:
                    raise
        return out

    def job_screen(self, a):
        ram = a.target.screen()
        drawn = bytes.fromhex(a.board.exec(
            "import pitboss.hostapi as A\nfrom binascii import hexlify\n"
            "print(hexlify(bytes(A.app().display.fb.buf)).decode())").strip())
        state = a.ctl("display")
        a.ctl("i2c", present=False)
        try:
            # A command that changes what the display shows (the seats drawn), so the
            # loop redraws it: a read-only line no longer touches it, and the driver sends
            # only the pages that changed (pitboss.hw.ssd1306), so a journalled line that
            # draws the same (`clock`) sends nothing either.
            unplugged = [a.conf.configure(LINK_GAME, LINK_SEATS - 1)]
        except BoardError as e:
            unplugged = str(e)
        finally:
            a.ctl("i2c", present=True)
        # rp2040js's I2C model leaves the aborted transfer's state behind: the first write
        # after the display is back fails with EIO (DEVELOPERS.md), the next one is fine.
        after = []
        for _ in range(2):
            try:
                after.append(a.target.commands(["status"]))
            except BoardError as e:
                after.append(str(e))
        return {"ram": ram, "driver": drawn, "state": state,
                "unplugged": unplugged, "after": after}

    def job_rfid(self, a):
        from tests.support.rfid_deck import register_and_deal
        self._provisioned(a)
        # The screen job unplugged the display: that is a display_fault tilt (issue 11),
        # which halts the table until an operator clears it, as on a real table.
        if a.target.commands(["status"])[0].get("tilts"):
            r = a.conf.signed("tilt-clear pico-tier")
            assert r.get("ok"), r
        return register_and_deal(a)

    def job_names(self, a):
        """The names the firmware interns (qstrs) once every game has been configured on
        one boot, as in the survive session (its games, order and seats): MicroPython
        keeps them for good, in pools that double in size, so one name too many
        allocates a pool of ~7.8 KB for the rest of the boot (issue 11; a seventh pool
        took a long session under its heap budget). Service mode, the same controller
        the main loop runs, after a soft reset: a heap as fresh as a boot's. It runs
        before `serial`: no tilt left by the jobs that unplug things."""
        from pitboss import games
        from tests.support.pico_survive import SESSION_SEATS

        self._provisioned(a)
        order = list(games.ids())
        lines = [a.keys.sign("pico", 'config {"game":"%s","seats":%d}'
                             % (g, SESSION_SEATS[g])) for g in order]
        a.close()
        a.connect()  # mpremote's raw REPL soft-resets the chip: a fresh heap
        out = a.board.exec(
            "import gc, micropython\n"
            "import pitboss.hostapi as A\n"
            "ctl = A.app().ctl\n"
            "for ln in %r:\n"
            "    r = ctl.command(ln)\n"
            "    gc.collect()\n"
            "    print('CONFIG', r.get('ok'), gc.mem_alloc(), r.get('error'))\n"
            "    micropython.qstr_info()\n" % (lines,))
        rows, row = [], None
        for ln in out.splitlines():
            if ln.startswith("CONFIG "):
                _, ok, alloc, err = ln.split(None, 3)
                row = {"ok": ok == "True", "alloc": int(alloc), "error": err}
                rows.append(row)
            elif ln.startswith("qstr pool:") and row is not None:
                for kv in ln.split(":", 1)[1].split(","):
                    k, v = kv.strip().split("=")
                    row[k] = int(v)
        return {"games": order, "rows": rows, "out": out[-2000:]}

    def job_powercut(self, a):
        from tests.support.pico_powercut import run_cuts
        # The first Pico's jobs are done: power it off now. An idle chip's main loop
        # polls with a 10 ms timeout, and the emulator runs those passes back to back, a
        # whole core of CI's two (an idle Pico's emulator measured 1.00 CPU s per s),
        # through this job and to the end of the session: 653 s to 823 s of the CI run of
        # 2026-12-02 07:37.
        if a is not None:
            a.stop()
        # On a copy: the survive job (on its own thread) starts from the same fresh flash.
        shutil.copytree(self.base / "fresh-flash", self.base / "b-flash")
        b = Pico(self.base / "b", flash_dir=self.base / "b-flash", gpio={15: 0})
        self.boards.append(b)
        try:
            return run_cuts(b)
        finally:
            b.stop()

    def job_romfs(self, a):
        """Issue 27: ROMFS deploys cut part way boot into a tilt, never a mix of old and
        new code (tests/support/pico_romfs_cut.py), on a Pico of its own from the fresh flash."""
        from host_tools.emu.vm.runner import repo_root
        from tests.support.pico_romfs_cut import run_cuts
        if not image_is_pitboss():
            return {"skipped": "the Pico tier runs the stock image (PITBOSS_PICO_UF2)"}
        shutil.copytree(self.base / "fresh-flash", self.base / "c-flash")
        c = Pico(self.base / "c", flash_dir=self.base / "c-flash")
        self.boards.append(c)
        try:
            return run_cuts(c, Path(repo_root()), self.base / "c-tree")
        finally:
            c.stop()

    def job_stock(self, a):
        """The stock image still runs the firmware (issue 27): `pitboss flash` copies the
        files to its littlefs, every rule vector passes on it, a round is dealt and
        settled through the file-backed journal (against CPython)."""
        if not image_is_pitboss():
            return {"skipped": "the tier's own Pico runs the stock image already"}
        d = Pico(self.base / "d", uf2="stock")
        self.boards.append(d)
        try:
            out = self._flash_vectors_round(d)
            # The round went through the file-backed region (boards/pico.py): its
            # sector files on littlefs.
            out["region"] = d.board.exec(
                "import board, os\nfrom pitboss.hw import board as drivers\n"
                "print(type(drivers.journal_region(board)).__name__,"
                " len(os.listdir('/journal/region')))").split()
            return out
        finally:
            d.stop()

    def _flash_vectors_round(self, d, between=None):
        """Another image's Pico `d`: `pitboss flash`, then between(d) if given (its
        result under "between"), the rule vectors of STOCK_VECTORS' games against
        CPython, and a round of CUT_GAME settled as on CPython; chip and wall times."""
        res, chip, wall = self._chip(d, lambda: flashing.flash(d.port, progress=None))
        out = {"copied": len(res.copied), "flash_chip_s": chip, "flash_wall_s": wall}
        if between is not None:
            out["between"] = between(d)
        d.connect()
        out["host"] = cpython_run(STOCK_VECTORS)
        out["board"], out["vectors_chip_s"], out["vectors_wall_s"] = self._chip(
            d, lambda: board_run(d.board, STOCK_VECTORS))
        from tests.support.pico_powercut import round_lines
        from host_tools.table.targets import LocalTarget
        d.conf.provision()
        assert d.conf.configure(CUT_GAME, CUT_SEATS)["ok"]
        ref = LocalTarget(durable=False)
        from tempfile import mkdtemp
        rc = Configurator(ref, "ref", KeyStore(mkdtemp()))
        rc.provision()
        assert rc.configure(CUT_GAME, CUT_SEATS)["ok"]
        lines, settle = round_lines(CUT_GAME, CUT_SEATS, 900)
        out["want"] = ref.commands(lines + [settle])[-1]
        out["got"], out["round_chip_s"], out["round_wall_s"] = self._chip(
            d, lambda: d.target.commands(lines + [settle])[-1])
        return out

    def job_release(self, a):
        """The release image (the firmware frozen into the core; host_tools/deploy/
        release.py): `pitboss flash` deploys only the manifest of its core, `verify`
        hashes it, the board runs the rule vectors of two games (the same bytecode as
        the ROMFS image's, which runs every file) and a round settled as on CPython."""
        if not image_is_pitboss():
            return {"skipped": "the tier runs another image than the pitboss image"}
        from host_tools.emu.pico import RELEASE
        d = Pico(self.base / "r", uf2=RELEASE)
        self.boards.append(d)
        try:
            out = self._flash_vectors_round(
                d, lambda d: verify.verify(d.port, progress=None))
            v = out.pop("between")
            out["verified"], out["problems"] = v.ok, v.problems
            # What runs is frozen: the firmware's modules come from the core, and a
            # module of the same name on littlefs cannot take their place.
            out["where"] = d.board.exec("import pitboss.loop as m, pitboss_program as p\n"
                                        "print(getattr(m, '__file__', '?'), p._frozen())"
                                        ).split()
            return out
        finally:
            d.stop()

    def job_session(self, a):
        """The budget session at SESSION_ROUNDS and SESSION_LINES on a release-image
        Pico of its own (tests/pico/test_pico_session.py); its figures also go to
        build/pico-session.json."""
        if not image_is_pitboss():
            return {"skipped": "the tier runs another image than the pitboss image"}
        from host_tools.emu.pico import RELEASE
        from tests.support import pico_survive
        base = self.base / "session"
        base.mkdir()
        fig = pico_survive.session(base, rounds=SESSION_ROUNDS, lines=SESSION_LINES,
                                   log=lambda m: None, uf2=RELEASE)
        # The same Pico powered up from a full journal (the budget's seven segments of
        # six-seat Pai Gow, played by the CPython twin and written into its raw region):
        # the boot budget and the free heap after it, which the release image meets by
        # little (docs/bench.md, 2026-12-07). ~1 minute of this emulator.
        (self.base / "session-journal").mkdir()
        fig["full_journal"] = pico_survive.full_journal(
            self.base / "session-journal", segments=FULL_JOURNAL_SEGMENTS,
            log=lambda m: None, reuse=base, uf2=RELEASE)
        import json
        out = Path(__file__).resolve().parents[2] / "build" / "pico-session.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(fig, default=str, indent=1))
        return fig

    def job_survive(self, a):
        """tests/support/pico_survive.py on a Pico of its own (production mode): boot budget,
        heap, junk on the serial line, watchdog recovery, a boot from a long journal
        (tests/pico/test_pico_survive.py)."""
        from tests.support import pico_survive
        base = self.base / "survive"
        base.mkdir()
        fig = pico_survive.run(base, log=lambda m: None, flashed=self.base / "fresh-flash")
        # The same Pico booted from a journal of a full segment and a second begun (Pai
        # Gow at six seats, the largest rounds): the boot reads neither. Two segments, not
        # the budget's eight: each one costs CI ~25 s of copying and checking on the
        # emulator, and the lazy open is the same for one sealed segment as for seven.
        (self.base / "long-journal").mkdir()
        # On the pitboss image a segment of the raw region is 32 KB (8 sectors): three of
        # them hold what two segment files did, written into the flash file on the host.
        fig["full_journal"] = pico_survive.full_journal(
            self.base / "long-journal", segments=full_journal_segments(),
            log=lambda m: None, reuse=base)
        # The stock image still runs a table (issue 27): its boot after six-seat Pai Gow
        # rounds, whose settlements the replay reads into a fragmented heap.
        fig["stock_pai_gow"] = pico_survive.stock_boot_after_pai_gow(
            self.base / "stock-pai-gow", log=lambda m: None)
        # The figures, kept where a run's reader finds them (the tests print nothing
        # that passes): build/pico-survive.json.
        import json
        out = Path(__file__).resolve().parents[2] / "build" / "pico-survive.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(fig, default=str, indent=1))
        return fig

