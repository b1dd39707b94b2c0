# The table's main loop on the USB serial port: protocol lines in (refused whole when
# not printable ASCII or too long), replies out as JSON streamed into the port, the
# shoe's cards dealt and acknowledged between lines, the watchdog fed; it never exits.
# (The replies' writing is pitboss.replies.)
# Every board runs main() from /main.py, in production and in service mode. The virtual
# board's VM cannot block on stdin, so its bridge calls one pass of the same loop per
# burst of input (pump).
import gc

from pitboss import app as _wiring
from pitboss.compat import alloc_since, const
from pitboss.hw import board as _board
# (LineReader is the loop's: the tests and the floor's simulated tables take it from here)
from pitboss.linereader import LINE_MAX as _LINE_MAX, LineReader
from pitboss.replies import json_writer  # (also what hostapi and the host tools use)

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
# A collection whenever this many bytes were allocated since the last one (MicroPython
# otherwise collects only when the heap is full, so the garbage of replies and parsed
# lines would take the free heap down to nothing between collections). How 2 KB was
# chosen against the lowest free heap of the Pico's sessions: docs/bench.md, "The
# collector's threshold". A board may set its own (boards/pico.py gc_every(): 8 KB on
# the pitboss image, whose code is in ROMFS); the loop also collects after a dealt card
# (serve, _card_due).
GC_EVERY = 2048
# Watchdog: the longest a pass may take before the board resets. The RP2040's maximum is
# 8.3 s; ESP32's has no such limit but the same value keeps the boards alike.
WDT_MS = 8000
# The longest a pass waits for input when nothing is due (App.idle: no idle work left,
# no shoe timer running), well within the watchdog's period: the wait ends at the first
# byte on the USB line or the shoe's UART.
_QUIET_MS = const(500)


_REFUSED = {"ok": False, "error": {
    "code": "bad_format",
    "message": "line refused: not printable ASCII, or longer than %d bytes" % _LINE_MAX}}


def _internal(where, e):
    return {"ok": False, "error": {"code": "internal",
                                   "message": ("%s: %r" % (where, e))[:80]}}


# Bytes allocated after which a line's reply waits for a collection: half the collector's
# threshold where the port counts them (alloc_since: the pitboss image), set by serve().
_gap = 0


def _answer(a, line, write):
    if line is False:
        write(_REFUSED)
        return
    # Where the loop collects itself (the pitboss image: alloc_since), the collector's
    # threshold is raised to _LINE_GC while the line runs and the line's garbage is
    # collected once, around its reply: a six-seat Pai Gow settlement left to the
    # threshold collected three or four times (~18 ms each on a Pico; issue 27). Not off:
    # with no threshold, `recall 20`'s garbage (records parsed to be rewritten) took the
    # free heap from 193 KB to 12.7 KB before the heap's filling collected it.
    every = _pause()
    try:
        try:
            reply = a.ctl.command(line)
        except Exception as e:  # noqa: BLE001  (the loop must outlive any handler's bug)
            reply = _internal("command", e)
        dealing = getattr(a.ctl, "dealing", _no)()
        if dealing and _due():
            # Before the reply when the shoe's cards come next (a `deal` line): the shoe
            # deals once it has the reply, so the collection is never inside the first
            # card's path. Left to gc.threshold, the garbage of a round's wagers and deal
            # was collected inside its first card's (16-25 ms, the round's slowest card
            # on the emulated Pico); collected after the reply, the first frame overlapped
            # it.
            gc.collect()
        write(reply)
        # Asked once the reply is written: a streamed reply (`export`, `recall`) makes
        # its garbage as its rows are read and written. Asked before, a Pai Gow export
        # batch left ~21 KB of it for the low-water mark taken after the line (the full
        # budget session's lowest free heap, 152,720 B, was such a moment; issue 27).
        reply = None  # (its rows' readers and buffers go with this collection)
        redraw = getattr(a.ctl, "redraw", None)  # (a table that could not start has none)
        if redraw is not None:
            redraw()  # what the line changed, once its reply is out (draw_after_reply)
        if not dealing and _due():
            # Otherwise after the reply and the redraw: the host has its answer without
            # waiting for a collection (~12 ms on the release image), and the collection
            # takes the redraw's garbage too. Its time is not saved, only moved: a line
            # sent at once waits for it. (Never while dealing: the next card's frame may
            # already be on the wire.)
            gc.collect()
    finally:
        if every is not None:
            gc.threshold(every)  # pyright: ignore[reportAttributeAccessIssue]


# The collector's threshold while a line runs (_pause): over the garbage of the largest
# ordinary line (a six-seat Pai Gow settlement, under 14 KB: tests/vm/
# test_settle_alloc_vm.py), so such a line is collected once, after its reply; a line
# that makes more (recall, export) is collected every 24 KB, and the free heap stays
# within that of its live figure.
_LINE_GC = const(24576)


def _due():
    """Has half the collector's threshold been allocated since its last collection (where
    the port counts it: alloc_since)?"""
    n = alloc_since()  # (None where the port does not count them cheaply)
    return n is not None and 0 < _gap <= n


def _pause():
    """Raise the collector's threshold to _LINE_GC, returning the one to restore; None (nothing
    done) where the loop does not collect by itself (alloc_since() None: a stock image,
    whose heap needs its threshold; CPython)."""
    th = getattr(gc, "threshold", None)
    if th is None or _gap <= 0 or alloc_since() is None:
        return None
    every = th()
    if every < 0:
        return None
    th(_LINE_GC)
    return every


def _no():
    return False


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


def _where(e):
    """' at File "...", line N, in f': where e was raised (the traceback's innermost
    frame), so a table that could not start says where, not only what. '' if it cannot
    be told (CPython has no sys.print_exception; the heap may be short right after a
    MemoryError: the failed App is garbage by then, but this must not raise)."""
    try:
        import io
        import sys

        gc.collect()
        out = io.StringIO()
        sys.print_exception(e, out)  # pyright: ignore  (the stubs' stream type)
        last = ""
        for ln in out.getvalue().split("\n"):  # pyright: ignore[reportAttributeAccessIssue]
            if ln.strip().startswith("File"):
                last = ln.strip()
        return (" at " + last[:120]) if last else ""
    except Exception:  # noqa: BLE001
        return ""


class _Down:
    """A table that could not start (its App raised): the loop still owns the port and
    answers every line with the reason, rather than ending main.py into the REPL."""

    def __init__(self, why):
        self.ctl = self
        self.why = why
        self.stream = True  # what main() sets on a Controller
        self.draw_after_reply = True
        self.save_when_idle = True
        self.feed = None

    def poll(self):
        return []

    def note_mem(self):
        pass

    def idle(self):
        pass

    def command(self, line):
        return {"ok": False, "error": {"code": "boot_failed", "message": self.why}}


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
        a = _wiring.app()
        if a.display is not None and not a.ctl.tilt.tilted:
            a.display.message("PITBOSS", ["READY", "REPLAYED %d" % a.boot["replayed"]])
    except Exception as e:  # noqa: BLE001
        a = _Down(repr(e)[:120] + _where(e))
    write = json_writer(sys.stdout, getattr(a.ctl, "reply_text", None))
    a.ctl.stream = True  # recall's rounds written as they are read (json_writer)
    a.ctl.draw_after_reply = True  # _answer redraws once the reply is written
    a.ctl.save_when_idle = True  # a settlement's meters saved by the next idle pass
    if isinstance(a, _Down):
        # (A built App collected at the end of its boot: a second collection here was
        # ~8 ms of the first line's time on the emulated Pico, for the few hundred
        # bytes of the display's READY message.)
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
    muted = False  # the shoe's UART left out of the poll until a frame's rest is in
    dealt_first = False
    global _gap
    t = getattr(gc, "threshold", int)()  # MicroPython's, set by main(); CPython: 0
    _gap = t // 2 if t > 0 else 0
    while True:
        if wdt is not None:
            wdt.feed()
        shoe = getattr(a, "shoe", None) if pollable else None
        u = getattr(shoe, "uart", None)
        if u is not seen:  # a new shoe (a reconfiguration) replaces the old one's UART
            seen = u
            watched = _watch(poller, watched, u)
        if _deal(a, write) and not _waiting(watched) and _card_due():
            # A card was acknowledged, and the shoe sends the next one only once it has
            # heard that (10 bytes) and then sent the frame (12): ~23 ms at 9600 baud.
            # A collection now falls in that gap. Left to gc.threshold it fell inside
            # a card's path about once a card: 17 ms of its 31 ms median on the emulated
            # Pico (issue 27; docs/bench.md, "A card's path").
            gc.collect()
        if watched is not None and shoe is not None and wait:
            rest = shoe.rest_ms()
            if rest:
                # A frame part-way in: its bytes come ~1 ms apart at 9600 baud, and
                # each woke a pass (~0.7 ms of a Pico's chip time, some 8 ms a card:
                # issue 27). The UART is left out of the poll until the byte before
                # its last is due; a line on the USB still ends the wait at once.
                poller.modify(watched, 0)
                muted = True
                if rest < wait:
                    wait = rest
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
        if muted:  # the frame's last byte is due (or a line came): the UART wakes it again
            poller.modify(watched, 1)  # select.POLLIN
            muted = False
        if got:
            wait = 0 if got >= _DRAIN_MAX else poll_ms
            continue
        if not dealt_first and _waiting(watched):
            # The shoe's bytes woke the wait: they are dealt before any idle work (once:
            # bytes the shoe does not take, while a deck is registered, cannot starve it).
            dealt_first = True
            continue
        dealt_first = False
        wait = _idle(a, write)
        if wait is None or (wait and not pollable):
            wait = poll_ms  # a shoe asked every pass, or one whose bytes wake no poll
        elif wait > _QUIET_MS:
            # Nothing happens until a byte comes on either line, and both are polled
            # (or a shoe's timer is due): not a pass every poll_ms (an idle pass is
            # ~0.7 ms of a Pico's chip time; issue 27). 0: idle work left, at once.
            wait = _QUIET_MS


def _card_due():
    """Collect after this card? Where the port counts the bytes allocated since the last
    collection (the pitboss image), once half the threshold was: a card's path leaves
    well under that (no frames on the heap), so a collection every few cards still keeps
    the threshold's from ever falling inside one, and a six-seat Pai Gow round's 49
    collections (~10 ms each on the release image) become a handful. Elsewhere (a stock
    image, CPython) after every card, as the garbage cannot be counted cheaply there."""
    n = alloc_since()
    return n is None or _gap <= 0 or n >= _gap


def _idle(a, write):
    """One idle pass's work; how long the next pass may wait for input (App.idle: ms,
    0 at once, None the loop's own short wait)."""
    try:
        return a.idle()
    except Exception as e:  # noqa: BLE001
        write(_internal("idle", e))
        return None


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
