# The table controller application: wires the board's peripherals (pitboss.board) to the
# shoe, the controller (journal, tilts, round engine) and the display, and runs the loop.
#
# Real boards run main() from /main.py: the shoe on its own UART, the bench protocol on
# the USB REPL's stdin/stdout. The virtual board's REPL cannot read stdin (its bridge
# drives the REPL), so there the host calls command()/feed_shoe()/poll() over the raw REPL
# instead; both paths end in the same Controller.command().
import json
import sys

from pitboss import board as _board
from pitboss import integrity
from pitboss.controller import Controller
from pitboss.display import TableDisplay
from pitboss.shoe import SerialShoe

_app = None


class App:
    def __init__(self, hw, root="", clock=None, rng=None, check_firmware=True):
        self.hw = hw
        self.display = None
        if "display" in hw.PERIPHERALS:
            self.display = TableDisplay(hw.display(), hw.DISPLAY_WIDTH, hw.DISPLAY_HEIGHT)
        self.ctl = Controller(root, clock=clock, rng=rng or _dice_rng(),
                              display=self.display,
                              integrity=_firmware_problems if check_firmware else None)
        self.shoe = SerialShoe(hw.shoe_uart(), alarm=self.ctl.shoe_alarm)
        self.ctl.on_new_round = self.shoe.reset
        self.boot = self.ctl.boot()

    def poll(self):
        """Deal every card the shoe has delivered; returns the replies."""
        out = []
        while True:
            got = self.shoe.poll()
            if got is None:
                return out
            out.append(self.ctl.shoe_card(got[0], got[1]))


def _firmware_problems():
    # Only a flashed board has a manifest; the host-run firmware (tests) passes None.
    return ["%s: %s" % p for p in integrity.check()]


def _dice_rng():
    # The Pai Gow dice on real hardware: the port's own random source (seeded from the
    # hardware RNG on rp2/esp32). The roll is journalled, so replay never re-rolls.
    import random

    return lambda n: random.getrandbits(16) % n


def app():
    global _app
    if _app is None:
        _app = App(_board.get())
    return _app


# ---- host-driven use (virtual board; a bench host over the raw REPL) -----------------
def command(line):
    print(json.dumps(app().ctl.command(line)))


def commands(lines):
    for line in lines:
        command(line)


def soak(lines):
    """Run many command lines and print one summary line with the heap after a collect:
    a soak test watches mem_free across batches for drift (leaks)."""
    import gc

    ctl = app().ctl
    ok = refused = 0
    for line in lines:
        if ctl.command(line).get("ok"):
            ok += 1
        else:
            refused += 1
    gc.collect()
    print(json.dumps({"ok": ok, "refused": refused, "mem_free": gc.mem_free(),
                      "mem_alloc": gc.mem_alloc()}))


def feed_shoe(data):
    """Bytes as the shoe's UART would receive them (the virtual board's simulated shoe)."""
    feed = getattr(app().hw.shoe_uart(), "feed", None)
    if feed is None:
        raise OSError("this board's shoe is a real UART: the shoe itself sends the cards")
    feed(data)


def poll():
    for reply in app().poll():
        print(json.dumps(reply))


def screen():
    """What the display shows, as hex MONO_VLSB bytes (for `pitboss screenshot`): the
    simulated controller's own RAM on the virtual board, else the driver's buffer."""
    from binascii import hexlify

    hw = app().hw
    dev = getattr(hw, "display_device", None)
    print(hexlify(bytes(dev().ram if dev else hw.display().buf)).decode())


# ---- the main loop on a real board ----------------------------------------------------
def main():
    import select

    a = app()
    if a.display is not None and not a.ctl.tilt.tilted:
        a.display.message("PITBOSS", ["READY", "BOOT %s" % a.boot])
    poller = select.poll()
    poller.register(sys.stdin, select.POLLIN)
    line = bytearray()
    # KeyboardInterrupt (Ctrl-C) is never caught here: it ends the loop and leaves the
    # board at the REPL, so mpremote can always get in.
    while True:
        a.poll()
        for _ in poller.poll(10):
            ch = sys.stdin.read(1)
            if ch in ("\n", "\r"):
                if line:
                    print(json.dumps(a.ctl.command(line.decode())))
                    line = bytearray()
            elif len(line) < 512:
                line.extend(ch.encode())
