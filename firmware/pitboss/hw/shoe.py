# Shoes: where the cards come from. One interface for every kind of shoe:
#
#     shoe.poll() -> (card_id, seq) or None     never blocks, never raises for bad input
#     shoe.next_card() -> card_id | seq << 6    the same, -1 for none: no tuple (the App)
#     shoe.alarm(code, seq, info)               called for every event below
#     shoe.reset()                              a new shuffle: forget the cards seen (the
#                                               frame sequence runs on across rounds)
#
# pitboss.hw.serialshoe reads pitboss shoe frames from a UART (pitboss.hw.shoe, the
# codec the host tools share; docs/shoe-protocol.md); the simulated shoe is a SerialShoe on
# a ByteSource, so simulated cards go through the same parser as real ones.
# pitboss.hw.rfidshoe gives the same interface for a reader plus a deck map
# (pitboss.store.deckmap). This module is what they share: the event codes, their names
# and the base class; a table loads only the shoe it has.
#
# Bad frames are reported through `alarm` with a code, never an exception: the main loop
# must outlive line noise, a flaky shoe and a fumbled card.
from pitboss.rules.cards import JOKER
from pitboss.compat import const


# Event codes, passed to alarm(code, seq, info). seq is -1 where no trustworthy sequence
# number exists; info is an int (or the tag UID in hex, for RFID events).
EV_GARBAGE = const(1)  # bytes outside any frame were skipped; info = how many
EV_MALFORMED = const(2)  # a frame with a wrong length or a non-hex character; dropped
EV_BAD_CRC = const(3)  # a frame whose CRC-16 does not match; dropped, seq not trusted
EV_BAD_CARD = const(4)  # intact frame, card id > 52; info = the id; card not dealt
EV_DROPPED = const(5)  # sequence gap; info = frames missing before seq; the card is dealt
EV_REPEAT = const(6)  # same seq and card again (a retransmission); ignored
EV_CONFLICT = const(7)  # same seq, different card; info = the new card; ignored
EV_STALE = const(8)  # seq older than the last one (not a restart); info = card; ignored
EV_RESTART = const(9)  # seq 0 out of turn: the shoe restarted; info = the last seq
EV_DUPLICATE = const(10)  # a card already dealt since reset(); info = card or tag; ignored
EV_UNKNOWN_TAG = const(11)  # RFID: tag not in the deck map; info = UID hex
EV_WRONG_DECK = const(12)  # RFID: tag from another registered deck; info = UID hex
EV_COLLISION = const(13)  # RFID: two tags in the field at once; info = 0
EV_READ_ERROR = const(14)  # RFID: CRC, check byte or protocol error; info = the message
EV_READER_FAULT = const(15)  # RFID: the reader chip does not answer; info = the message
EV_UNRESENT = const(16)  # a torn frame no intact frame followed within RESEND_MS; info = ms
N_EVENTS = const(17)

NAMES = ("", "garbage", "malformed", "bad_crc", "bad_card", "dropped", "repeat",
         "conflict", "stale", "restart", "duplicate", "unknown_tag", "wrong_deck",
         "collision", "read_error", "reader_fault", "unresent")
# Notices are harmless on their own (noise between frames, a retransmission, a restart
# between rounds, and a torn frame: a transport error the shoe repairs by sending the
# frame again, since a torn frame is never acknowledged); everything else means a card
# may be missing or wrong. A torn frame that nothing intact follows within RESEND_MS is
# `unresent`, an alarm (docs/shoe-protocol.md, "Transport errors and misdeals").
_NOTICES = const((1 << EV_GARBAGE) | (1 << EV_REPEAT) | (1 << EV_RESTART)
                 | (1 << EV_MALFORMED) | (1 << EV_BAD_CRC))


def is_alarm(code):
    return not (_NOTICES >> code) & 1


def describe(code, seq, info):
    """One line for a log or the display, e.g. 'dropped: 2 frame(s) missing before seq
    17'."""
    what = NAMES[code] if 0 < code < N_EVENTS else "event %d" % code
    if code == EV_GARBAGE:
        return "%s: %d byte(s) skipped" % (what, info)
    if code == EV_DROPPED:
        return "%s: %d frame(s) missing before seq %d" % (what, info, seq)
    if code == EV_RESTART:
        return "%s: seq 0 after seq %d" % (what, info)
    if code == EV_UNRESENT:
        return "%s: a torn frame, nothing intact within %d ms" % (what, info)
    if seq >= 0:
        return "%s: seq %d, %s" % (what, seq, info)
    return "%s: %s" % (what, info)


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

    def poll(self):
        """(card id, frame count) of the next card, or None: never blocks, never raises
        for bad input. From each shoe's own next_card(): the same without the tuple, a
        heap object on every card (the App's path, issue 27), as card id | frame count
        << 6 (the count is 16 bits), -1 for none."""
        got = self.next_card()  # pyright: ignore[reportAttributeAccessIssue]
        return None if got < 0 else (got & 63, got >> 6)

    def ack(self, seq):
        """Tell the shoe a card is in (only a serial shoe has a line back)."""

    def rest_ms(self):
        """Milliseconds until the frame being received is whole (0: none is part-way
        in): the main loop need not be woken by its bytes one at a time."""
        return 0

    def wait_ms(self):
        """How long the main loop may leave poll() uncalled while no byte comes: None
        for a shoe that must be asked every pass (a reader scanning for tags: the loop
        keeps its short pass), else the milliseconds until a timer of its own is due."""
        return None

    def resume(self, card, seq):
        """After a reboot: the last card the journal holds came from frame `seq`."""


# ---- the frame codec ---------------------------------------------------------------
# The shoe's frame codec (docs/shoe-protocol.md), shared with the host tools (the
# simulated shoe, the link model): a card's frame and its acknowledgement, CRC-16, and the
# byte-at-a-time decoder the serial shoe (pitboss.hw.serialshoe) runs:
# 
# ! C C S S S S K K K K \n      card id, sequence number, CRC-16 as uppercase hex
# 
# ASCII on purpose: '!' never occurs inside a frame, so after line noise the decoder is
# back in step at the next '!' without scanning inside bad frames, and a frame can be
# typed at a terminal or pasted into a bench log.
_START = const(0x21)  # '!'
_LF = const(0x0A)
_CR = const(0x0D)
_DIGITS = const(10)  # hex digits in a frame: 2 card + 4 seq + 4 crc
FRAME_LEN = const(12)  # with '!' and the terminator
_GARBAGE_REPORT = const(64)  # a long garbage run (wrong baud rate) is reported in chunks
_CRC_POLY = const(0x1021)
_CRC_INIT = const(0xFFFF)


def crc16(data, crc=_CRC_INIT):
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, MSB first, no final xor.
    crc16(b'123456789') == 0x29B1 (the catalogue check value)."""
    for b in data:
        crc = _crc_byte(crc, b)
    return crc


# CRC-16/CCITT-FALSE's table for 4 bits at a time: a byte is two lookups instead of
# eight shifts of bytecode (a card's frame and its acknowledgement are 5 bytes of CRC,
# ~0.2 ms of a Pico's bytecode bit by bit: issue 27's card budget).
_T16 = (0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50A5, 0x60C6, 0x70E7,
        0x8108, 0x9129, 0xA14A, 0xB16B, 0xC18C, 0xD1AD, 0xE1CE, 0xF1EF)


def _crc_byte(crc, b):
    t = _T16
    crc = ((crc << 4) & 0xFFFF) ^ t[(crc >> 12) ^ (b >> 4)]
    return ((crc << 4) & 0xFFFF) ^ t[(crc >> 12) ^ (b & 15)]


def encode(card, seq, strict=True):
    """The 12-byte frame for one card. strict=False lets tests and the simulator send
    card ids a shoe must not (53..255) to exercise the bad-card path."""
    if not isinstance(card, int) or not 0 <= card <= (JOKER if strict else 255):
        raise ValueError("shoe frame: card id %r out of range 0..%d"
                         % (card, JOKER if strict else 255))
    if not isinstance(seq, int) or not 0 <= seq <= 0xFFFF:
        raise ValueError("shoe frame: sequence number %r out of range 0..65535" % (seq,))
    # The CRC covers the values, not their hex text: [card, seq high, seq low]
    # (FrameDecoder._frame has the same steps written out).
    crc = _crc_byte(_crc_byte(_crc_byte(_CRC_INIT, card), seq >> 8), seq & 0xFF)
    return b"!%02X%04X%04X\n" % (card, seq, crc)


# The acknowledgement the controller sends back on the UART's TX line for every intact
# frame (docs/shoe-protocol.md, "Acknowledgement"): `+ SSSS KKKK LF`, the frame's sequence
# number and the CRC-16 of [seq >> 8, seq & 0xFF]. The shoe sends one frame at a time and
# retransmits it until this arrives, so a frame lost while the chip cannot read its UART
# (a flash erase runs with interrupts off) is sent again, and the repeat is suppressed by
# its sequence number.
_ACK = const(0x2B)  # '+'
ACK_LEN = const(10)
_HEX = b"0123456789ABCDEF"


def ack_crc(seq):
    # (Not on a card's path: SerialShoe.ack makes the next acknowledgement ahead.)
    return _crc_byte(_crc_byte(_CRC_INIT, seq >> 8), seq & 0xFF)


def encode_ack(seq, buf=None):
    """The 10-byte acknowledgement of frame `seq`, written into `buf` (a bytearray of
    ACK_LEN, reused: nothing is allocated per card) or a new one."""
    if buf is None:
        buf = bytearray(ACK_LEN)
    crc = ack_crc(seq)
    buf[0] = _ACK
    for i in range(4):
        buf[1 + i] = _HEX[(seq >> (12 - 4 * i)) & 15]
        buf[5 + i] = _HEX[(crc >> (12 - 4 * i)) & 15]
    buf[9] = _LF
    return buf


def _hexval(b):
    if 0x30 <= b <= 0x39:
        return b - 0x30
    b |= 0x20  # 'A'-'F' -> 'a'-'f'; lowercase is accepted for frames typed by hand
    if 0x61 <= b <= 0x66:
        return b - 0x57
    return -1


# Decoder states (besides 0.._DIGITS = hex digits received in the current frame).
_IDLE = const(-1)  # between frames
_SKIP = const(-2)  # inside a frame already reported as malformed: wait for its end


class FrameDecoder:
    """Byte-at-a-time frame parser and sequence checker; allocates nothing per byte.

    push(b) returns True when a card is ready in .card/.seq (take() fetches it). Events
    go to report(code, seq, info). Decoder state is updated before report is called, so
    an exception raised by report loses nothing: a ready card stays ready."""

    def __init__(self, report):
        self._report = report
        self._state = _IDLE
        self._garbage = 0
        self._card = 0
        self._seq = 0
        self._crc = 0
        self.last_seq = -1  # -1: no frame yet, any sequence number is accepted
        self.last_card = -1
        self.intact = -1  # seq of the last frame whose CRC held, until it is acknowledged
        self.ready = False
        self.card = -1
        self.seq = -1

    def reset(self):
        """Forget the sequence history (the next frame starts a new sequence)."""
        self.last_seq = -1
        self.last_card = -1

    def take(self):
        self.ready = False
        return (self.card, self.seq)

    def left(self):
        """Bytes until the frame being received ends (its digits and LF), 0 between
        frames."""
        st = self._state
        return _DIGITS + 1 - st if st >= 0 else 0

    def push(self, b):
        st = self._state
        if st >= 0:
            if b == _LF or b == _CR:  # first: a card's last byte, no _hexval call for it
                self._state = _IDLE
                if st == _DIGITS:
                    return self._frame()
                self._report(EV_MALFORMED, -1, "frame ended after %d hex digit(s)" % st)
                return False
            v = _hexval(b)
            if v >= 0 and st < _DIGITS:
                if st < 2:
                    self._card = (self._card << 4) | v
                elif st < 6:
                    self._seq = (self._seq << 4) | v
                else:
                    self._crc = (self._crc << 4) | v
                self._state = st + 1
                return False
            if b == _START:  # a new frame cuts this one short
                self._begin()
                self._report(EV_MALFORMED, -1, "frame cut after %d hex digit(s)" % st)
                return False
            self._state = _SKIP
            if v >= 0:
                self._report(EV_MALFORMED, -1, "frame longer than %d hex digits" % _DIGITS)
            else:
                self._report(EV_MALFORMED, -1, "byte 0x%02X inside a frame" % b)
            return False
        if b == _START:
            self._begin()
            self._flush_garbage()
        elif b == _LF or b == _CR:
            if st == _SKIP:
                self._state = _IDLE
            else:
                self._flush_garbage()
        elif st == _IDLE and b != 0x20 and b != 0x09:  # blanks between frames are idle
            self._garbage += 1
            if self._garbage >= _GARBAGE_REPORT:
                self._flush_garbage()
        return False

    def flush(self):
        """Report garbage still being counted (e.g. at the end of a transcript)."""
        self._flush_garbage()

    def _begin(self):
        self._state = 0
        self._card = self._seq = self._crc = 0

    def _flush_garbage(self):
        n = self._garbage
        if n:
            self._garbage = 0
            self._report(EV_GARBAGE, -1, n)

    def _frame(self):
        card, seq = self._card, self._seq
        # The CRC of [card, seq high, seq low] (encode()), _crc_byte's steps written out:
        # no call on a card's path (issue 27).
        t = _T16
        crc = ((_CRC_INIT << 4) & 0xFFFF) ^ t[(_CRC_INIT >> 12) ^ (card >> 4)]
        crc = ((crc << 4) & 0xFFFF) ^ t[(crc >> 12) ^ (card & 15)]
        b = seq >> 8
        crc = ((crc << 4) & 0xFFFF) ^ t[(crc >> 12) ^ (b >> 4)]
        crc = ((crc << 4) & 0xFFFF) ^ t[(crc >> 12) ^ (b & 15)]
        b = seq & 0xFF
        crc = ((crc << 4) & 0xFFFF) ^ t[(crc >> 12) ^ (b >> 4)]
        crc = ((crc << 4) & 0xFFFF) ^ t[(crc >> 12) ^ (b & 15)]
        if crc != self._crc:
            self._report(EV_BAD_CRC, -1, "crc %04X, frame says %04X" % (crc, self._crc))
            return False
        self.intact = seq  # received whole: acknowledged whatever becomes of its card
        last = self.last_seq
        event, info = 0, 0
        if last >= 0:
            if seq == last:
                self._report(EV_REPEAT if card == self.last_card else EV_CONFLICT, seq, card)
                return False
            gap = (seq - last - 1) & 0xFFFF
            if gap >= 0x8000:  # behind us: a restart at 0, or an old frame replayed
                if seq != 0:
                    self._report(EV_STALE, seq, card)
                    return False
                event, info = EV_RESTART, last
            elif gap:
                event, info = EV_DROPPED, gap
        self.last_seq = seq
        self.last_card = card
        if card > JOKER:
            if event:
                self._report(event, seq, info)
            self._report(EV_BAD_CARD, seq, card)
            return False
        self.card, self.seq, self.ready = card, seq, True
        if event:
            self._report(event, seq, info)
        return True
