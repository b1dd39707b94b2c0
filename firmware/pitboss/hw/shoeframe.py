# The shoe's frame codec (docs/shoe-protocol.md), shared with the host tools (the
# simulated shoe, the link model): a card's frame and its acknowledgement, CRC-16, and the
# byte-at-a-time decoder the serial shoe (pitboss.hw.serialshoe) runs:
#
#     ! C C S S S S K K K K \n      card id, sequence number, CRC-16 as uppercase hex
#
# ASCII on purpose: '!' never occurs inside a frame, so after line noise the decoder is
# back in step at the next '!' without scanning inside bad frames, and a frame can be
# typed at a terminal or pasted into a bench log.
from pitboss.rules.cards import JOKER
from pitboss.compat import const
from pitboss.hw.shoe import (EV_BAD_CARD, EV_BAD_CRC, EV_CONFLICT, EV_DROPPED, EV_GARBAGE,
                             EV_MALFORMED, EV_REPEAT, EV_RESTART, EV_STALE)

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


def _crc_byte(crc, b):
    crc ^= b << 8
    for _ in range(8):
        if crc & 0x8000:
            crc = ((crc << 1) ^ _CRC_POLY) & 0xFFFF
        else:
            crc = (crc << 1) & 0xFFFF
    return crc


def _crc3(card, seq):
    # The CRC covers the values, not their hex text: [card, seq high, seq low].
    return _crc_byte(_crc_byte(_crc_byte(_CRC_INIT, card), seq >> 8), seq & 0xFF)


def encode(card, seq, strict=True):
    """The 12-byte frame for one card. strict=False lets tests and the simulator send
    card ids a shoe must not (53..255) to exercise the bad-card path."""
    if not isinstance(card, int) or not 0 <= card <= (JOKER if strict else 255):
        raise ValueError("shoe frame: card id %r out of range 0..%d"
                         % (card, JOKER if strict else 255))
    if not isinstance(seq, int) or not 0 <= seq <= 0xFFFF:
        raise ValueError("shoe frame: sequence number %r out of range 0..65535" % (seq,))
    return b"!%02X%04X%04X\n" % (card, seq, _crc3(card, seq))


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

    def push(self, b):
        st = self._state
        if st >= 0:
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
            if b == _LF or b == _CR:
                self._state = _IDLE
                if st == _DIGITS:
                    return self._frame()
                self._report(EV_MALFORMED, -1, "frame ended after %d hex digit(s)" % st)
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
        if _crc3(card, seq) != self._crc:
            self._report(EV_BAD_CRC, -1, "crc %04X, frame says %04X" % (_crc3(card, seq),
                                                                        self._crc))
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
