"""Issue 11 on the emulated Pico (stock MicroPython 1.27, 246 KB heap), in production mode:
the boot budget, the heap, junk on the serial line, and a watchdog recovery.

One Pico: flashed and provisioned in service mode (GP22 held low), then powered up with
the switch released, so its main loop owns the USB serial port and everything below is a
protocol line (host_tools.link.protolink) or shoe bytes on UART1 (the control socket). Every
round is checked against the same firmware on CPython (host_tools.table.targets.LocalTarget).
Figures are emulated chip time at 125 MHz (`mem`'s up_ms: time.ticks_ms() on the chip).
"""
import json
import os
import random
import shutil
import time

from host_tools.deploy import flash as flashing
from host_tools.emu import vboard
from host_tools.emu import vboard_state
from host_tools.table.auth import KeyStore
from host_tools.link.boardlink import Board
from host_tools.emu.pico import control_for
from host_tools.link.protolink import LinkError, ProtocolLink
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round, stand_in_paytables
from host_tools.table.targets import LocalTarget, PicoTarget

BOARD_ID = "pico"
GAME, SEATS = "nj-3card", 3
DEAL_S = 120  # wall seconds for the next card's reply (a card lost is a tilt, no reply)
REPLY_S = 900  # wall seconds for a reply from the emulated chip (a cold boot, a 1 MB line)
# Slow lines sent at once, past the firmware's WDT_MS (8 s): BURST pairs of a `verify`
# (the seeded hash of every file and of the program flash, ~0.62 s of chip time on the
# pitboss image) and a `mem` (its up_ms shows the chip was not reset between them): ~10.6
# s, 704 bytes, all taken in one pass (under pitboss.loop._DRAIN_MAX). `mem` alone was the
# slow line until its largest-block figure came from C (0.9 s -> 30 ms, 2026-12-06).
BURST = 16
BURST_LINE = b"verify 00112233445566778899aabbccddeeff\nmem\n"
BURST_REPLY_S = 120  # a chip reset mid-burst never answers: fail in minutes, not REPLY_S


def twin_region():
    """The CPython twin's journal region, callable(root, fs): sector files shaped as the
    Pico's own region, so its sectors are the Pico's, one for one (full_journal()). On
    the pitboss image that is the raw region's sector count (pitboss_layout), on the
    stock image boards/pico.py's sector files."""
    import boards
    from tests.support.pico_tier import image_is_pitboss

    if not image_is_pitboss():
        from pitboss.hw import board as drivers

        hw = boards.load("pico")
        return lambda root, fs: drivers.journal_region(hw, root, fs)
    from host_tools.deploy.romfs_deploy import layout
    from pitboss.store.region import FileRegion

    sectors = layout()["JOURNAL_BYTES"] // 4096
    return lambda root, fs: FileRegion(root + "/journal/region", sectors, fs)


def raw_region_into(flash_bin, region_dir):
    """Write the twin's region (its sector files) into the pitboss image's raw journal
    region of a stopped emulated Pico's flash file, as the chip would hold it: a missing
    sector file or the part past its end is erased flash (0xFF)."""
    from host_tools.deploy.romfs_deploy import layout

    L = layout()
    at = L["CODE_BYTES"] + L["ROMFS_BYTES"] + L["JOURNAL_START"]
    raw = bytearray(b"\xff" * L["JOURNAL_BYTES"])
    for i in range(L["JOURNAL_BYTES"] // 4096):
        f = os.path.join(region_dir, "%04d.sec" % i)
        if os.path.exists(f):
            with open(f, "rb") as fh:
                data = fh.read()
            raw[i * 4096:i * 4096 + len(data)] = data
    with open(flash_bin, "r+b") as fh:
        fh.seek(at)
        fh.write(raw)


class Session:
    """A production Pico and its CPython twin, fed the same authenticated lines."""

    def __init__(self, base, uf2=None):
        self.base = base
        self.uf2 = uf2  # the image (vboard.start's uf2: default $PITBOSS_PICO_UF2)
        self.keys = KeyStore(str(base / "keys"))
        self.state = base / "state"
        self.link = None
        # The twin journals as the Pico does (its journal region, twin_region()): its
        # storage is what full_journal() copies onto the Pico.
        self.local = LocalTarget(durable=False, region=twin_region())
        self.min_free = None

    # ---- power ----------------------------------------------------------------------
    def flash_and_provision(self, flashed=None):
        """flashed: a copy of a flash freshly written by `pitboss flash` (the Pico tier's
        first board): used instead of flashing again, ~60 s of CI's emulator."""
        if flashed is not None:
            shutil.copytree(flashed, self.base / "flash")
        st = vboard.start(self.base / "flash", state_dir=self.state, kind="pico",
                          parent_pid=os.getpid(), uf2=self.uf2)  # service: GP22 held low
        try:
            if flashed is None:
                flashing.flash(st["port"], progress=None)
            b = Board(st["port"])
            try:
                Configurator(PicoTarget(b), BOARD_ID, self.keys).provision()
            finally:
                b.close()
        finally:
            vboard_state.stop(self.state)
        self.local.provision(self.keys.load_key(BOARD_ID))

    def power_up(self):
        """Production (GP22 released): returns the first `mem` reply, sent as soon as
        the port exists, so its up_ms is reset -> first protocol line answered."""
        self.power_up_raw()
        return self.mem()

    def power_up_raw(self):
        """power_up() without asserting its `mem` reply: a table that could not start
        answers every line with boot_failed, and the caller looks at it."""
        st = vboard.start(self.base / "flash", state_dir=self.state, kind="pico",
                          parent_pid=os.getpid(), service=False, uf2=self.uf2)
        self.port = st["port"]
        self.ctl = control_for(self.port)
        self.link = ProtocolLink(self.port)

    def power_off(self):
        if self.link is not None:
            self.link.close()
            self.link = None
        vboard_state.stop(self.state)

    # ---- lines ----------------------------------------------------------------------
    def request(self, line, timeout=REPLY_S):
        return self.link.request(line, timeout=timeout)

    def mem(self):
        m = self.request("mem")
        assert m.get("ok"), m
        if self.min_free is None or m["min_free"] < self.min_free:
            self.min_free = m["min_free"]
        return m

    def both(self, line):
        """A line to the Pico and to the CPython twin: (pico reply, local reply)."""
        return self.request(line), self.local.commands([line])[0]

    def configure(self, game, seats):
        # Production refuses a placeholder paytable (issue 30): the games whose default
        # tables are unverified are configured with tables of their own, as a casino
        # must (the same lines: the settlement the figures were taken with).
        cfg = {"game": game, "seats": seats}
        own = stand_in_paytables(game)
        if own:
            cfg["paytables"] = own
        line = self.keys.sign(BOARD_ID, "config " + json.dumps(cfg, separators=(",", ":")))
        return self.both(line)

    def until(self, pred, timeout=REPLY_S):
        """Replies up to and including the first one pred() accepts."""
        out = []
        while True:
            r = self.link.reply(timeout)
            out.append(r)
            if pred(r):
                return out

    # ---- rounds through UART1 -------------------------------------------------------
    def start_round(self, seed, game=GAME, seats=SEATS):
        before, frames, after = plan = plan_round(game, seats, seed)
        for ln in before:
            r = self.request(ln)
            assert r.get("ok"), (ln, r)
        return plan, len(r["order"])

    def deal(self, frames, cards, per=None):
        """Shoe bytes onto UART1; the main loop deals each card unasked: `cards` replies.
        per: frames put on the wire at a time, each batch's replies awaited before the next
        (a dealer's pace; None: all at once, back to back at 9600 baud)."""
        per = per or cards
        flen = len(frames) // cards
        got = []
        try:
            for i in range(0, cards, per):
                n = min(per, cards - i)
                # The emulator's acknowledging shoe: streamed frames lose bytes to
                # flash writes (the flash takes the chip's time).
                self.ctl("shoe", id=1, hex=bytes(frames[i * flen:(i + n) * flen]).hex(),
                         wait=False)
                # the loop's unasked lines ("src": "shoe"), not replies to a command
                got += self.link.wait_events(n, timeout=DEAL_S + 10 * n)
        except LinkError:
            raise AssertionError("%d of %d cards answered; then %r, tilts %r, UART1 %r" % (
                len(got), cards, got[-1:], self.request("tilt"), self.ctl("shoe_state", id=1)))
        assert all(r.get("ok") for r in got), got
        return got

    def play_round(self, seed, game, seats):
        """A whole round: its lines, its cards through UART1 PER at a time, its decisions
        and settlement, which must be exactly the CPython twin's; returns the settle
        reply."""
        plan, cards = self.start_round(seed=seed, game=game, seats=seats)
        self.deal(plan[1], cards, per=PER)
        got, want = self.finish(plan)
        assert got.get("ok") and got == want, (game, seed, got, want)
        return got

    def finish(self, plan):
        """The decisions and the settlement; returns (pico settle, CPython settle) for the
        whole plan played on the twin."""
        for ln in plan[2][:-1]:
            r = self.request(ln)
            assert r.get("ok"), (ln, r)
        pico = self.request(plan[2][-1])
        return pico, self.local.round(*plan)[-1]


def junk(seed):
    """What a noisy serial line can carry, each refused whole: random bytes (newlines
    among them), invalid UTF-8, NULs, a line longer than the Pico's whole heap (256 KB
    against 246,016 bytes: it cannot have been buffered; 1 MB took 3 more minutes of the
    CI's wall time for nothing more), and lines arriving in pieces."""
    rnd = random.Random(seed)
    noise = bytes(rnd.randrange(256) for _ in range(4096))
    return [noise + b"\n", b"\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x90\x28\xbc\n",
            b"status\x00\n", b"\x00" * 300 + b"\n", b"status " + b"A" * (1 << 18) + b"\n",
            b"\xff" * 2000 + b"\r\n"]


def run(base, log=print, flashed=None):
    """The whole issue-11 run; returns the figures (tests/pico/test_pico_survive.py asserts).
    flashed: see Session.flash_and_provision."""
    s = Session(base)
    fig = {}
    t0 = time.monotonic()
    s.flash_and_provision(flashed)
    try:
        boot = s.power_up()
        fig["boot_unconfigured"] = boot
        log("boot (unconfigured): %r" % boot)
        pico, local = s.configure(GAME, SEATS)
        assert pico.get("ok") and local.get("ok"), (pico, local)
        s.power_off()
        boot = s.power_up()  # the configured table: config replayed from the journal
        fig["boot_configured"] = boot
        log("boot (%s configured): %r" % (GAME, boot))

        # Junk, then a round that must settle exactly as on CPython.
        t1 = time.monotonic()
        c1 = s.ctl.cycles()["ns"]
        for chunk in junk(11):
            s.link.write(chunk)
        s.link.write(b"sta")  # a line in pieces: the loop waits for its end
        time.sleep(1.0)
        s.link.write(b"tu")
        time.sleep(1.0)
        s.link.write(b"s\nversion\n")
        replies = s.until(lambda r: "version" in r)
        fig["junk_replies"] = [r.get("error", {}).get("code") or
                               ("status" if "phase" in r else "ok") for r in replies]
        fig["junk_wall_s"] = time.monotonic() - t1
        fig["junk_chip_s"] = (s.ctl.cycles()["ns"] - c1) / 1e9  # includes 2 s of pauses
        fig["junk_bytes"] = sum(len(c) for c in junk(11))
        log("junk: %d bytes, %.1f s chip, %.0f s wall" % (
            fig["junk_bytes"], fig["junk_chip_s"], fig["junk_wall_s"]))
        plan, cards = s.start_round(seed=101)
        s.deal(plan[1], cards)
        fig["after_junk"] = s.finish(plan)
        fig["mem_after_junk"] = s.mem()

        # A burst of slow lines, all taken in one pass of the loop: BURST `verify` and
        # `mem` pairs outlast the watchdog's period unless the loop feeds it after every
        # line (it did once per pass: the chip was reset mid-burst and the replies lost).
        c2 = s.ctl.cycles()["ns"]
        s.link.write(BURST_LINE * BURST)
        replies = [s.link.reply(BURST_REPLY_S) for _ in range(2 * BURST)]
        fig["burst_chip_s"] = (s.ctl.cycles()["ns"] - c2) / 1e9
        fig["burst_verify"] = replies[0::2]
        fig["burst"] = replies[1::2]  # the `mem` replies
        s.min_free = min([s.min_free] + [r["min_free"] for r in fig["burst"]])
        log("burst: %d verify and mem lines in %.1f s chip" % (2 * BURST,
                                                               fig["burst_chip_s"]))

        # A blocked loop: half a round dealt, the chip hangs, the watchdog resets it, the
        # boot replays the round from the journal and the rest of it is dealt.
        plan, cards = s.start_round(seed=202)
        flen = len(plan[1]) // cards
        half = cards // 2
        s.deal(plan[1][:half * flen], half)
        node = vboard_state.status(s.state)["node_pid"]
        hung = s.ctl("hang")
        t2 = time.monotonic()
        while vboard_state.status(s.state).get("node_pid") in (node, None):  # USB re-enumerates
            assert time.monotonic() - t2 < REPLY_S, "no watchdog reset"
            time.sleep(0.2)
        s.ctl = control_for(s.port)
        fig["after_reset"] = s.mem()  # answered by the rebooted chip
        fig["wdt_wall_s"] = time.monotonic() - t2
        fig["wdt_state"] = vboard_state.status(s.state)
        fig["hung_at_ns"] = hung["ns"]
        fig["status_after_reset"] = s.request("status")
        s.deal(plan[1][half * flen:], cards - half)
        fig["after_wdt"] = s.finish(plan)
        # Every game in turn on the same running loop (issue 11's heap: each game change
        # releases the last one's modules and tables), one round each at CI_SEATS.
        fig["every_game"], _ = play_games(s, CI_ROUNDS, CI_SEATS,
                                          base / "export", log, t0)
        fig["recall"] = s.request("recall 5")
        fig["meters"] = s.request("meters")
        fig["mem_end"] = s.mem()
        fig["tilts"] = s.request("tilt")["active"]
        # A power cycle after rounds of every game, Pai Gow's and three-card's among them:
        # the boot replays the journal (docs/journal.md) on the chip's heap, in production.
        s.power_off()
        fig["boot_after_session"] = s.power_up()
        fig["status_after_session"] = s.request("status")
        fig["min_free"] = s.min_free
        fig["wall_s"] = time.monotonic() - t0
        log("watchdog: reset and back in %.0f s wall; %r" % (fig["wdt_wall_s"],
                                                            fig["after_reset"]))
        return fig
    finally:
        s.power_off()


# The full session (issue 11's budget): every game in turn on one powered-up Pico.
SESSION_SEATS = {"pr-pai-gow": 6, "pr-pai-gow-a5-low": 6, "pa-three-card-prime": 7,
                 "qc-caribbean": 7, "nj-5card": 7, "nj-3card": 7}
# Frames on the wire at a time: a hand's worth (a shoe deals at a dealer's pace). 49 Pai
# Gow frames back to back (588 bytes in 0.6 s) can overrun the UART's 32-byte FIFO while
# the loop journals each card: the shoe-link protocol's business (issue 11), not the heap's.
PER = 7
EXPORT_EVERY = 40  # rounds between exports: the journal holds ~100 Pai Gow rounds
CI_ROUNDS = 1  # run() (the test): rounds of every game in its session, at CI_SEATS:
# the Pico tier's only rounds of every game (tests/support/pico_tier.py), so the seat counts vary
# (a full Pai Gow A-5 table, four Pai Gow seats, three at the others).
CI_SEATS = {"pr-pai-gow": 4, "pr-pai-gow-a5-low": 6, "pa-three-card-prime": 3,
            "qc-caribbean": 3, "nj-5card": 3, "nj-3card": 3}
# The protocol lines of the session (each batch of 100 ends with a `mem`).
LINES = ("status", "meters", "recall 1", "tilt", "version", "deck", "bogus")


class _LinkTarget:
    """host_tools.table.export's target over the protocol line (what a pit's host does)."""

    def __init__(self, session):
        self.s = session

    def commands(self, lines):
        return [self.s.request(ln) for ln in lines]


def _export(s, folder):
    """Export the Pico's journal and acknowledge it (a signed line); the twin's journal is
    acknowledged to the same seq directly (it is only the reference)."""
    from host_tools.table.export import export

    r = export(_LinkTarget(s), s.keys, BOARD_ID, str(folder))
    ctl = s.local.app.ctl
    ctl.journal.acknowledge(min(r["acked"], ctl.export_limit()))
    return r


def play_games(s, rounds, seats_of, export_dir, log, t0):
    """Every game configured in turn on the running loop, `rounds` rounds each dealt
    through UART1 and settled exactly as on the CPython twin, the journal exported every
    EXPORT_EVERY rounds; -> ({game: {seats, mem after its rounds, chip_s, wall_s}},
    exports)."""
    from pitboss import games

    out, exports, played = {}, 0, 0
    for game in [g for g in games.ids() if g in seats_of]:
        seats = seats_of[game]
        tg, cg = time.monotonic(), s.ctl.cycles()["ns"]
        pico, local = s.configure(game, seats)
        assert pico.get("ok") and local.get("ok"), (game, pico, local, s.request("tilt"))
        for i in range(rounds):
            if i % 20 == 0:
                # A long run's figures as it goes (a run stopped early still has them):
                # the lowest free heap so far and the largest block now.
                m = s.mem() if i else {}
                log("  %s round %d: %.0f s wall, %.0f s chip; min_free %s, max_block %s" % (
                    game, i + 1, time.monotonic() - t0, s.ctl.cycles()["ns"] / 1e9,
                    s.min_free, m.get("max_block")))
            s.play_round(7000 + i, game, seats)
            played += 1  # counted over the session: with fewer rounds a game than
            if played % EXPORT_EVERY == 0:  # EXPORT_EVERY, the journal still gets exported
                _export(s, export_dir)
                exports += 1
        m = s.mem()
        out[game] = {"seats": seats, "mem": m, "chip_s": (s.ctl.cycles()["ns"] - cg) / 1e9,
                     "wall_s": time.monotonic() - tg}
        log("%s: %d rounds, %d seats, %.1f s chip, %.0f s wall, %r" % (
            game, rounds, seats, out[game]["chip_s"], out[game]["wall_s"], m))
    return out, exports


def session(base, rounds=200, lines=10000, rfid=True, log=print, seats=None, flashed=None,
            games=None, uf2=None):
    """Boot, then every game configured in turn with `rounds` rounds dealt through UART1
    (each settlement compared with CPython), the journal exported and acknowledged every
    EXPORT_EVERY rounds, `recall 50`, `meters`, a deck registered through the emulated
    MFRC522 and one round dealt by tag, `lines` protocol lines: the figures (lowest free
    heap, largest free block, session length in chip time and wall time). seats: every
    game at that many seats (default SESSION_SEATS); flashed: as flash_and_provision's;
    games: only these games (default every one), e.g. the budget's 200 rounds of the
    game with the largest live heap alone, when every game's would outlast the machine;
    uf2: the image (default $PITBOSS_PICO_UF2). The figures also hold every dealt card's
    time from its frame's last byte on UART1 to its acknowledgement (card_ms: the
    emulated shoe's, chip time) and the flash chip's erases (wear)."""
    s = Session(base, uf2=uf2)
    seats_of = SESSION_SEATS if seats is None else dict.fromkeys(SESSION_SEATS, seats)
    if games is not None:
        unknown = set(games) - set(seats_of)
        assert not unknown, "unknown games: %s" % sorted(unknown)
        seats_of = {g: n for g, n in seats_of.items() if g in games}
    fig = {"rounds": rounds, "lines": lines, "seats": seats_of, "games": {}}
    s.flash_and_provision(flashed)
    t0 = time.monotonic()
    try:
        fig["boot"] = boot = s.power_up()
        c0 = s.ctl.cycles()["ns"]
        log("boot: %r" % boot)
        max_blocks = [boot["max_block"]]
        fig["games"], exports = play_games(s, rounds, seats_of, base / "export", log,
                                           t0)
        max_blocks += [g["mem"]["max_block"] for g in fig["games"].values()]
        _export(s, base / "export")
        fig["exports"] = exports + 1
        rec = s.request("recall 50")
        assert rec.get("ok") and len(rec["rounds"]) == min(50, rounds * len(seats_of)), \
            str(rec)[:300]
        fig["recall_50"] = len(rec["rounds"])
        met = s.request("meters")
        assert met.get("ok") and met["totals"]["rounds"] == rounds * len(seats_of), met
        fig["meters_rounds"] = met["totals"]["rounds"]
        fig["mem_after_recall"] = s.mem()
        max_blocks.append(fig["mem_after_recall"]["max_block"])
        if rfid:
            fig["rfid"] = _deck_by_rfid(s)
            fig["mem_after_rfid"] = s.mem()
            max_blocks.append(fig["mem_after_rfid"]["max_block"])
            log("deck registered through the MFRC522, one round dealt by tag: %r"
                % fig["mem_after_rfid"])
        tl, cl = time.monotonic(), s.ctl.cycles()["ns"]
        bad = 0
        for i in range(0, lines, 100):  # pipelined: 100 lines out, then their replies
            batch = [LINES[(i + j) % len(LINES)] for j in range(min(100, lines - i) - 1)]
            batch.append("mem")
            if i % 2000 == 0:
                log("  lines %d: %.0f s wall" % (i, time.monotonic() - t0))
            s.link.write("".join(ln + "\n" for ln in batch).encode())
            for ln in batch:
                r = s.link.reply(REPLY_S)
                if ln == "mem":
                    s.min_free = min(s.min_free, r["min_free"])
                bad += (not r.get("ok")) != (ln == "bogus")
        fig["lines_bad"] = bad
        fig["lines_chip_s"] = (s.ctl.cycles()["ns"] - cl) / 1e9
        fig["lines_wall_s"] = time.monotonic() - tl
        fig["mem_end"] = m = s.mem()
        max_blocks.append(m["max_block"])
        fig["status_end"] = s.request("status")
        fig["tilts"] = s.request("tilt")["active"]
        fig["card_ms"] = card_figures(s.ctl("shoe_state", id=1)["latency_ns"])
        fl = s.ctl("flash")
        fig["flash"] = {"sectors_erased": fl["sectors_erased"],
                        "pages_programmed": fl["pages_programmed"]}
        # The session's chip time, power-on to here (the emulator that follows is a new
        # chip whose clock starts at 0).
        fig["chip_s"] = (s.ctl.cycles()["ns"] - c0) / 1e9
        # A power cycle after rounds of every game, Pai Gow's and three-card's among them:
        # the boot replays the journal (docs/journal.md) on the chip's heap, in production.
        s.power_off()
        fig["boot_after_session"] = s.power_up()
        fig["status_after_session"] = s.request("status")
        fig["min_free"] = s.min_free
        fig["min_max_block"] = min(max_blocks + [fig["boot_after_session"]["max_block"]])
        fig["wall_s"] = time.monotonic() - t0
        log("%d lines (%d unexpected) in %.1f s chip, %.0f s wall; end %r" % (
            lines, bad, fig["lines_chip_s"], fig["lines_wall_s"], m))
        log("session: min_free %d, smallest largest-block %d, %.1f s chip, %.0f s wall, "
            "tilts %r; cards %r" % (fig["min_free"], fig["min_max_block"], fig["chip_s"],
                                    fig["wall_s"], fig["tilts"], fig["card_ms"]))
        return fig
    finally:
        s.power_off()


def card_figures(latency_ns):
    """{n, p50, p99, max} in ms of a shoe's card latencies (ns), as `pitboss bench`
    computes its own (host_tools.bench.image.percentile)."""
    from host_tools.bench.image import percentile

    lat = [x / 1e6 for x in latency_ns]
    if not lat:
        return {"n": 0}
    return {"n": len(lat), "p50": percentile(lat, 50), "p99": percentile(lat, 99),
            "max": max(lat)}


def _deck_by_rfid(s):
    """deck-register (signed) on the running loop, the 52 tags presented in order on the
    emulated MFRC522 (the loop answers each unasked), then one round dealt by tag and
    settled as the CPython twin settles it from the serial shoe's frames."""
    from host_tools.emu.shoe_sim import shuffled_deck
    from pitboss.store.deckmap import new_deck_order
    from tests.support.rfid_deck import uid_for

    game, seats, seed = "nj-3card", 3, 4242
    order = new_deck_order(52)
    s.ctl("rfid", deck=[{"uid": uid_for(c).hex()} for c in order], replace=True)
    start = s.request(s.keys.sign(BOARD_ID, "deck-register"))
    assert start.get("registering"), start
    reg = s.link.wait_events(52, timeout=REPLY_S)  # unasked lines, as the shoe's
    assert all(r.get("ok") for r in reg) and reg[-1].get("deck") == 1, reg[-3:]
    pico, local = s.configure(game, seats)
    assert pico.get("ok") and local.get("ok"), (pico, local)
    before, frames, after = plan = plan_round(game, seats, seed)
    for ln in before:
        r = s.request(ln)
        assert r.get("ok"), (ln, r)
    n = len(r["order"])
    s.ctl("rfid", deck=[{"uid": uid_for(c).hex()} for c in shuffled_deck(seed)[:n]])
    dealt = s.link.wait_events(n, timeout=REPLY_S)
    assert all(r.get("ok") for r in dealt), dealt
    for ln in after[:-1]:
        assert s.request(ln).get("ok")
    got, want = s.request(after[-1]), s.local.round(*plan)[-1]
    assert got.get("ok") and got == want, (got, want)
    return {"registered": len(reg), "dealt": n}


def stock_boot_after_pai_gow(base, rounds=2, log=print):
    """The stock image (code in the heap, the journal on its file-backed region) in
    production: `rounds` six-seat Pai Gow rounds dealt through UART1 and settled as on
    CPython, then a power cycle: the boot replays them (their settlements are ~2.3 KB
    records, read while the replay fragments the heap: a boot that found no block for
    one failed, 2026-12-06). Returns the boot's `mem` reply and `status`."""
    s = Session(base, uf2="stock")
    s.flash_and_provision()
    try:
        s.power_up()
        pico, local = s.configure("pr-pai-gow", 6)
        assert pico.get("ok") and local.get("ok"), (pico, local)
        for i in range(rounds):
            s.play_round(27 + i, "pr-pai-gow", 6)
        s.power_off()
        s.power_up_raw()
        out = {"boot": s.request("mem")}
        out["status"] = s.request("status")
        log("stock boot after %d Pai Gow rounds: %r" % (rounds, out["boot"]))
        return out
    finally:
        s.power_off()


def boot_per_game(base, log=print):
    """For the figures (docs/bench.md), not the test: each game configured in turn, the
    Pico powered off and on, and its first `mem` reply: {game: reply}."""
    from pitboss import games

    s = Session(base)
    s.flash_and_provision()
    out = {}
    try:
        out["(unconfigured)"] = s.power_up()
        log("(unconfigured) %r" % out["(unconfigured)"])
        for game in games.ids():
            pico, _ = s.configure(game, 3)
            assert pico.get("ok"), pico
            s.power_off()
            out[game] = s.power_up()
            log("%s %r" % (game, out[game]))
        return out
    finally:
        s.power_off()


def full_journal(base, segments=7, game="pr-pai-gow", seats=6, log=print, reuse=None,
                 uf2=None):
    """Issue 11's boot with the journal near its budget (the board's journal region):
    the CPython twin plays `game` until its journal holds `segments` segments, its
    storage (journal, meters, tilts, auth counter) is copied onto the Pico, and the Pico
    boots from it in production. Returns the boot's `mem` reply (its steps in chip ms,
    and the bytes left unchecked), the chip time the main loop's idle passes took to
    check the rest, a round dealt through UART1 while they did (settled as on CPython),
    and `recall 50`. reuse: the base of a Pico already flashed and provisioned (the
    survive run's): its flash and keys are copied instead of flashing again. uf2: the
    image (vboard.start's: default $PITBOSS_PICO_UF2), the same as the reused board's."""

    from host_tools.table.rounds import play_rounds

    if reuse is not None:
        shutil.copytree(reuse / "flash", base / "flash")
        shutil.copytree(reuse / "keys", base / "keys")
    s = Session(base, uf2=uf2)
    if reuse is None:
        s.flash_and_provision()
    else:
        s.local.provision(s.keys.load_key(BOARD_ID))
    local = s.local
    line = s.keys.sign(BOARD_ID, 'config {"game":"%s","seats":%d}' % (game, seats))
    assert local.commands([line])[0].get("ok")
    n = 0
    while len(local.app.ctl.journal.segments) < segments:
        for _ in play_rounds(local, game, seats, 1, 9000 + n):
            n += 1
    fig = {"game": game, "seats": seats, "rounds_on_cpython": n,
           "segments": local.app.ctl.journal.segments}
    root = local.root
    files = []
    region_dir = os.path.join(root, "journal", "region")
    from tests.support.pico_tier import image_is_pitboss
    raw = image_is_pitboss()  # the region goes into the raw region, not onto littlefs
    for top, _, names in os.walk(root):
        if raw and os.path.abspath(top) == os.path.abspath(region_dir):
            continue
        files += [os.path.join(top, nm) for nm in names]
    t_copy = time.monotonic()
    fig["bytes_copied"] = sum(os.path.getsize(f) for f in files)
    log("twin: %d rounds, %d segments, %d bytes to copy"
        % (n, len(fig["segments"]), fig["bytes_copied"]))
    st = vboard.start(base / "flash", state_dir=s.state, kind="pico",
                      parent_pid=os.getpid(), uf2=uf2)  # service mode, to copy the files
    try:
        b = Board(st["port"])
        try:
            # The Pico's own journal and state (a reused board's) give way to the twin's.
            # (The journal region's sector files first: a sector left behind would be
            # read as part of the twin's journal. A deck map left by a reused board,
            # the budget session's, would make its RFID reader the table's shoe.)
            b.exec("import os\nfor d in ('/journal/region', '/journal', '/state'):\n try:\n"
                   "  for n in os.listdir(d):\n   try:\n    os.remove(d + '/' + n)\n"
                   "   except OSError:\n    pass\n except OSError:\n  pass\n"
                   "try:\n os.remove('/deckmap.txt')\nexcept OSError:\n pass")
            for f in sorted(files):
                rel = "/" + os.path.relpath(f, root).replace(os.sep, "/")
                parts = rel.split("/")[1:-1]
                for i in range(len(parts)):
                    d = "/" + "/".join(parts[:i + 1])
                    b.exec("import os\ntry:\n os.mkdir(%r)\nexcept OSError:\n pass" % d)
                with open(f, "rb") as fh:
                    b.write_file(rel, fh.read())
        finally:
            b.close()
    finally:
        vboard_state.stop(s.state)
    if raw:
        raw_region_into(base / "flash" / "flash.bin", region_dir)
    fig["copy_wall_s"] = time.monotonic() - t_copy
    t0 = time.monotonic()
    try:
        fig["boot"] = boot = s.power_up()
        log("boot: %r" % boot)
        assert boot["unchecked"] > 0, boot
        st0 = s.request("status")
        assert st0.get("ok") and not st0["tilts"], st0
        # A round dealt while the idle passes check the journal: as on CPython.
        s.play_round(99, game, seats)
        during = s.mem()
        fig["unchecked_after_round"] = during["unchecked"]
        while True:
            m = s.mem()
            if not m["unchecked"]:
                break
            time.sleep(2)
        fig["checked_at_up_ms"] = m["up_ms"]
        fig["check_ms"] = m["up_ms"] - boot["up_ms"]  # includes the round and the mems
        fig["mem_checked"] = m
        st1 = s.request("status")
        assert st1.get("ok") and not st1["tilts"], st1
        rec = s.request("recall 50")
        want_n = min(50, n + 1)  # the twin's rounds and the one dealt here
        assert rec.get("ok") and len(rec["rounds"]) == want_n, str(rec)[:300]
        want = local.commands(["recall 50"])[0]["rounds"]
        assert [(r["round"], r["result"]) for r in rec["rounds"]] == \
            [(r["round"], r["result"]) for r in want], "recall differs from CPython's"
        fig["recall_50"] = want_n
        fig["min_free"] = s.min_free
        fig["wall_s"] = time.monotonic() - t0
        log("checked: %r" % m)
        return fig
    finally:
        s.power_off()


if __name__ == "__main__":
    import argparse
    import json
    import tempfile
    from pathlib import Path

    ap = argparse.ArgumentParser(prog="python -m tests.support.pico_survive")
    ap.add_argument("--boot-per-game", action="store_true",
                    help="each game configured in turn, power-cycled: its first `mem`")
    ap.add_argument("--session", action="store_true",
                    help="the whole budget: ROUNDS rounds of every game in one session, "
                         "recall 50, meters, a deck registration, LINES protocol lines")
    ap.add_argument("--full-journal", type=int, metavar="SEGMENTS", default=0,
                    help="boot from a journal of SEGMENTS x 64 KB (issue 11's boot "
                    "budget at a nearly full journal)")
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--lines", type=int, default=10000)
    ap.add_argument("--seats", type=int, default=None,
                    help="--session: every game at SEATS seats (default: a full table of "
                         "each, SESSION_SEATS)")
    ap.add_argument("--games", nargs="+", default=None, metavar="GAME",
                    help="--session: only these games (default: every one)")
    ap.add_argument("--flashed", type=Path, default=None, metavar="DIR",
                    help="start from a copy of this flash folder, written by `pitboss "
                         "flash` (skips flashing)")
    a = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="pitboss-pico-survive-"))
    if a.full_journal:
        out = full_journal(base, a.full_journal)
    elif a.session:
        t0 = time.monotonic()
        out = session(base, rounds=a.rounds, lines=a.lines, seats=a.seats,
                      flashed=a.flashed, games=a.games,
                      log=lambda m: print("%7.0f %s" % (time.monotonic() - t0, m),
                                          flush=True))
    else:
        out = boot_per_game(base) if a.boot_per_game else run(base)
    print(json.dumps(out, default=str))
