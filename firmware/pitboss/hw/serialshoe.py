# The serial shoe: pitboss shoe frames (pitboss.hw.shoe) read from a UART, each
# intact frame acknowledged on its TX line so the shoe resends what the chip missed
# (docs/shoe-protocol.md); ByteSource, the UART stand-in of the simulated shoe and of
# transcripts. The interface and the event codes are pitboss.hw.shoe's.
import time

from pitboss.compat import const
from pitboss.hw.shoe import EV_BAD_CRC, EV_DUPLICATE, EV_MALFORMED, EV_UNRESENT, Shoe
from pitboss.hw.shoe import ACK_LEN, FrameDecoder, encode_ack


def _ms():
    # The resend wait's default clock: ms on CPython (SerialShoe uses time.ticks_ms itself
    # where there is one: no Python call on an acknowledgement's path, issue 27).
    return int(getattr(time, "monotonic")() * 1000)


def _since(then, now):
    d = getattr(time, "ticks_diff", None)  # the ticks counter wraps on MicroPython
    return d(now, then) if d is not None else now - then


# A frame's first byte, '!' (pitboss.hw.shoe's): a const() named with an underscore
# cannot be imported on MicroPython, and poll() compares every byte with it.
_START = const(0x21)
# How long a torn frame may wait for an intact frame (its resend, or any later frame)
# before its card counts as lost. The acknowledging shoe resends every 100 ms; a flash
# erase with interrupts off (up to 400 ms) can drop one resend whole and tear the next,
# and each torn copy restarts the wait.
RESEND_MS = const(1000)
# Bytes after those received when an acknowledgement goes out that may still be copies of
# the acknowledged frame: a copy already on the wire (up to a frame), and one the shoe's
# timer started while the acknowledgement travelled to it (10 bytes) or while the shoe
# took it in: three frames' worth, which arrive within _GRACE_MS at 9600 baud (37.5 ms);
# once the line has been quiet that long after the acknowledgement, the grace is over.
_GRACE = const(36)
_GRACE_MS = const(50)
# wait_ms() with no timer running: the shoe needs no pass until a byte comes.
_IDLE_MS = const(1000)
# A frame's last bytes that poll() waits for itself (_last_bytes) rather than leave them to
# wake the main loop: a PL011, the RP2040's UART, raises no receive interrupt for fewer
# bytes than its FIFO's trigger level (MicroPython sets 4) until 32 bit periods after the
# last one came (RP2040 datasheet 4.2.6): 3.3 ms at 9600 baud, which a card's last byte
# waited on a Pico asleep in its poll (issue 27; host_tools/emu/pico/uart.mjs, fix 6).
_SPIN = const(2)


class SerialShoe(Shoe):
    """A shoe that sends frames over a UART-like object: any() and readinto(buf, n).

    Reads go into one preallocated buffer; poll() consumes it a byte at a time and
    returns at the first card, so a burst of frames is dealt one card per call and a
    frame split across reads is simply finished by the next one."""

    def __init__(self, uart, alarm=None, bufsize=64, ticks=None, baud=9600, ticks_us=None):
        super().__init__(alarm)
        self.uart = uart
        self._byte_us = 10000000 // baud  # a byte's time on the line, 8N1 (rest_ms)
        self._buf = bytearray(bufsize)
        self._ackbuf = bytearray(ACK_LEN)
        self._ack_seq = -1  # the frame whose acknowledgement _ackbuf holds
        self._write = getattr(uart, "write", None)  # a receive-only source has no line back
        self._pos = 0
        self._end = 0
        # injectable: the link model runs in simulated time
        self._ticks = ticks or getattr(time, "ticks_ms", None) or _ms
        # The clock _last_bytes() waits by: time.ticks_us on MicroPython, unless the board
        # runs the shoe in a time of its own (ticks): then, as on CPython, it never waits.
        self._us = ticks_us if ticks_us is not None else (
            getattr(time, "ticks_us", None) if ticks is None else None)
        # _last_bytes() waited in vain since the last byte came (a shoe that stopped
        # mid-frame): it does not wait again, at every pass of the loop, until one comes.
        self._waited = False
        # Torn frames (docs/shoe-protocol.md, "Transport errors and misdeals"): when the
        # last torn frame that may hold an unacknowledged card was seen (None: none
        # waiting). Bytes that were already received when an acknowledgement went out,
        # and the _GRACE bytes after them, can only be copies of frames up to the
        # acknowledged one, since the shoe sends the next frame only after it hears that
        # acknowledgement: a torn frame that starts among them never needs a resend.
        # _pre counts those bytes down (received ones + _GRACE).
        self._torn_at = None
        self._pre = 0
        self._old = False  # the frame being decoded started among those bytes
        self._strict = False  # ...among the bytes received before the acknowledgement
        self._ack_at = 0
        # A shoe that does not wait for acknowledgements (an older streaming shoe) sends
        # new cards among those bytes: then a torn frame there may hold a card too.
        self.streams = False
        self.decoder = FrameDecoder(self._report)
        self._push = self.decoder.push  # (next_card: a bound method made once, not a card)

    def _report(self, code, seq, info):
        if (code == EV_MALFORMED or code == EV_BAD_CRC) and (self.streams or not self._old):
            self._torn_at = self._ticks()  # each torn copy restarts the wait
        Shoe._report(self, code, seq, info)

    def reset(self):
        # A new shuffle forgets the cards, never the sequence: the shoe numbers its frames
        # across rounds, so a lost first frame of a round shows as a gap (or a stale
        # frame) instead of the next card silently becoming card 1.
        super().reset()

    def ack(self, seq):
        """Acknowledge frame `seq` on the UART's TX line. The caller (pitboss.app) does it
        for a card once the controller has journalled it, so an acknowledged card is on
        flash; every other intact frame (a repeat, a refused card) poll() acknowledges
        itself. A failing TX line is not an error here: the shoe sends again."""
        if self._write is None:
            return
        seq &= 0xFFFF
        buf = self._ackbuf
        if seq != self._ack_seq:
            encode_ack(seq, buf)
        try:
            self._write(buf)
        except OSError:
            pass
        # Everything received so far was sent before the shoe could hear this, and so
        # may be what is on the wire now (_GRACE).
        try:
            waiting = self.uart.any()
        except OSError:
            waiting = 0
        self._pre = self._end - self._pos + waiting + _GRACE
        self._ack_at = self._ticks()
        # The next frame's acknowledgement, made now that this one is out: a card's path
        # then only writes it (encode_ack was ~0.2 ms of a Pico's card, issue 27).
        seq = (seq + 1) & 0xFFFF
        encode_ack(seq, buf)
        self._ack_seq = seq

    def rest_ms(self):
        """A frame part-way in, nothing buffered: the milliseconds until its last byte
        is due. Its bytes come ~1 ms apart at 9600 baud, and a pass of the main loop
        woken by each took ~0.7 ms of a Pico's chip time: some 8 ms a card (issue 27)."""
        if self._pos < self._end:
            return 0
        n = self.decoder.left()
        if n > 1:
            try:
                n -= self.uart.any()  # (received, not yet read)
            except OSError:
                return 0
        # Up to where it lacks only its last _SPIN bytes, rounded down: poll() waits for
        # those itself (_last_bytes), so the card is not kept waiting for a rounded-up
        # timer, nor for a PL011's receive timeout. (Without a clock to wait by, up to
        # the byte before its last, which wakes the loop.)
        k = _SPIN if self._us is not None else 1
        return (n - k) * self._byte_us // 1000 if n > k else 0

    def wait_ms(self):
        """Until the UART has a byte, poll() has only its timers to do: a torn frame
        waiting out RESEND_MS, an acknowledgement's _GRACE_MS. The milliseconds until
        the first of them is due (_IDLE_MS when none runs, 0 with bytes buffered): the
        main loop waits on the UART that long instead of passing every few ms, between
        a round's frames too (issue 27)."""
        if self._pos < self._end:
            return 0
        w = _IDLE_MS
        if self._pre:
            w = _GRACE_MS - _since(self._ack_at, self._ticks())
        t = self._torn_at
        if t is not None:
            r = RESEND_MS - _since(t, self._ticks())
            if r < w:
                w = r
        return w if w > 0 else 1

    def resume(self, card, seq):
        """The journal's last card came from frame `seq`: a shoe that did not see its
        acknowledgement before a power cut sends it again, and that is a repeat."""
        dec = self.decoder
        dec.last_seq, dec.last_card = seq, card
        self._first(card)

    def next_card(self):
        dec = self.decoder
        while True:
            if dec.ready:
                # (take()'s fields read here: its tuple is a heap object on every card)
                card = dec.card
                seq = dec.seq
                dec.ready = False
                dec.intact = -1  # a card: acknowledged by the caller once it is journalled
                self._torn_at = None  # an intact frame came: the sequence tells the rest
                seen = self._seen  # Shoe._first(card), written out (a call less a card)
                if not seen[card]:
                    seen[card] = 1
                    return card | seq << 6
                self._report(EV_DUPLICATE, seq, card)
                self.ack(seq)
                continue
            if self._pos >= self._end and not self._fill() and not self._last_bytes():
                self._check_torn()
                return -1
            buf = self._buf
            pos, end = self._pos, self._end
            push = self._push  # dec.push (a bound method is a heap object)
            pre = self._pre
            try:
                while pos < end:
                    b = buf[pos]
                    pos += 1
                    old = pre > 0
                    strict = pre > _GRACE  # received before the acknowledgement went out
                    if old:
                        pre -= 1
                    got = push(b)
                    if b == _START:  # after push: a frame it cut short was the old one
                        self._old = old
                        self._strict = strict
                    if got:
                        if self._strict:  # a new card the shoe sent before our ack
                            self.streams = True
                        break
                    if dec.intact >= 0:  # an intact frame that is no card: a repeat...
                        self._torn_at = None
                        self._pos = pos
                        self.ack(dec.intact)  # (sets _pre: the bytes left are pre-ack)
                        pre = self._pre
                        dec.intact = -1
            finally:
                # Also when an alarm callback raised: those bytes are parsed, never twice.
                self._pos = pos
                self._pre = pre

    def _last_bytes(self):
        """A frame part-way in that lacks only its last _SPIN bytes: wait for them here
        (as long as they take on the line, and half a byte more) and read them: True
        once read. False at once where there is no frame part-way in, or no clock to
        wait by, and once the time is up (a torn frame: the resend timer tells)."""
        us = self._us
        if us is None or self._waited:
            return False
        n = self.decoder.left()
        if n == 0 or n > _SPIN:
            return False
        limit = (2 * n + 1) * self._byte_us // 2
        t0 = us()
        uart = self.uart
        while not uart.any():
            if _since(t0, us()) > limit:
                self._waited = True
                return False
        return self._fill()

    def _check_torn(self):
        # The line is quiet. Copies still on the wire when the last acknowledgement went
        # out have arrived by _GRACE_MS after it: what comes next is new.
        if 0 < self._pre <= _GRACE and _since(self._ack_at, self._ticks()) >= _GRACE_MS:
            self._pre = 0
        # A torn frame that may have held a card and was followed by
        # nothing intact for RESEND_MS was not resent (a shoe that does not retransmit, or
        # one that gave up): its card is lost, a misdeal.
        t = self._torn_at
        if t is not None:
            waited = _since(t, self._ticks())
            if waited >= RESEND_MS:
                self._torn_at = None
                self._report(EV_UNRESENT, -1, waited)

    def _fill(self):
        n = self.uart.any()
        if not n:
            return False
        # any() may say 1 when more is waiting (allowed by the machine.UART docs); never
        # ask for more than it promised, so readinto cannot block on a UART timeout.
        n = self.uart.readinto(self._buf, min(n, len(self._buf)))
        if not n:
            return False
        self._pos, self._end = 0, n
        self._waited = False
        return True


class ByteSource:
    """A UART stand-in over bytes already in memory: the simulated shoe, and transcripts.
    feed() appends more (the simulator deals as the round goes)."""

    def __init__(self, data=b""):
        self._data = bytearray(data)
        self._pos = 0
        self.tx = bytearray()  # what the controller sent back (acknowledgements)

    def feed(self, data):
        if self._pos:  # drop what has been read so the buffer does not grow forever
            self._data = self._data[self._pos:]
            self._pos = 0
        self._data.extend(data)

    def any(self):
        return len(self._data) - self._pos

    def write(self, data):
        self.tx.extend(data)
        return len(data)

    def readinto(self, buf, nbytes=-1):
        n = len(buf) if nbytes < 0 else min(nbytes, len(buf))
        n = min(n, len(self._data) - self._pos)
        if n <= 0:
            return None  # as machine.UART: nothing to read is None, not 0
        p = self._pos
        buf[:n] = self._data[p:p + n]
        self._pos = p + n
        return n


def simulated(data=b"", alarm=None):
    """The simulated shoe: the same SerialShoe and frame parser, fed from memory."""
    return SerialShoe(ByteSource(data), alarm)
