"""The targets a host drives a table through. Each runs the firmware's pitboss.app:

    BoardTarget   a board over the raw REPL (PicoTarget: the emulated Pico, whose shoe
                  frames go onto its UART1 through the emulator's control socket)
    ProtoTarget   a running table over protocol lines (open_table(port) gives one)
    LocalTarget   this CPython process (same firmware, simulated peripherals)

A round is planned once (host_tools.table.rounds: wagers, dice, shoe frames, players'
decisions) and can be played on any of them, so the board's settlement can be checked
against CPython's, amount by amount.
"""
import contextlib
import json
import tempfile

from host_tools.deploy.ready import ready_port
from host_tools.emu import shoe_sim
from host_tools.output import BoardError

_APP = "import pitboss.hostapi as A\n"


class BoardTarget:
    def __init__(self, board):
        self.board = board

    def run(self, code):
        return self.board.call_lines(_APP + code)

    def commands(self, lines):
        return self.run("A.commands(%r)" % (list(lines),)) if lines else []

    def round(self, before, frames, after):
        """One exec per round: wagers + deal, the shoe's bytes, decisions + settle."""
        return self.run("A.commands(%r)\nA.feed_shoe(%r)\nA.poll()\nA.commands(%r)"
                        % (list(before), frames, list(after)))

    def rounds(self, plans, chunk=25):
        """Many planned rounds, `chunk` per exec: the last reply of each round."""
        out = []
        for i in range(0, len(plans), chunk):
            text = json.dumps([[b, f.decode(), a] for b, f, a in plans[i:i + chunk]])
            out += [json.loads(ln) for ln in self.board.exec(
                _APP + "A.play(%r)" % text, fast=self.board.device_is_virtual)
                .splitlines() if ln.strip()]
        return out

    def provision(self, key):
        self.board.exec("from binascii import unhexlify\nfrom pitboss.store import auth\n"
                        "auth.provision(unhexlify(%r))\n" % key.hex())
        self.run("A.app().ctl.auth.load()")

    def screen(self):
        return bytes.fromhex(self.board.exec(_APP + "A.screen()").strip())


class PicoTarget(BoardTarget):
    """The emulated Pico: the shoe's frames go onto UART1's wire at the shoe's baud rate
    through the emulator's control socket (not through the REPL), while the firmware polls
    its SerialShoe as the main loop would; the screenshot is the emulated SSD1306's own
    display RAM, i.e. what the driver's I2C traffic drew."""

    # Emulated ms the board keeps polling after the last card is due before giving up.
    POLL_MS = 2000

    def __init__(self, board):
        super().__init__(board)
        from host_tools.emu.pico import control_for
        self.ctl = control_for(board.device)

    def deal(self, frames, cards):
        """Poll the shoe until `cards` cards are dealt (or it goes quiet), while the frames
        arrive on UART1; the replies in order."""
        code = (_APP + "import time, json\nout = []\nt = time.ticks_ms()\n"
                "while len(out) < %d and time.ticks_diff(time.ticks_ms(), t) < %d:\n"
                "    got = A.app().poll()\n    out += got\n"
                "    if got: t = time.ticks_ms()\n    time.sleep_ms(2)\n"
                "for r in out: print(json.dumps(r))\n" % (cards, self.POLL_MS))
        t, tr = self.board._t, self.board._tr
        try:
            t.exec_raw_no_follow(code)
            # The emulator's acknowledging shoe on UART1 (host_tools/emu/pico/uart.mjs): one
            # frame at a time, resent until acknowledged. A shoe that streamed them would
            # lose bytes to the flash writes (45 ms erases with interrupts off) and the
            # round would be a misdeal (docs/shoe-protocol.md).
            self.ctl("shoe", id=1, hex=bytes(frames).hex(), wait=False)
            out, err = t.follow(self.board.timeout)
        except tr.TransportError as e:
            raise BoardError("lost the board on %s: %s" % (self.board.device, e)) from e
        if err:
            raise BoardError("board raised:\n" + err.decode().strip())
        return [json.loads(ln) for ln in out.decode().splitlines() if ln.strip()]

    def round(self, before, frames, after):
        out = self.commands(before)
        deal = [r for r in out if r.get("ok") and "order" in r]
        cards = len(deal[-1]["order"]) if deal else 1 << 20  # else: until quiet
        out += self.deal(frames, cards)
        return out + self.commands(after)

    def rounds(self, plans, chunk=25):
        out = []
        for before, frames, after in plans:
            replies = self.round(before, frames, after)
            bad = [r for r in replies if not r.get("ok")]
            out.append(bad[0] if bad else replies[-1])
        return out

    def screen(self):
        return self.ctl.display_ram()


def target_for(board):
    """The host-side driver for this board: PicoTarget on the emulated Pico."""
    return PicoTarget(board) if getattr(board, "kind", None) == "pico" else BoardTarget(board)


class ProtoTarget:
    """A running table over protocol lines (pitboss.app's main loop, in either mode): the
    host's commands are lines on the serial port, the shoe's frames go through the
    board's side channel into the shoe's UART (host_tools.emu.sidechannel), dealt one at a
    time and resent until the controller acknowledges them. The table keeps playing
    while the host asks: nothing here stops its loop."""

    def __init__(self, port, link=None, control=None):
        from host_tools.link.protolink import ProtocolLink
        from host_tools.emu.sidechannel import control_for

        self.port = port
        self.link = link or ProtocolLink(port)
        self.control = control if control is not None else control_for(port)
        self._seq = 0  # the simulated shoe's running frame count (it wraps at 65536)
        self._shoe = None

    def close(self):
        self.link.close()

    def commands(self, lines):
        return [self.link.request(ln, timeout=120) for ln in lines]

    def shoe(self):
        if self.control is None:
            raise BoardError("%s is a real board: its shoe deals the cards (a simulated "
                             "shoe needs an emulated board's side channel)" % self.port)
        if self._shoe is None:
            self._shoe = self.control.acking_shoe()
        return self._shoe

    def renumber(self, frames):
        """The shoe's frames (bytes from shoe_sim.frames) as a list, renumbered on the
        shoe's own running count (it counts on across rounds, as a real shoe does)."""
        cards = [int(frames[i + 1:i + 3], 16) for i in range(0, len(frames), 12)]
        fl = shoe_sim.frame_list(cards, self._seq)
        self._seq = (self._seq + len(fl)) & 0xFFFF
        return fl

    def deal(self, frames):
        """The shoe's frames, renumbered, each resent until acknowledged; the loop's card
        replies."""
        fl = self.renumber(frames)
        self.shoe().deal(fl)
        # Every frame is acknowledged, so every card is in: its line follows at once,
        # unless the shoe set the frame aside (a duplicate), which the settlement shows.
        return self.link.wait_events(len(fl), timeout=30, strict=False)

    def deal_asking(self, frames, lines):
        """As deal(), one frame at a time, the protocol `lines` sent after each frame is
        acknowledged (a host asking while the table deals): (card replies, their
        replies)."""
        shoe = self.shoe()
        fl = self.renumber(frames)
        asked = []
        for f in fl:
            shoe.deal_one(f)
            asked += self.commands(lines)
        return self.link.wait_events(len(fl), timeout=60, strict=False), asked

    def round(self, before, frames, after):
        out = self.commands(before)
        out += self.deal(frames)
        return out + self.commands(after)

    def rounds(self, plans):
        return [self.round(*pl)[-1] for pl in plans]

    def screen(self):
        first = self.commands(["screen 0"])[0]
        if not first.get("ok"):
            raise BoardError("screen: %s" % first["error"]["message"])
        parts = [first["hex"]] + [self.commands(["screen %d" % i])[0]["hex"]
                                  for i in range(1, first["of"])]
        return bytes.fromhex("".join(parts))

    def provision(self, key):
        """Service mode: the key is written over the raw REPL (mpremote breaks into the
        loop with Ctrl-C); closing that session soft-resets the board, so the loop runs
        again with the new key."""
        self.link.close()
        from host_tools.link.boardlink import Board

        b = Board(self.port)
        try:
            BoardTarget(b).provision(key)
        finally:
            b.close()
        from host_tools.link.protolink import ProtocolLink

        self.link = ProtocolLink(self.port)
        self.link.ready()


@contextlib.contextmanager
def open_table(port, set_clock=True):
    """A ProtoTarget on `port` ('virtual': a throw-away board, flashed first). The host
    sets the board's clock as it connects (`clock UNIX`, journalled)."""
    import time

    from host_tools.link.protolink import LinkError

    with ready_port(port) as device:  # a throw-away board: flashed first
        try:
            t = ProtoTarget(device)
        except LinkError as e:
            raise BoardError(str(e))
        try:
            try:
                # An emulated Pico boots for seconds of wall time on a loaded machine (the
                # pitboss image hashes its program first): more than the 30 s default.
                from host_tools.emu.vboard_state import board_kind
                t.link.ready(300 if board_kind(device) == "pico" else 30)
                if set_clock:
                    t.commands(["clock %d" % int(time.time())])
            except LinkError as e:
                raise BoardError(str(e))
            yield t
        finally:
            t.close()


class LocalTarget:
    """The firmware in this process, storage in a temp folder, simulated peripherals."""

    def __init__(self, root=None, durable=True, production=False, region=None):
        """durable=False skips fsync (a reference run whose storage nobody relies on).
        production=True applies production's configuration rules (issue 30: no
        unverified default paytable); the twin is otherwise a service-mode table, as
        the virtual board's switch cannot be read here.
        region: callable(root, fs) -> the journal's flash region (pitboss.store.region), for a
        board that has one; default the virtual board's segment files."""
        import boards.virtual as hw
        from host_tools.emu import framebuf_shim
        framebuf_shim.install()  # pitboss.app draws with framebuf; CPython has none
        from pitboss import app
        from pitboss.store.osfs import OsFS

        hw.reset()  # peripherals of its own, not another target's
        self._hw = hw
        self.root = root or tempfile.mkdtemp(prefix="pitboss-local-")
        fs = OsFS(durable=durable)
        self.app = app.App(self._hw, root=self.root, check_firmware=False, fs=fs,
                           region=region and region(self.root, fs))
        self.app.ctl.production = production

    def commands(self, lines):
        return [self.app.ctl.command(ln) for ln in lines]

    def screen(self):
        """The simulated SSD1306's own display RAM: what the driver's I2C writes drew."""
        return bytes(self._hw.display_device().ram)

    def round(self, before, frames, after):
        out = self.commands(before)
        self._hw.shoe_uart().feed(frames)
        out += self.app.poll()
        return out + self.commands(after)

    def provision(self, key):
        from pitboss.store import auth
        auth.provision(key, self.root + "/auth")
        self.app.ctl.auth.load()
