# The table controller application, wiring only: the board's peripherals
# (pitboss.hw.board, and the drivers it builds from them) to the shoe, the controller
# (journal, tilts, round engine; its verbs in pitboss.verbs) and the display. The loop
# that serves them is pitboss.loop (main()).
# app() builds the one App of a board (pitboss.hostapi drives it from a host's raw REPL).
import gc

from pitboss.compat import mem_free, missing, started_ms
from pitboss.controller import Controller
from pitboss.recovery import now_ms
from pitboss.hw import board as _board
from pitboss.hw.clock import Clock
from pitboss.hw.serialshoe import SerialShoe
from pitboss.store import integrity

# The display (framebuf, TableDisplay) and the RFID reader (MFRC522, deck map, RFIDShoe)
# are imported only when the board wires them (hw.PERIPHERALS): on a Pico every module
# imported is heap held for good (issue 11's budget).
_app = None
_NONE = ()  # App.poll's answer when nothing was dealt


class App:
    def __init__(self, hw, root="", clock=None, rng=None, check_firmware=True, fs=None,
                 region=None):
        self.hw = hw
        t0 = now_ms()  # the modules imported by now: chip time since reset (MicroPython)
        self.display = None
        # A wired peripheral that is missing or fails at boot (a loose I2C cable, no
        # MFRC522 on the SPI bus) is a tilt once the controller can record it, and the
        # table runs without it where the game allows (issue 11): never a boot that fails.
        faults = []
        if "display" in hw.PERIPHERALS:
            try:
                from pitboss.hw.display import TableDisplay

                self.display = TableDisplay(_board.display(hw), hw.DISPLAY_WIDTH,
                                            hw.DISPLAY_HEIGHT)
            except Exception as e:  # OSError ENODEV/ETIMEDOUT from the I2C bus
                faults.append(("display_fault", "display: %s %s" % (type(e).__name__, e)))
        # The wall clock the host sets (`clock UNIX`): the board's RTC through boards/.
        # The journal's flash region, where the board has one (boards/: a raw region on
        # the pitboss image, sector files on a stock one); else the segment files.
        if region is None:
            region = _board.journal_region(hw, root, fs)
        self.ctl = Controller(root, fs=fs, clock=clock or Clock(hw), rng=rng or _dice_rng(),
                              display=self.display, region=region,
                              integrity=self._firmware_problems if check_firmware else None,
                              program=integrity.deferred_check() if check_firmware else None)
        from pitboss import service  # (a module the loop imports anyway)
        self.ctl.production = not service.requested(hw)
        # RFID: a reader on the board and a deck map on flash make the RFID shoe the
        # table's shoe; without a registered deck the serial shoe is.
        self.reader = self.deckmap = self.registration = None
        self.deck_path = None
        if "rfid" in hw.PERIPHERALS:
            self.deck_path = root + _DECK_PATH
            try:
                self.reader = _board.rfid(hw)
            except Exception as e:  # RFIDError (no chip answers), OSError from the bus
                faults.append(("shoe_fault", "rfid reader: %s %s" % (type(e).__name__, e)))
            # pitboss.store.deckmap only once a map exists (a serial-shoe table never needs it);
            # deck-register brings it in.
            if self.reader is not None and _exists(self.deck_path):
                self.deckmap = _load_deckmap(self.deck_path, self.ctl)
        self.shoe = self.make_shoe()
        self.ctl.on_new_round = self._new_shuffle
        self.ctl.app = self  # the verbs the App answers (pitboss.verbs: APP)
        t1 = now_ms()
        self.boot = self.ctl.boot()
        ms = self.boot["ms"]
        # reset -> App(): MicroPython's start, main.py's imports (from a soft reset where
        # the image tells when it was: compat.started_ms)
        ms["imported"] = (t0 - started_ms()) & 0x3FFFFFFF
        ms["peripherals"] = (t1 - t0) & 0x3FFFFFFF  # display, controller, reader, shoe
        for code, why in faults:
            self.ctl.raise_tilt(code, why[:80])
        self.faults = [c for c, _ in faults]  # the peripherals that failed at boot
        gc.collect()
        self.min_free = mem_free()
        self._prime_shoe()

    def _prime_shoe(self):
        # The serial shoe's frame sequence runs on across power cycles: the last frame
        # dealt before the cut (journalled) is where the decoder resumes, so frames the
        # shoe sent while the board was off are a gap (a misdeal), not the next cards.
        # A card journalled just before a power cut whose acknowledgement never left: the
        # shoe sends that frame again, and it must be a repeat, not a second card.
        last = self.ctl.shoe_last  # card | (frame seq + 1) << 6, as in the round's events
        if last is not None and isinstance(self.shoe, SerialShoe):
            self.shoe.resume(last & 63, (last >> 6) - 1)

    # ---- memory (issue 11's heap budget) ---------------------------------------------
    def idle(self):
        """The main loop calls this when a pass found nothing to do (Controller.idle:
        the journal's check after a lazy boot, the meters' save, the next sector erased
        ahead). How long the next pass may wait for input, in ms: 0 while idle work
        is left (at once), the shoe's wait_ms() otherwise (None: the loop's own short
        wait, for a shoe that must be asked every pass). A line or a card's frame ends
        the wait."""
        if self.ctl.idle():
            return 0
        if self.registration is not None:
            # The reader is asked every pass (register_poll), and a tag wakes no poll:
            # left to the serial shoe's wait, a registration read one tag per 500 ms
            # (a deck took 27 s of a Pico's time, issue 27).
            return None
        return self.shoe.wait_ms()

    def note_mem(self):
        """The main loop calls this after each pass that did work: the lowest free heap
        seen since boot (garbage included, so a lower bound on what was really free)."""
        f = mem_free()
        if f is not None and (self.min_free is None or f < self.min_free):
            self.min_free = f

    def display_ram(self):
        """What the display shows, as MONO_VLSB bytes: the virtual board's simulated
        controller's own GDDRAM, else what the driver last sent; None without one."""
        dev = getattr(self.hw, "display_device", None)
        if dev is not None:
            return dev().ram
        return self.display.fb.buf if self.display is not None else None

    def _firmware_problems(self):
        # The boot check: every file on the filesystem, and the manifest's seal under the
        # board's key (none before provisioning: then nothing can be configured either).
        # Only a flashed board has a manifest; host-run firmware passes check_firmware=False.
        # On the pitboss image the manifest also lists the program flash (core and ROMFS),
        # which the frozen main.py hashed moments ago: cached, not hashed twice.
        return ["%s: %s" % p for p in integrity.check(root="/", mac=self.ctl.auth.mac(),
                                                      cached=True)]

    def make_shoe(self):
        if self.reader is not None and self.deckmap is not None and len(self.deckmap):
            from pitboss.hw.rfidshoe import RFIDShoe

            return RFIDShoe(self.reader, self.deckmap, alarm=self.ctl.shoe_alarm)
        # A board may give the shoe its clock (the link model's simulated time); else
        # time.ticks_ms.
        return SerialShoe(self.hw.shoe_uart(), alarm=self.ctl.shoe_alarm,
                          baud=getattr(self.hw, "SHOE_BAUD", 9600),
                          ticks=getattr(self.hw, "ticks_ms", None))

    def _new_shuffle(self):
        self.shoe.reset()

    def poll(self):
        """Deal every card the shoe has delivered (or, while a deck is being registered,
        take the next tag); returns the replies."""
        if self.registration is not None:
            # (imported here: a table that never registers a deck never holds it)
            from pitboss.verbs.deck import register_poll

            return register_poll(self)
        out = None  # most passes deal nothing: no list allocated for them (issue 27)
        shoe = self.shoe
        while True:
            try:
                card = shoe.next_card()
            except Exception as e:
                # The shoe's own I/O failed (a UART or reader error it did not report as
                # an alarm): a card may be lost, so halt; the main loop goes on.
                why = "shoe: %s %s" % (type(e).__name__, e)
                self.ctl.misdeal("shoe_fault", why[:80])
                return (out or []) + [{"ok": False, "error": {
                    "code": "shoe_fault", "message": "the shoe failed: %s" % (e,)}}]
            if card < 0:
                return _NONE if out is None else out
            seq = card >> 6  # (next_card: the card's id and its frame count in one int)
            card &= 63
            reply = self.ctl.shoe_deal(card, seq)
            # Only now, with the card journalled (or refused), may the shoe send the next
            # one: until it hears this it sends the same frame again (docs/shoe-protocol.md).
            # The reply's dict and the list come after it (issue 27's card window).
            shoe.ack(seq)
            if out is None:
                out = []
            out.append(self.ctl.dealt_reply(reply) if type(reply) is int else reply)
            self.ctl.redraw()  # after the acknowledgement: the shoe is not kept waiting

    # ---- RFID deck registration (authenticated: it decides what every tag means) ----


def _load_deckmap(path, ctl):
    from pitboss.store.deckmap import DeckError, DeckMap

    try:
        return DeckMap.load(path)
    except OSError as e:
        if not missing(e):
            raise
        return DeckMap()
    except DeckError as e:
        # A damaged map must not be guessed from: halt until a deck is registered again.
        ctl.raise_tilt("shoe_fault", "deck map: %s" % e)
        return DeckMap()


_DECK_PATH = "/deckmap.txt"  # pitboss.store.deckmap.DEFAULT_PATH (test_main_loop checks)


def _exists(path):
    import os

    try:
        os.stat(path)
        return True
    except OSError:
        return False


def _dice_rng():
    # The Pai Gow dice on real hardware: the port's own random source (seeded from the
    # hardware RNG on rp2/esp32). The roll is journalled, so replay never re-rolls.
    import random

    return lambda n: random.getrandbits(16) % n


def app():
    global _app
    if _app is None:
        # Importing the firmware's .mpy files left ~95 KB of loader garbage between the
        # modules. Collected first, the table's long-lived objects (journal, meters,
        # the replayed round) fill those holes instead of being scattered past them into
        # the free space: measured on the emulated Pico, a power-on replay of two Pai Gow
        # rounds and a Three Card round raised MemoryError (2,268 bytes) without this
        # collect and left 101,552 bytes free with it (issue 11).
        gc.collect()
        _app = App(_board.get())
    return _app
