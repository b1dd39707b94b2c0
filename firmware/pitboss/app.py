# The table controller application: wires the board's peripherals (pitboss.hw.board) to the
# shoe, the controller (journal, tilts, round engine) and the display, and runs the loop.
#
# Every board runs main() from /main.py, in production and in service mode: the shoe on
# its own UART (each card acknowledged once journalled), the bench protocol on the USB
# serial port's stdin/stdout. The virtual board's VM cannot block on stdin, so its bridge
# calls one pass of the same loop per burst of input (pump). command()/feed_shoe()/poll()
# below are for a host in the raw REPL (tests' bulk rounds, the benchmark); every path
# ends in the same Controller.command().
import json

import gc

from pitboss.hw import board as _board
from pitboss.hw import drivers
from pitboss.store import integrity
from pitboss.controller import Controller, now_ms
from pitboss.hw.clock import Clock
from pitboss.compat import const, missing
from pitboss.errors import Refused
from pitboss.hw.serialshoe import SerialShoe

# The display (framebuf, TableDisplay) and the RFID reader (MFRC522, deck map, RFIDShoe)
# are imported only when the board wires them (hw.PERIPHERALS): on a Pico every module
# imported is heap held for good (issue 11's budget).
_app = None
_LINE_MAX = const(512)  # a longer line is refused whole (bad_format), never cut and run
# Bytes taken from the serial line per pass before the shoe is served again: the line is
# drained in full over consecutive passes (ESP32's stdin buffer holds 260 bytes), while a
# megabyte of junk cannot starve the shoe's UART (256-byte rxbuf, ~270 ms at 9600 baud).
_DRAIN_MAX = const(1024)
# Bytes read at once where the board says how many wait (serve's waiting()): MicroPython's
# USB stdin ring buffer holds at most 511.
_CHUNK = const(256)
# What one skip() (up to a ring buffer of junk dropped, no Python work per byte) counts
# against _DRAIN_MAX: 64 of them per pass, so the shoe is still served every few ms.
_SKIP_COST = const(16)
# A collection whenever this many bytes were allocated since the last one: MicroPython
# otherwise collects only when the heap is full, so garbage (replies, parsed lines) would
# take the free heap down to nothing between collections. Measured on the emulated Pico:
# without it the lowest free heap in a session was 39.9 KB, with it 105.8 KB (117 KB
# free after boot; docs/bench.md). 8 KB since the serial link's code (acknowledgements,
# clock, screen) took ~25 KB more at boot: with 16 KB the lowest free in the Pico survive
# session was 62,096 B (2026-12-01), garbage included, under the 64 KB budget. 4 KB since
# 20 Pai Gow rounds at six seats in one session (their live heap is the largest: ~173 KB
# after a collection) went down to 63,104 B with 8 KB (2026-12-01 evening); a collection
# there is ~23 ms. 2 KB since the first export of a long Pai Gow session: the free heap
# is sampled after each pass with its garbage, which is up to this threshold plus the
# largest allocation (a 2.3 KB settlement record read back), and after an export from a
# Pai Gow journal it read 64,352 B with 4 KB (2026-12-01 late; docs/bench.md).
GC_EVERY = 2048
# A board may set its own (boards/pico.py gc_every(): 8 KB on the pitboss image, whose
# code is in ROMFS). Since issue 27 the loop also collects after each dealt card (serve).
_NONE = ()  # App.poll's answer when nothing was dealt
# Watchdog: the longest a pass may take before the board resets. The RP2040's maximum is
# 8.3 s; ESP32's has no such limit but the same value keeps the boards alike.
WDT_MS = 8000
SCREEN_CHUNK = 128  # display RAM bytes per `screen` reply line (256 hex digits)


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

                self.display = TableDisplay(drivers.display(hw), hw.DISPLAY_WIDTH,
                                            hw.DISPLAY_HEIGHT)
            except Exception as e:  # OSError ENODEV/ETIMEDOUT from the I2C bus
                faults.append(("display_fault", "display: %s %s" % (type(e).__name__, e)))
        # The wall clock the host sets (`clock UNIX`): the board's RTC through boards/.
        # The journal's flash region, where the board has one (boards/: a raw region on
        # the pitboss image, sector files on a stock one); else the segment files.
        if region is None:
            region = drivers.journal_region(hw, root, fs)
        self.ctl = Controller(root, fs=fs, clock=clock or Clock(hw), rng=rng or _dice_rng(),
                              display=self.display, region=region,
                              integrity=self._firmware_problems if check_firmware else None)
        from pitboss import service  # (a module the loop imports anyway)
        self.ctl.production = not service.requested(hw)
        # RFID: a reader on the board and a deck map on flash make the RFID shoe the
        # table's shoe; without a registered deck the serial shoe is.
        self.reader = self.deckmap = self.registration = None
        self._deck_path = None
        if "rfid" in hw.PERIPHERALS:
            self._deck_path = root + _DECK_PATH
            try:
                self.reader = drivers.rfid(hw)
            except Exception as e:  # RFIDError (no chip answers), OSError from the bus
                faults.append(("shoe_fault", "rfid reader: %s %s" % (type(e).__name__, e)))
            # pitboss.store.deckmap only once a map exists (a serial-shoe table never needs it);
            # deck-register brings it in.
            if self.reader is not None and _exists(self._deck_path):
                self.deckmap = _load_deckmap(self._deck_path, self.ctl)
        self.shoe = self._make_shoe()
        self.ctl.on_new_round = self._new_shuffle
        self.ctl.auth_commands["deck-register"] = self.cmd_deck_register
        self.ctl.auth_commands["provision"] = self.cmd_provision
        self.ctl.commands["deck"] = self.cmd_deck
        self.ctl.commands["verify"] = self.cmd_verify
        self.ctl.commands["mem"] = self.cmd_mem
        self.ctl.commands["screen"] = self.cmd_screen
        self.ctl.commands["version"] = self.cmd_version
        t1 = now_ms()
        self.boot = self.ctl.boot()
        ms = self.boot["ms"]
        ms["imported"] = t0  # reset -> App(): MicroPython's start, main.py's imports
        ms["peripherals"] = (t1 - t0) & 0x3FFFFFFF  # display, controller, reader, shoe
        for code, why in faults:
            self.ctl.raise_tilt(code, why[:80])
        self.faults = [c for c, _ in faults]  # the peripherals that failed at boot
        gc.collect()
        self.min_free = _mem_free()
        self._prime_shoe()

    def _prime_shoe(self):
        # The serial shoe's frame sequence runs on across power cycles: the last frame
        # dealt before the cut (journalled) is where the decoder resumes, so frames the
        # shoe sent while the board was off are a gap (a misdeal), not the next cards.
        # A card journalled just before a power cut whose acknowledgement never left: the
        # shoe sends that frame again, and it must be a repeat, not a second card.
        last = self.ctl.shoe_last  # (frame seq, card)
        if last is not None and isinstance(self.shoe, SerialShoe):
            self.shoe.resume(last[1], last[0])

    # ---- memory (issue 11's heap budget) ---------------------------------------------
    def idle(self):
        """The main loop calls this when a pass found nothing to do (Controller.idle:
        the journal's check after a lazy boot)."""
        self.ctl.idle()

    def note_mem(self):
        """The main loop calls this after each pass that did work: the lowest free heap
        seen since boot (garbage included, so a lower bound on what was really free)."""
        f = _mem_free()
        if f is not None and (self.min_free is None or f < self.min_free):
            self.min_free = f

    def cmd_mem(self, args):
        """mem: {free, alloc, min_free, max_block, up_ms, boot_ms, unchecked} in bytes
        after a collection; max_block (the largest single allocation that would succeed)
        is found by trial allocations bisected between 0 and free, done only here, on
        request. None on a port without gc.mem_free (CPython)."""
        import time

        # up_ms: chip time since reset when this line is taken (the boot budget)
        up = getattr(time, "ticks_ms", None)
        up = up() if up is not None else None
        gc.collect()
        free = _mem_free()
        self.note_mem()
        if free is None:
            return {"free": None, "alloc": None, "min_free": None, "max_block": None,
                    "up_ms": up}
        # unchecked: journal bytes the boot left for the idle passes to check (0: done)
        return {"free": free, "alloc": gc.mem_alloc(), "min_free": self.min_free,
                "max_block": _max_block(free), "up_ms": up, "boot_ms": self.boot["ms"],
                "unchecked": self.ctl.journal.unchecked}

    def _firmware_problems(self):
        # The boot check: every file on the filesystem, and the manifest's seal under the
        # board's key (none before provisioning: then nothing can be configured either).
        # Only a flashed board has a manifest; host-run firmware passes check_firmware=False.
        # On the pitboss image the manifest also lists the program flash (core and ROMFS),
        # which the frozen main.py hashed moments ago: cached, not hashed twice.
        return ["%s: %s" % p for p in integrity.check(root="/", mac=self.ctl.auth.mac(),
                                                      cached=True)]

    # ---- integrity and keys from production (docs/security.md) ------------------------
    def cmd_verify(self, args):
        """verify SEED_HEX: the seeded answer over every file (pitboss.store.integrity), for a
        verifier that compares it with its own build; needs no key, reveals no secret."""
        from binascii import unhexlify
        import sys

        if len(args) != 1:
            raise Refused("bad_args", "usage: verify SEED_HEX (%d..%d bytes)"
                                % (integrity.SEED_MIN, integrity.SEED_MAX))
        try:
            seed = unhexlify(args[0])
        except ValueError:
            raise Refused("bad_args", "the seed is not hex")
        if not integrity.SEED_MIN <= len(seed) <= integrity.SEED_MAX:
            # Checked here: a ValueError from inside would be an internal_error tilt.
            raise Refused("bad_args", "the seed must be %d..%d bytes"
                          % (integrity.SEED_MIN, integrity.SEED_MAX))
        reply = integrity.seeded_answer(seed)
        info, _ = integrity.parse_manifest(integrity.read_manifest() or "")
        mac = self.ctl.auth.mac()
        seal = integrity.read_manifest(integrity.SEAL)
        reply.update(board=self.hw.NAME, platform=sys.platform,
                     mpy=getattr(sys.implementation, "_mpy", 0),
                     mode=info.get("mode"), state=info.get("state"),
                     sealed=None if mac is None else (
                         seal is not None and seal.strip() == integrity.seal_of(
                             mac, integrity.read_manifest() or "")))
        return reply

    def cmd_provision(self, args):
        """auth N MAC provision WRAPPED_HEX FINGERPRINT: a new key, from production, for
        whoever holds the current one (pitboss.store.auth.Auth.rekey)."""
        if len(args) != 2:
            raise Refused("bad_args", "usage: provision WRAPPED_KEY_HEX FINGERPRINT")
        a = self.ctl.auth
        try:
            return {"provisioned": a.rekey(a.counter, args[0], args[1])}
        except ValueError as e:  # a refused re-key (no key, bad hex, wrong fingerprint)
            raise Refused("bad_args", str(e))

    def cmd_version(self, args):
        from pitboss import protocol, service

        reply = protocol.COMMANDS["version"](args)
        reply["mode"] = "service" if service.requested(self.hw) else "production"
        # Who this board is, for the host's key store: the chip's unique id (boards/)
        # and its key's fingerprint (never the key).
        # (Keys of more than 10 characters, and names MicroPython has in ROM: no new
        # interned names, DEVELOPERS.md.)
        u = getattr(self.hw, "unique_id", None)
        try:
            reply["unique_id"] = u() if u is not None else None
        except Exception:  # noqa: BLE001  (a board without one still answers)
            reply["unique_id"] = None
        reply["key_fingerprint"] = getattr(self.ctl.auth, "id", None)
        return reply

    def cmd_screen(self, args):
        """screen [CHUNK]: the display RAM as hex, SCREEN_CHUNK bytes per reply line (a
        host asks for chunk 0..of-1), so no reply holds the whole frame as one string."""
        hw = self.hw
        dev = getattr(hw, "display_device", None)
        if dev is not None:
            ram = dev().ram  # the virtual board: the simulated controller's own GDDRAM
        elif self.display is not None:
            ram = self.display.fb.buf  # a real board: what the driver last sent
        else:
            raise Refused("no_display", "this table has no display")
        of = (len(ram) + SCREEN_CHUNK - 1) // SCREEN_CHUNK
        i = 0
        if args:
            if not args[0].isdigit():
                raise Refused("bad_args", "usage: screen [CHUNK 0..%d]" % (of - 1))
            i = int(args[0])
        if i >= of:
            raise Refused("bad_args", "chunk %d of %d" % (i, of))
        from binascii import hexlify

        return {"chunk": i, "of": of, "width": hw.DISPLAY_WIDTH,
                "height": hw.DISPLAY_HEIGHT,
                "hex": hexlify(bytes(ram[i * SCREEN_CHUNK:(i + 1) * SCREEN_CHUNK])).decode()}

    def _make_shoe(self):
        if self.reader is not None and self.deckmap is not None and len(self.deckmap):
            from pitboss.hw.rfidshoe import RFIDShoe

            return RFIDShoe(self.reader, self.deckmap, alarm=self.ctl.shoe_alarm)
        # A board may give the shoe its clock (the link model's simulated time); else
        # time.ticks_ms.
        return SerialShoe(self.hw.shoe_uart(), alarm=self.ctl.shoe_alarm,
                          ticks=getattr(self.hw, "ticks_ms", None))

    def _new_shuffle(self):
        self.shoe.reset()

    def poll(self):
        """Deal every card the shoe has delivered (or, while a deck is being registered,
        take the next tag); returns the replies."""
        if self.registration is not None:
            return self._register_poll()
        out = None  # most passes deal nothing: no list allocated for them (issue 27)
        while True:
            try:
                got = self.shoe.poll()
            except Exception as e:
                # The shoe's own I/O failed (a UART or reader error it did not report as
                # an alarm): a card may be lost, so halt; the main loop goes on.
                why = "shoe: %s %s" % (type(e).__name__, e)
                self.ctl.misdeal("shoe_fault", why[:80])
                return (out or []) + [{"ok": False, "error": {
                    "code": "shoe_fault", "message": "the shoe failed: %s" % (e,)}}]
            if got is None:
                return _NONE if out is None else out
            if out is None:
                out = []
            out.append(self.ctl.shoe_card(got[0], got[1]))
            # Only now, with the card journalled (or refused), may the shoe send the next
            # one: until it hears this it sends the same frame again (docs/shoe-protocol.md).
            self.shoe.ack(got[1])
            self.ctl.redraw()  # after the acknowledgement: the shoe is not kept waiting

    # ---- RFID deck registration (authenticated: it decides what every tag means) ----
    def cmd_deck_register(self, args):
        if self.reader is None:
            raise Refused("no_reader", "this board has no RFID reader")
        if not self.ctl.between_rounds():
            raise Refused("wrong_phase", "register a deck between rounds")
        size = 52
        if args:
            if not args[0].isdigit():
                raise Refused("bad_args", "usage: deck-register [52|53], got %r" % args[0])
            size = int(args[0])
        from pitboss.store.deckmap import DeckMap, Registration

        if self.deckmap is None:
            self.deckmap = DeckMap()
        self.registration = Registration(self.deckmap, size=size)
        return self.cmd_deck(())

    def cmd_deck(self, args):
        """Registration progress, or the registered decks."""
        from pitboss.rules.cards import name

        reg = self.registration
        if reg is not None:
            nxt = reg.expected()
            return {"registering": True, "read": reg.count(), "of": len(reg.order),
                    "next": name(nxt) if nxt is not None else None}
        n = len(self.deckmap) if self.deckmap is not None else 0
        return {"registering": False, "decks": n,
                "shoe": "serial" if isinstance(self.shoe, SerialShoe) else "rfid"}

    def _register_poll(self):
        from pitboss.rules.cards import name
        from pitboss.store.deckmap import DeckError, uid_hex

        reader, reg, dm, path = self.reader, self.registration, self.deckmap, self._deck_path
        if reader is None or reg is None or dm is None or path is None:
            return []
        try:
            uid = reader.read_uid()
        except OSError as e:
            return [{"ok": False, "error": {"code": "read_error", "message": str(e)}}]
        if uid is None:
            return []
        try:
            card = reg.add(uid)
        except DeckError as e:  # read twice / another deck's tag: present the right card
            return [{"ok": False, "error": {"code": e.code, "message": str(e)}}]
        reply = {"ok": True, "registered": name(card), "uid": uid_hex(uid)}
        if reg.done():
            reply["deck"] = reg.commit()
            dm.save(path)  # atomic: temp, sync, rename
            self.registration = None
            self.shoe = self._make_shoe()
        return [reply]


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


def _mem_free():
    f = getattr(gc, "mem_free", None)  # MicroPython only
    return f() if f is not None else None


def _max_block(free):
    """The largest bytearray that can be allocated now: bisected by trial allocations,
    each dropped at once (MicroPython has no API for the largest free block)."""
    lo, hi = 0, free
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            b = bytearray(mid)
        except MemoryError:
            hi = mid - 1
        else:
            b = None
            lo = mid
        gc.collect()
    return lo


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


# ---- host-driven use (virtual board; a bench host over the raw REPL) -----------------
def command(line):
    # Through json_writer, as the loop answers: once main() has run (service mode runs
    # the loop too), recall's rounds are a Rows stream, which json.dumps cannot write.
    import sys
    json_writer(sys.stdout)(app().ctl.command(line))


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


def play(plans_json):
    """Many rounds in one call (a host's batch of simulated shoe rounds): each plan is
    [lines before the deal's cards, the shoe's frames as text, lines after]. Prints one
    JSON line per round: its last reply (the settlement), or the first refusal."""
    for before, frames, after in json.loads(plans_json):
        ctl = app().ctl
        replies = [ctl.command(ln) for ln in before]
        feed_shoe(frames.encode())
        replies += app().poll()
        replies += [ctl.command(ln) for ln in after]
        bad = [r for r in replies if not r.get("ok")]
        print(json.dumps(bad[0] if bad else replies[-1]))


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

    a = app()
    dev = getattr(a.hw, "display_device", None)
    if dev is not None:
        buf = dev().ram
    elif a.display is not None:
        buf = a.display.fb.buf
    else:  # no display wired, or it failed at boot (its display_fault tilt says so)
        buf = b""
    print(hexlify(bytes(buf)).decode())


# ---- the main loop on a real board ----------------------------------------------------
_REFUSED = {"ok": False, "error": {
    "code": "bad_format",
    "message": "line refused: not printable ASCII, or longer than %d bytes" % _LINE_MAX}}


class LineReader:
    """Bytes in, protocol lines out. A line ends at CR or LF; one holding a byte outside
    printable ASCII (Ctrl-C, NUL, 0xFF, invalid UTF-8...) or longer than _LINE_MAX is
    refused whole, never cut and run: the rest of a long line is discarded up to its
    newline. feed(byte) -> None (no line yet), a str line, or False (refused). The line
    buffer is allocated once."""

    def __init__(self):
        self.buf = bytearray(_LINE_MAX)
        self.n = 0
        self.bad = False

    def feed(self, b):
        if b == 10 or b == 13:
            n = self.n
            self.n = 0
            if self.bad:
                self.bad = False
                return False
            if not n:
                return None
            return bytes(self.buf[:n]).decode()  # printable ASCII only: cannot fail
        if self.bad:
            return None
        if b < 32 or b > 126 or self.n >= _LINE_MAX:
            self.bad = True
        else:
            self.buf[self.n] = b
            self.n += 1
        return None

    def extend(self, buf, n, line):
        """feed() over buf[0:n], calling line(result) for each line or refusal. The rest
        of a refused line is skipped in bulk, find() of its end, not a byte at a time
        (issue 29: a 1 MB junk line cost ~62 us a byte on a Pico)."""
        i = 0
        while i < n:
            if self.bad:
                j = buf.find(b"\n", i, n)
                k = buf.find(b"\r", i, n if j < 0 else j)
                if k >= 0:
                    j = k
                if j < 0:
                    return
                self.bad = False
                self.n = 0
                line(False)
                i = j + 1
                continue
            r = self.feed(buf[i])
            i += 1
            if r is not None:
                line(r)


def _internal(where, e):
    return {"ok": False, "error": {"code": "internal",
                                   "message": ("%s: %r" % (where, e))[:80]}}


def _answer(a, line, write):
    if line is False:
        write(_REFUSED)
        return
    try:
        reply = a.ctl.command(line)
    except Exception as e:  # noqa: BLE001  (the loop must outlive any handler's bug)
        reply = _internal("command", e)
    write(reply)


def _deal(a, write):
    """Deal what the shoe delivered and write the replies; how many there were."""
    n = 0
    try:
        for reply in a.poll():
            reply["src"] = "shoe"  # not an answer to a line: the host tells them apart
            write(reply)
            n += 1
    except Exception as e:  # noqa: BLE001
        write(_internal("shoe", e))
        n += 1
    return n


class _Down:
    """A table that could not start (its App raised): the loop still owns the port and
    answers every line with the reason, rather than ending main.py into the REPL."""

    def __init__(self, why):
        self.ctl = self
        self.why = why
        self.stream = True  # what main() sets on a Controller
        self.feed = None

    def poll(self):
        return []

    def note_mem(self):
        pass

    def idle(self):
        pass

    def command(self, line):
        return {"ok": False, "error": {"code": "boot_failed", "message": self.why}}


def json_writer(stream):
    """write(reply) for the serial line: json.dump streams the reply straight into the
    port (MicroPython's json writes piece by piece), so no reply becomes one large string
    on the heap; a value marked stream_rows (recall's pitboss.controller.Rows, export's
    ExportRows) is written one row at a time as it is read, so `recall 50` never holds
    50 rounds, nor `export` 4 KB of records with their MACs."""
    w = stream.write

    def write(reply):
        rows = None
        for k in reply:
            if getattr(reply[k], "stream_rows", False):
                rows = k
        if rows is None:
            json.dump(reply, stream)
            w("\n")
            return
        w("{")
        for k in reply:
            if k != rows:
                json.dump(k, stream)
                w(": ")
                json.dump(reply[k], stream)
                w(", ")
        json.dump(rows, stream)
        w(": [")
        n = 0
        try:
            for row in reply[rows]:
                if n:
                    w(", ")
                if type(row.get("payload")) is bytes:  # ExportRows' raw payload
                    _write_record(w, stream, row, "payload")
                elif type(row.get("result")) is memoryview:  # Rows' stored result
                    _write_record(w, stream, row, "result")
                else:
                    json.dump(row, stream)
                n += 1
        except Exception as e:  # noqa: BLE001  (a record unreadable mid-reply: say so)
            w('], "truncated": ')
            json.dump(("%s: %s" % (type(e).__name__, e))[:80], stream)
            w("}\n")
            return
        w("]}\n")
    return write


def _write_record(w, stream, row, raw):
    """A row with one field as stored bytes, written 64 bytes at a time (never one str
    of it), the other fields by json.dump. raw "payload" (an export row): the record's
    bytes as a JSON string; it is the firmware's own compact JSON, so only its quotes and
    backslashes need escaping (json.dumps escaped every control character in it).
    raw "result" (a recall row): the stored result's JSON (a memoryview), as it is. A
    piece never ends inside a UTF-8 sequence."""
    w("{")
    for k in row:
        if k != raw:
            json.dump(k, stream)
            w(": ")
            json.dump(row[k], stream)
            w(", ")
    quote = raw == "payload"
    w('"payload": "' if quote else '"result": ')
    b = row[raw]
    mv = memoryview(b)
    i, n = 0, len(b)
    while i < n:
        j = i + 64
        if j >= n:
            j = n
        else:
            while j > i + 1 and b[j] & 0xC0 == 0x80:  # a UTF-8 continuation byte
                j -= 1
        if quote:
            w(str(mv[i:j], "utf-8").replace("\\", "\\\\").replace('"', '\\"'))
        else:
            w(str(mv[i:j], "utf-8"))
        i = j
    w('"}' if quote else "}")


def main(service=False):
    """The table's main loop on the USB serial port; it never returns. In production
    Ctrl-C is switched off so the port offers no REPL (pitboss.service, docs/security.md);
    in service mode (service=True) Ctrl-C stays on, so mpremote can break into the REPL
    to flash or verify, and a soft reset afterwards starts this loop again."""
    import sys

    import micropython

    if not service:
        micropython.kbd_intr(-1)  # again: main() may be called without /main.py
    hw = _board.get()
    try:
        a = app()
        if a.display is not None and not a.ctl.tilt.tilted:
            a.display.message("PITBOSS", ["READY", "REPLAYED %d" % a.boot["replayed"]])
    except Exception as e:  # noqa: BLE001
        a = _Down(repr(e)[:120])
    write = json_writer(sys.stdout)
    a.ctl.stream = True  # recall's rounds written as they are read (json_writer)
    gc.collect()
    threshold = getattr(gc, "threshold", None)  # MicroPython only
    if threshold is not None:
        every = getattr(hw, "gc_every", None)
        threshold(every() if every is not None else GC_EVERY)
    rom = sys.modules.get("pitboss_board")
    if rom is not None and getattr(hw, "EVENT_DRIVEN", False):
        # The virtual board behind its bridge: the VM cannot block on stdin, so the
        # bridge (bridge.mjs) calls one pass of the loop per burst of input instead.
        reader = LineReader()
        setattr(rom, "main_loop", lambda data: pump(a, reader, data, write))
        return
    # The watchdog starts only now: boot (integrity hashes, journal replay) may take
    # longer than its period. From here a pass that hangs resets the board, and the boot
    # replays the round from the journal (docs/journal.md).
    # In service mode Ctrl-C ends the loop into the REPL, where nothing feeds the
    # watchdog: the board must stop it first (boards/*.py watchdog_stop), or the chip
    # resets under the technician's mpremote session; a board that cannot stop its
    # watchdog runs service mode without one (an attended board).
    stop = getattr(hw, "watchdog_stop", None)
    wdt = None
    try:
        make = getattr(hw, "watchdog", None)
        if make is not None and (not service or stop is not None):
            wdt = make(WDT_MS)
    except Exception as e:  # noqa: BLE001  (a table without a watchdog still plays)
        write(_internal("watchdog", e))
    if wdt is not None:
        a.ctl.feed = wdt.feed  # long reads (recall) feed it as they go
    ring = None
    make = getattr(hw, "stdin", None)
    if make is not None:
        try:
            ring = make()
        except Exception as e:  # noqa: BLE001  (byte by byte still serves)
            write(_internal("stdin", e))
    try:
        while True:  # never exits: anything a pass raises is answered, the loop goes on
            try:
                serve(a, sys.stdin, write, wdt=wdt, buffer=ring)
            except Exception as e:  # noqa: BLE001
                try:
                    write(_internal("loop", e))
                except Exception:  # noqa: BLE001  (even the port failing must not end it)
                    pass
    except KeyboardInterrupt:  # service mode only: production switched Ctrl-C off
        if wdt is not None and stop is not None:
            stop()
        raise


def pump(a, reader, data, write):
    """One pass of the main loop over `data` (bytes that arrived): answer each complete
    line, then deal what the shoe delivered."""
    reader.extend(data, len(data), lambda line: _answer(a, line, write))
    _deal(a, write)
    _idle(a, write)  # the VM has no idle passes of its own: a little after each burst
    a.note_mem()
    # What the bridge compares to know whether this pass wrote to flash (an empty pass
    # that tilted: the shoe's resend timeout).
    c = a.ctl
    j = getattr(c, "journal", None)
    t = getattr(c, "tilt", None)
    return "%s/%s" % (j.last_seq if j is not None else 0, t.n if t is not None else 0)


def serve(a, stream, write, poll_ms=10, wdt=None, buffer=None):
    """Deal what the shoe sends and answer protocol lines from `stream` (the USB REPL's
    stdin on a board) until the stream ends. Bytes are read raw (stream.buffer where it
    has one), so no input can raise a decoding error here. Each pass feeds the watchdog,
    takes every byte waiting (up to _DRAIN_MAX, then the shoe is served and the next pass
    goes on at once), answers each complete line and deals the shoe's cards; a pass in
    which no input came does a little idle work (the journal's check after boot).
    buffer: (any, discard) where the board can see its input buffer (boards/pico.py
    stdin): waiting bytes are read in chunks, and the rest of a refused line is
    dropped from the buffer in bulk."""
    import select

    poller = select.poll()
    poller.register(stream, select.POLLIN)
    # ipoll and readinto allocate nothing per byte (MicroPython's ipoll reuses its tuple);
    # CPython has only poll.
    poll = getattr(poller, "ipoll", poller.poll)
    raw = getattr(stream, "buffer", stream)
    one = bytearray(1)
    reader = LineReader()
    wait = poll_ms
    waiting, skip = buffer if buffer is not None else (None, None)
    chunk = bytearray(_CHUNK) if waiting is not None else None

    def send(line):  # (a name the firmware has: qstrs are heap for good)
        _answer(a, line, write)
        a.note_mem()
        if wdt is not None:
            # After every line, not only every pass: a pass answers every line waiting
            # (up to _DRAIN_MAX bytes), and a burst of slow ones (a dozen `mem`, 0.7 s
            # each on a Pico) outlasted WDT_MS and reset the chip.
            wdt.feed()

    # What poll() names the input by: the object on MicroPython (ipoll), its fd on CPython.
    me = stream if hasattr(poller, "ipoll") else stream.fileno()
    # The shoe's UART is polled beside the input, so a card's frame ends the wait at once
    # instead of after poll_ms: where the board says its UART can be (SHOE_POLLABLE; a
    # stand-in object in select.poll crashed the WebAssembly VM).
    pollable = getattr(getattr(a, "hw", None), "SHOE_POLLABLE", False)
    seen = watched = None
    while True:
        if wdt is not None:
            wdt.feed()
        u = getattr(getattr(a, "shoe", None), "uart", None) if pollable else None
        if u is not seen:  # a new shoe (a reconfiguration) replaces the old one's UART
            seen = u
            watched = _watch(poller, watched, u)
        if _deal(a, write) and not _waiting(watched):
            # A card was acknowledged, and the shoe sends the next one only once it has
            # heard that (10 bytes) and then sent the frame (12): ~23 ms at 9600 baud.
            # A collection now falls in that gap. Left to gc.threshold it fell inside
            # a card's path about once a card: 17 ms of its 31 ms median on the emulated
            # Pico (issue 27; docs/bench.md, "A card's path").
            gc.collect()
        got = 0
        # Inside a refused line's rest the pass waits a little for the next USB packet
        # instead of ending: a pass (the shoe served, the watchdog fed) per 64-byte
        # packet was most of a junk megabyte's chip time.
        while got < _DRAIN_MAX and _ready(poll, me, wait if not got else
                                          (1 if reader.bad and skip is not None else 0)):
            if reader.bad and skip is not None:
                if skip():  # the refused line's rest, dropped where it lies
                    got += _SKIP_COST
                    continue
            # How many bytes wait (the board's count of its USB input, when it has one):
            # many are read with one readinto and their lines found in bulk.
            k = waiting() if waiting is not None else 0
            if k > 1:
                if k > _CHUNK:
                    k = _CHUNK
                raw.readinto(chunk, k)  # k are there: it cannot block
                got += k
                reader.extend(chunk, k, send)
                continue
            if not raw.readinto(one):
                return  # the host closed the line (a board's USB serial never does)
            got += 1
            line = reader.feed(one[0])
            if line is not None:
                send(line)
        if not got:
            _idle(a, write)
        wait = 0 if got >= _DRAIN_MAX else poll_ms


def _idle(a, write):
    try:
        a.idle()
    except Exception as e:  # noqa: BLE001
        write(_internal("idle", e))


def _ready(poll, me, ms):
    """Is the input (`me`: as poll() names it) readable within `ms`? The wait also ends
    when the shoe's UART has a byte (_watch): the pass that deals its card comes at
    once."""
    ready = False
    for got in poll(ms):
        if got[0] == me:  # (an object without __eq__ compares by identity)
            ready = True
    return ready


def _watch(poller, old, new):
    """Poll the shoe's UART beside the input (a new shoe after a reconfiguration
    replaces the old one's); returns what is polled. A UART that cannot be polled (a
    host stand-in without a fileno) is left out: the loop finds its bytes at the next
    pass, as before."""
    if old is not None:
        try:
            poller.unregister(old)
        except (OSError, ValueError, KeyError, TypeError):
            pass
    if new is not None:
        try:
            poller.register(new, 1)  # select.POLLIN
        except (OSError, ValueError, TypeError, AttributeError):
            return None
    return new


def _waiting(uart):
    """Bytes already waiting on the shoe's UART (a shoe that streams its frames): then
    the next card is not kept waiting for a collection."""
    if uart is None:
        return 0
    try:
        return uart.any()
    except (OSError, AttributeError):
        return 0
