"""Issue 11 on the emulated Pico (stock MicroPython 1.27, 246 KB heap), in production mode:
the boot budget, the heap, junk on the serial line, and a watchdog recovery.

One Pico: flashed and provisioned in service mode (GP22 held low), then powered up with
the switch released, so its main loop owns the USB serial port and everything below is a
protocol line (host_tools.protolink) or shoe bytes on UART1 (the control socket). Every
round is checked against the same firmware on CPython (table_host.LocalTarget).
Figures are emulated chip time at 125 MHz (`mem`'s up_ms: time.ticks_ms() on the chip).
"""
import os
import random
import time

from host_tools import flash as flashing
from host_tools import vboard
from host_tools.auth import KeyStore
from host_tools.boardlink import Board
from host_tools.pico import control_for
from host_tools.protolink import ProtocolLink
from host_tools.table_host import Configurator, LocalTarget, PicoTarget, plan_round

BOARD_ID = "pico"
GAME, SEATS = "nj-3card", 3
REPLY_S = 900  # wall seconds for a reply from the emulated chip (a cold boot, a 1 MB line)


class Session:
    """A production Pico and its CPython twin, fed the same authenticated lines."""

    def __init__(self, base):
        self.base = base
        self.keys = KeyStore(str(base / "keys"))
        self.state = base / "state"
        self.link = None
        self.local = LocalTarget(durable=False)
        self.min_free = None

    # ---- power ----------------------------------------------------------------------
    def flash_and_provision(self):
        st = vboard.start(self.base / "flash", state_dir=self.state, kind="pico",
                          parent_pid=os.getpid())  # service: GP22 held low
        try:
            flashing.flash(st["port"], progress=None)
            b = Board(st["port"])
            try:
                Configurator(PicoTarget(b), BOARD_ID, self.keys).provision()
            finally:
                b.close()
        finally:
            vboard.stop(self.state)
        self.local.provision(self.keys.load_key(BOARD_ID))

    def power_up(self):
        """Production (GP22 released): returns the first `mem` reply, sent as soon as
        the port exists, so its up_ms is reset -> first protocol line answered."""
        st = vboard.start(self.base / "flash", state_dir=self.state, kind="pico",
                          parent_pid=os.getpid(), service=False)
        self.port = st["port"]
        self.ctl = control_for(self.port)
        self.link = ProtocolLink(self.port)
        return self.mem()

    def power_off(self):
        if self.link is not None:
            self.link.close()
            self.link = None
        vboard.stop(self.state)

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
        line = self.keys.sign(BOARD_ID, 'config {"game":"%s","seats":%d}' % (game, seats))
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
    def start_round(self, seed):
        before, frames, after = plan = plan_round(GAME, SEATS, seed)
        for ln in before:
            r = self.request(ln)
            assert r.get("ok"), (ln, r)
        return plan, len(r["order"])

    def deal(self, frames, cards):
        """Shoe bytes onto UART1; the main loop deals each card unasked: `cards` replies."""
        # The emulator's acknowledging shoe: streamed frames lose bytes to flash writes.
        self.ctl("shoe", id=1, hex=bytes(frames).hex(), wait=False)
        got = [self.link.reply(REPLY_S) for _ in range(cards)]
        assert all(r.get("ok") for r in got), got
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
    among them), invalid UTF-8, NULs, a 1 MB line, and lines arriving in pieces."""
    rnd = random.Random(seed)
    noise = bytes(rnd.randrange(256) for _ in range(4096))
    return [noise + b"\n", b"\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x90\x28\xbc\n",
            b"status\x00\n", b"\x00" * 300 + b"\n", b"status " + b"A" * (1 << 20) + b"\n",
            b"\xff" * 2000 + b"\r\n"]


def run(base, log=print):
    """The whole issue-11 run; returns the figures (tests/test_pico_survive.py asserts)."""
    s = Session(base)
    fig = {}
    t0 = time.monotonic()
    s.flash_and_provision()
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

        # A blocked loop: half a round dealt, the chip hangs, the watchdog resets it, the
        # boot replays the round from the journal and the rest of it is dealt.
        plan, cards = s.start_round(seed=202)
        flen = len(plan[1]) // cards
        half = cards // 2
        s.deal(plan[1][:half * flen], half)
        node = vboard.status(s.state)["node_pid"]
        hung = s.ctl("hang")
        t2 = time.monotonic()
        while vboard.status(s.state).get("node_pid") in (node, None):  # USB re-enumerates
            assert time.monotonic() - t2 < REPLY_S, "no watchdog reset"
            time.sleep(0.2)
        s.ctl = control_for(s.port)
        fig["after_reset"] = s.mem()  # answered by the rebooted chip
        fig["wdt_wall_s"] = time.monotonic() - t2
        fig["wdt_state"] = vboard.status(s.state)
        fig["hung_at_ns"] = hung["ns"]
        fig["status_after_reset"] = s.request("status")
        s.deal(plan[1][half * flen:], cards - half)
        fig["after_wdt"] = s.finish(plan)
        fig["recall"] = s.request("recall 5")
        fig["meters"] = s.request("meters")
        fig["mem_end"] = s.mem()
        fig["min_free"] = s.min_free
        fig["wall_s"] = time.monotonic() - t0
        log("watchdog: reset and back in %.0f s wall; %r" % (fig["wdt_wall_s"],
                                                            fig["after_reset"]))
        return fig
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


if __name__ == "__main__":
    import json
    import sys
    import tempfile
    from pathlib import Path

    base = Path(tempfile.mkdtemp(prefix="pitboss-pico-survive-"))
    fn = boot_per_game if sys.argv[1:] == ["--boot-per-game"] else run
    print(json.dumps(fn(base), default=str))
