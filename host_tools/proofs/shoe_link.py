"""No shoe byte lost to a flash write: the acknowledged shoe link under a UART that drops
bytes while the controller writes flash, in simulated time (docs/shoe-protocol.md).

On the RP2040 a flash erase or program runs with interrupts off (an erase 45 ms typically,
up to 400 ms), so nothing empties the UART's 32-byte receive FIFO meanwhile: at 9600 baud
it is full after 33 ms and every further byte is lost. Every card is journalled, so a
shoe that streams frames loses some. `StallLine` models exactly that (FIFO, the IRQ-fed
ring buffer MicroPython's machine.UART reads from, and windows with interrupts off);
`StallFS` turns every flash commit the controller makes (an fsync, rename or remove) into
such a window. The firmware (pitboss.app.App with its real SerialShoe and journal) plays
seeded rounds; the host's AckingShoe deals them, one frame at a time, resending each until
it is acknowledged.

    python -m host_tools.proofs.shoe_link --cards 10000            # the acknowledged link
    python -m host_tools.proofs.shoe_link --cards 2000 --no-ack    # a streaming shoe, for contrast

Prints one JSON object: cards dealt and settled, bytes the UART dropped, retransmissions,
cards lost and doubled (both 0 with acknowledgements), simulated and wall time.
"""
import argparse
import json
import sys
import tempfile
import time
import types
from collections import deque

from host_tools.emu.shoe_sim import dealt_check, decode_acks, frame_list, shuffled_deck

BAUD = 9600
BYTE_S = 10.0 / BAUD  # start + 8 data + stop bits
FIFO = 32  # the RP2040 UART's receive FIFO
RING = 256  # MicroPython's rxbuf (boards/pico.py SHOE_RXBUF)
POLL_S = 0.01  # the main loop's pass (pitboss.loop.serve polls every 10 ms)
ERASE_S = 0.045  # a sector erase, typical (RP2040 datasheet / W25Q16JV: 45 ms, max 400)


class StallLine:
    """A shoe UART in simulated time, seen from both ends, with the shoe on it.

    The shoe's bytes arrive one BYTE_S apart; with interrupts on they go straight to the
    ring buffer the firmware reads (machine.UART's any()/readinto()); during a stall
    (interrupts off: a flash erase) only FIFO of them are kept and the rest are lost, as
    on the chip. What the firmware writes reaches the shoe BYTE_S per byte later.

    The shoe runs on the line's clock, not the controller's, so its timer fires during a
    stall as a real shoe's does: with ack=True it sends one frame, resends it every
    `timeout` seconds until the acknowledgement arrives, then sends the next; with
    ack=False it streams frames back to back (an older shoe)."""

    def __init__(self, ack=True, timeout=0.1):
        self.t = 0.0
        self.ack = ack
        self.timeout = timeout
        self._wire = deque()  # (arrival time, byte) from the shoe
        self._free = 0.0  # when the shoe's line is idle again
        self._tx = deque()  # (arrival time at the shoe, byte) from the controller
        self._tx_free = 0.0
        self.ring = bytearray()
        self.dropped = 0  # bytes lost to a full FIFO while interrupts were off
        self.stalls = 0
        self.stalled_s = 0.0
        self.sends = 0  # frames put on the line, resends included
        self.frames = 0  # frames acknowledged
        self._queue = deque()  # frames still to deal
        self._cur = None  # the frame waiting for its acknowledgement, and its seq
        self._seq = -1
        self._deadline = None
        self._rx = b""

    # ---- the shoe ----
    def deal(self, frames):
        self._queue.extend(frames)
        if self._cur is None:
            self._next_frame(self.t)

    @property
    def idle(self):
        return self._cur is None and not self._queue and not self._wire

    def _send(self, data, at):
        start = max(at, self._free)
        for i, b in enumerate(data):
            self._wire.append((start + (i + 1) * BYTE_S, b))
        self._free = start + len(data) * BYTE_S
        self.sends += 1

    def _next_frame(self, at):
        if not self.ack:
            while self._queue:
                self._send(self._queue.popleft(), at)
            return
        if not self._queue:
            self._cur = self._deadline = None
            return
        self._cur = self._queue.popleft()
        self._seq = int(self._cur[3:7], 16)
        self._send(self._cur, at)
        self._deadline = max(at, self._free) + self.timeout

    def _heard(self, b, at):
        self._rx += bytes((b,))
        if b != 0x0A:
            return
        acked = self._seq in decode_acks(self._rx)
        self._rx = b""
        if acked and self._cur is not None:
            self.frames += 1
            self._next_frame(at)

    # ---- time ----
    def _run(self, end, irq):
        kept = 0
        w, tx = self._wire, self._tx
        while True:
            tw = w[0][0] if w else None
            tt = tx[0][0] if tx else None
            td = self._deadline if self._cur is not None else None
            t = min(x for x in (tw, tt, td, end + 1) if x is not None)
            if t > end:
                break
            if t == tw:
                b = w.popleft()[1]
                if (irq or kept < FIFO) and len(self.ring) < RING:
                    self.ring.append(b)
                    kept += 0 if irq else 1
                else:
                    self.dropped += 1
            elif t == tt:
                self._heard(tx.popleft()[1], t)
            else:  # the shoe's timer: send the frame again
                self._send(self._cur, t)
                self._deadline = t + self.timeout
        self.t = end

    def advance(self, dt):
        self._run(self.t + dt, True)

    def stall(self, dt):
        """Interrupts off for dt seconds: the FIFO fills, the rest is lost; when they
        come back on, the IRQ moves the FIFO into the ring."""
        self._run(self.t + dt, False)
        self.stalls += 1
        self.stalled_s += dt

    # ---- the firmware's end: machine.UART ----
    def any(self):
        return len(self.ring)

    def readinto(self, buf, nbytes=-1):
        n = len(buf) if nbytes < 0 else min(nbytes, len(buf))
        n = min(n, len(self.ring))
        if n <= 0:
            return None
        buf[:n] = self.ring[:n]
        del self.ring[:n]
        return n

    def write(self, data):
        start = max(self.t, self._tx_free)
        for i, b in enumerate(bytes(data)):
            self._tx.append((start + (i + 1) * BYTE_S, b))
        self._tx_free = start + len(data) * BYTE_S
        return len(data)


class StallFS:
    """pitboss.store.osfs.OsFS whose every flash commit (fsync, rename, remove, a directory
    sync) stalls the line for an erase: worse than a real littlefs, which erases only
    when a block fills, so the figures are a worst case."""

    def __init__(self, line, erase_s=ERASE_S):
        from pitboss.store.osfs import OsFS

        self._fs = OsFS(durable=False)
        self.line = line
        self.erase_s = erase_s

    def __getattr__(self, name):
        return getattr(self._fs, name)

    def _stall(self):
        if self.erase_s:
            self.line.stall(self.erase_s)

    def fsync(self, f):
        self._stall()
        return self._fs.fsync(f)

    def rename(self, old, new):
        self._stall()
        return self._fs.rename(old, new)

    def remove(self, path):
        self._stall()
        return self._fs.remove(path)

    def sync_dir(self, path):
        self._stall()
        return self._fs.sync_dir(path)


def _board(line):
    """boards.virtual with the shoe's UART replaced by the line."""
    import boards.virtual as v

    v.reset()
    hw = types.SimpleNamespace(**{k: getattr(v, k) for k in dir(v) if not k.startswith("__")})
    hw.shoe_uart = lambda: line
    hw.ticks_ms = lambda: int(line.t * 1000)  # the shoe's resend timeout in line time
    return hw


def run(cards=10000, game="nj-5card", seats=6, seed=1, erase_s=ERASE_S, ack=True,
        timeout=0.1, root=None):
    """Deal seeded rounds through the stalling line until `cards` cards are dealt.
    With ack=False the shoe streams each round's frames as an older shoe would; the run
    then stops at the first round that lost or doubled a card."""
    from host_tools.emu import framebuf_shim

    framebuf_shim.install()  # pitboss.app draws with framebuf; CPython has none
    from host_tools.table.auth import KeyStore
    from host_tools.table.configurator import Configurator
    from host_tools.table.rounds import plan_round
    from pitboss import app
    from pitboss.rules import profiles
    from pitboss.hw import shoe
    line = StallLine(ack, timeout)
    root = root or tempfile.mkdtemp(prefix="pitboss-shoelink-")
    a = app.App(_board(line), root=root, check_firmware=False,
                fs=StallFS(line, erase_s))

    class Here:  # the Configurator's target: this process
        def commands(self, lines):
            return [a.ctl.command(x) for x in lines]

        def provision(self, key):
            from pitboss.store import auth
            auth.provision(key, root + "/auth")
            a.ctl.auth.load()

    keys = KeyStore(tempfile.mkdtemp(prefix="pitboss-k-"))
    conf = Configurator(Here(), "shoelink", keys)
    conf.provision()
    r = conf.configure(game, seats)
    if not r.get("ok"):
        raise RuntimeError("configuration refused: %s" % r)

    store = tempfile.mkdtemp(prefix="pitboss-shoelink-export-")
    got = []  # the controller's replies to shoe cards
    deck_size = profiles.get(game).deck
    dealt = rounds = lost = doubled = 0
    seq = 0
    started = time.monotonic()
    failed = None
    while dealt < cards:
        before, _frames, after = plan_round(game, seats, seed + rounds)
        n = len(_frames) // 12
        deck = shuffled_deck(seed + rounds, deck_size)[:n]
        seq_next = (seq + n) & 0xFFFF
        replies = [a.ctl.command(x) for x in before]
        del got[:]
        line.deal(frame_list(deck, seq))
        seq = seq_next
        quiet = 0
        while quiet < 0.3:  # the main loop: poll the shoe every POLL_S until all is in
            line.advance(POLL_S)
            got += a.poll()
            quiet = quiet + POLL_S if line.idle else 0
        cards_in = [rep.get("card") for rep in got if rep.get("ok")]
        replies += got + [a.ctl.command(x) for x in after]
        want = [_name(c) for c in deck]
        lo, do, in_order = dealt_check(cards_in, want)
        lost += lo
        doubled += do
        bad = [x for x in replies if not x.get("ok")]
        rounds += 1
        dealt += len(cards_in)
        if rounds % 20 == 0:
            # As a host does: the journal keeps every record until it is exported and
            # acknowledged (issue 12), and a full journal halts the table.
            from host_tools.table.export import export
            export(Here(), keys, "shoelink", store)
        if bad or not in_order:
            failed = {"round": rounds, "error": bad[0]["error"] if bad else None,
                      "sent": len(want), "received": len(cards_in)}
            break
    return {"cards": dealt, "rounds": rounds, "game": game, "seats": seats,
            "ack": ack, "erase_ms": erase_s * 1000, "stalls": line.stalls,
            "bytes_dropped": line.dropped, "frames_sent": line.sends,
            "retransmits": line.sends - line.frames if ack else None,
            "repeats_suppressed": a.shoe.counts[shoe.EV_REPEAT],
            "frames_damaged": (a.shoe.counts[shoe.EV_MALFORMED]
                               + a.shoe.counts[shoe.EV_BAD_CRC]),
            "lost": lost, "doubled": doubled, "first_failure": failed,
            "simulated_s": round(line.t, 1),
            "wall_s": round(time.monotonic() - started, 1)}


def _name(c):
    from pitboss.rules.cards import name
    return name(c)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.proofs.shoe_link", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cards", type=int, default=10000)
    ap.add_argument("--game", default="nj-5card")
    ap.add_argument("--seats", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--erase-ms", type=float, default=ERASE_S * 1000,
                    help="interrupts off per flash commit (45 typical, 400 worst)")
    ap.add_argument("--timeout-ms", type=float, default=100.0,
                    help="the shoe resends a frame not acknowledged within this")
    ap.add_argument("--no-ack", action="store_true", help="a streaming shoe, for contrast")
    a = ap.parse_args(argv)
    print(json.dumps(run(a.cards, a.game, a.seats, a.seed, a.erase_ms / 1000.0,
                         not a.no_ack, a.timeout_ms / 1000.0)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
