# The shoes: a serial shoe (frames over a UART, each card acknowledged once journalled)
# and an RFID shoe (tags read through the MFRC522, mapped by the deck map), one poll()
# interface; the frame codec and the event codes are pitboss.hw.shoe.
import time

from pitboss.compat import const
from pitboss.hw.shoe import (ACK_LEN, EV_BAD_CRC, EV_COLLISION, EV_DUPLICATE, EV_MALFORMED,
                             EV_READ_ERROR, EV_READER_FAULT, EV_REPEAT, EV_UNKNOWN_TAG,
                             EV_UNRESENT, EV_WRONG_DECK, N_EVENTS, RESEND_MS,
                             FrameDecoder, encode_ack)
from pitboss.rules.cards import JOKER, name

_START = const(0x21)  # '!' (pitboss.hw.shoe: a frame's first byte)

# Bytes after those received when an acknowledgement goes out that may still be copies of
# the acknowledged frame: a copy already on the wire (up to a frame), and one the shoe's
# timer started while the acknowledgement travelled to it (10 bytes) or while the shoe
# took it in: three frames' worth, which arrive within _GRACE_MS at 9600 baud (37.5 ms);
# once the line has been quiet that long after the acknowledgement, the grace is over.
_GRACE = const(36)
_GRACE_MS = const(50)


def _ms():
    # The resend wait's default clock: time.ticks_ms on MicroPython, ms on CPython.
    f = getattr(time, "ticks_ms", None)
    return f() if f is not None else int(getattr(time, "monotonic")() * 1000)


def _since(then, now):
    d = getattr(time, "ticks_diff", None)  # the ticks counter wraps on MicroPython
    return d(now, then) if d is not None else now - then


class Shoe:
    """What every shoe shares: event counting, the alarm callback, the duplicate check."""

    def __init__(self, alarm):
        self.alarm = alarm
        self.counts = [0] * N_EVENTS  # events since start, by code
        self._seen = bytearray(JOKER + 1)  # cards dealt since reset()

    def _report(self, code, seq, info):
        self.counts[code] += 1
        if self.alarm is not None:
            self.alarm(code, seq, info)

    def _first(self, card):
        """True the first time a card is dealt since reset(); a second time is the
        caller's EV_DUPLICATE (a single deck holds each card once)."""
        if self._seen[card]:
            return False
        self._seen[card] = 1
        return True

    def reset(self):
        seen = self._seen
        for i in range(len(seen)):
            seen[i] = 0

    def ack(self, seq):
        """Tell the shoe a card is in (only a serial shoe has a line back)."""

    def resume(self, card, seq):
        """After a reboot: the last card the journal holds came from frame `seq`."""


class SerialShoe(Shoe):
    """A shoe that sends frames over a UART-like object: any() and readinto(buf, n).

    Reads go into one preallocated buffer; poll() consumes it a byte at a time and
    returns at the first card, so a burst of frames is dealt one card per call and a
    frame split across reads is simply finished by the next one."""

    def __init__(self, uart, alarm=None, bufsize=64, ticks=None):
        super().__init__(alarm)
        self.uart = uart
        self._buf = bytearray(bufsize)
        self._ackbuf = bytearray(ACK_LEN)
        self._write = getattr(uart, "write", None)  # a receive-only source has no line back
        self._pos = 0
        self._end = 0
        self._ticks = ticks or _ms  # injectable: the link model runs in simulated time
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
        try:
            self._write(encode_ack(seq & 0xFFFF, self._ackbuf))
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

    def resume(self, card, seq):
        """The journal's last card came from frame `seq`: a shoe that did not see its
        acknowledgement before a power cut sends it again, and that is a repeat."""
        dec = self.decoder
        dec.last_seq, dec.last_card = seq, card
        self._first(card)

    def poll(self):
        dec = self.decoder
        while True:
            if dec.ready:
                card, seq = dec.take()
                dec.intact = -1  # a card: acknowledged by the caller once it is journalled
                self._torn_at = None  # an intact frame came: the sequence tells the rest
                if self._first(card):
                    return (card, seq)
                self._report(EV_DUPLICATE, seq, card)
                self.ack(seq)
                continue
            if self._pos >= self._end and not self._fill():
                self._check_torn()
                return None
            buf = self._buf
            pos, end = self._pos, self._end
            push = dec.push
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


class RFIDShoe(Shoe):
    """Cards identified by RFID tag: reader.read_uid() -> bytes or None (pitboss.hw.mfrc522)
    and deckmap.lookup(uid) -> (card, deck) (pitboss.store.deckmap).

    seq is this shoe's own count of cards dealt (16 bits, wrapping), so the table sees
    the same (card, seq) as from a serial shoe. The first card after reset() decides the
    deck; a tag of another registered deck is an alarm, not a card."""

    def __init__(self, reader, deckmap, alarm=None):
        super().__init__(alarm)
        self.reader = reader
        self.deckmap = deckmap
        self.deck = -1
        self._seq = 0
        self._last = None

    def reset(self):
        super().reset()
        self.deck = -1
        self._last = None

    def poll(self):
        try:
            uid = self.reader.read_uid()
        except OSError as e:  # RFIDError is an OSError; so is a dead SPI bus
            kind = getattr(e, "kind", "")
            if kind == "collision":
                self._report(EV_COLLISION, -1, 0)
            elif kind and kind != "no_reader" and kind != "timeout":
                self._report(EV_READ_ERROR, -1, str(e))
            else:
                self._report(EV_READER_FAULT, -1, str(e))
            return None
        if uid is None:
            return None
        if uid == self._last:
            # The same tag again straight away: it left the field and came back (the
            # reader halts a tag after reading it, so one that stays is not re-read).
            self._report(EV_REPEAT, -1, _hex(uid))
            return None
        self._last = uid
        try:
            card, deck = self.deckmap.lookup(uid)
        except ValueError as e:
            # Only DeckError('unknown_uid') is an unknown tag; anything else is a bug and
            # must not be filed as a card problem. (Checked by code, so that a serial-shoe
            # table need not load pitboss.store.deckmap.)
            if getattr(e, "code", None) != "unknown_uid":
                raise
            self._report(EV_UNKNOWN_TAG, -1, str(e))
            return None
        if self.deck < 0:
            self.deck = deck
        elif deck != self.deck:
            self._report(EV_WRONG_DECK, -1, "%s is deck %d, dealing deck %d"
                         % (_hex(uid), deck, self.deck))
            return None
        if not self._first(card):
            self._report(EV_DUPLICATE, -1, "%s (%s) seen twice in this deck"
                         % (_hex(uid), name(card)))
            return None
        seq = self._seq
        self._seq = (seq + 1) & 0xFFFF
        return (card, seq)


def _hex(uid):
    return "".join("%02X" % b for b in uid)
