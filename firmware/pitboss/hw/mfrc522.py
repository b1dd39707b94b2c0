# NXP MFRC522 13.56 MHz reader over SPI: enough ISO/IEC 14443-3 type A to find a tag
# (REQA/WUPA), run anticollision/select through every cascade level, read its 4-, 7- or
# 10-byte UID and halt it. The board module passes in the bus and pins; this file never
# creates machine objects.
#
# Written from the NXP MFRC522 datasheet (rev. 3.9: register map ch. 9, commands ch. 10,
# SPI address byte 8.1.2.3) and ISO/IEC 14443-3 (6.3-6.4: REQA/WUPA, ANTICOLLISION,
# SELECT, HLTA, cascade levels, BCC, CRC_A). Checked against two open drivers:
# wendlers/micropython-mfrc522 (mfrc522.py) and OSSLibraries/Arduino_MFRC522v2
# (src/MFRC522v2.cpp: PCD_Init timer values, PCD_CommunicateWithPICC, PICC_Select).
#
# Collisions are detected, not resolved. In a shoe two tags in the field at once mean
# two cards passed together and their order is unknown, so the right answer is an alarm;
# bit-by-bit resolution would pick one tag and produce a plausible but unordered deal.
# (The references also disagree on how CollReg's position counts after the first round,
# which could not be settled without hardware.)
from pitboss.compat import const

# Registers (datasheet table 20).
_COMMAND = const(0x01)
_COM_IRQ = const(0x04)
_DIV_IRQ = const(0x05)
_ERROR = const(0x06)
_FIFO_DATA = const(0x09)
_FIFO_LEVEL = const(0x0A)
_CONTROL = const(0x0C)
_BIT_FRAMING = const(0x0D)
_COLL = const(0x0E)
_MODE = const(0x11)
_TX_MODE = const(0x12)
_RX_MODE = const(0x13)
_TX_CONTROL = const(0x14)
_TX_ASK = const(0x15)
_CRC_RESULT_H = const(0x21)
_CRC_RESULT_L = const(0x22)
_MOD_WIDTH = const(0x24)
_T_MODE = const(0x2A)
_T_PRESCALER = const(0x2B)
_T_RELOAD_H = const(0x2C)
_T_RELOAD_L = const(0x2D)
_VERSION = const(0x37)

# Reader commands (CommandReg[3:0]).
_CMD_IDLE = const(0x00)
_CMD_CALC_CRC = const(0x03)
_CMD_TRANSCEIVE = const(0x0C)
_CMD_SOFT_RESET = const(0x0F)
_POWER_DOWN = const(0x10)  # CommandReg bit 4: set until the oscillator runs after reset

# ComIrqReg / DivIrqReg / ErrorReg bits.
_IRQ_RX_IDLE = const(0x30)  # RxIRq | IdleIRq: the exchange finished
_IRQ_TIMER = const(0x01)  # the timer ran out: no tag answered
_IRQ_CRC = const(0x04)  # DivIrqReg CRCIRq
_ERR_COLL = const(0x08)
_ERR_FRAME = const(0x13)  # BufferOvfl | ParityErr | ProtocolErr
_START_SEND = const(0x80)  # BitFramingReg

# Tag commands (ISO/IEC 14443-3).
_REQA = const(0x26)
_WUPA = const(0x52)
_HLTA = const(0x50)
_CT = const(0x88)  # cascade tag: "more UID bytes follow at the next level"
_SAK_CASCADE = const(0x04)
_NVB_ANTICOLL = const(0x20)  # SEL + NVB only: every tag at this level sends UID CLn + BCC
_NVB_SELECT = const(0x70)  # SEL + NVB + 4 UID bytes + BCC (+ CRC_A)

# A poll loop bounded by a count, not a clock: the chip's own timer is the real timeout
# (a silent field sets TimerIRq), so the bound only stops a loop on a chip that no longer
# answers, and tests need no clock. At 1 MHz SPI 2000 reads are well over 25 ms.
_POLLS = const(2000)
_TIMER_HZ = const(40000)  # TPrescaler 0xA9: 13.56 MHz / (2 * 169 + 1) = 40 kHz, 25 us


class RFIDError(OSError):
    """A reader or tag problem. `kind`: 'no_reader' (chip absent or dead), 'timeout'
    (chip did not finish a command), 'collision' (several tags at once), 'crc' (CRC_A
    of an answer wrong), 'bcc' (UID check byte wrong), 'protocol' (framing, parity or a
    short answer: often a tag leaving the field mid-read)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


class MFRC522:
    """spi: a configured machine.SPI (mode 0, MSB first, <= 10 MHz); cs: chip select
    Pin (idle high); rst: NRSTPD Pin or None; sleep_ms: injectable delay."""

    def __init__(self, spi, cs, rst=None, sleep_ms=None, timeout_ms=10):
        self.spi = spi
        self.cs = cs
        self.rst = rst
        if sleep_ms is None:
            import time

            sleep_ms = getattr(time, "sleep_ms", None) or (lambda ms: time.sleep(ms / 1000))
        self._sleep_ms = sleep_ms
        # The silent-field timeout: the wait for "no tag" on every poll. Tags answer
        # REQA/SELECT within about 0.1 ms, so 10 ms is generous and keeps polling cheap.
        if not 1 <= timeout_ms <= 1000:
            raise ValueError("MFRC522 timeout_ms %r out of range 1..1000" % (timeout_ms,))
        self._reload = timeout_ms * (_TIMER_HZ // 1000)
        # All transfers reuse these: a register access, a frame out, the answer in.
        self._reg = bytearray(2)
        self._frame = bytearray(9)  # SEL NVB UID0-3 BCC CRC_A(2): the longest we send
        self._resp = bytearray(16)
        self._uid = bytearray(10)
        self._nbits = 0  # valid bits in the last byte received (0 = all 8)
        self.atqa = 0
        self.sak = 0
        self.version = 0
        self.init()

    # --- SPI register access (datasheet 8.1.2: address byte = R/W bit 7, reg << 1) ---

    def _write(self, reg, value):
        b = self._reg
        b[0] = (reg << 1) & 0x7E
        b[1] = value
        self.cs(0)
        try:
            self.spi.write(b)
        finally:
            self.cs(1)

    def _read(self, reg):
        b = self._reg
        b[0] = 0x80 | ((reg << 1) & 0x7E)
        b[1] = 0
        self.cs(0)
        try:
            self.spi.write_readinto(b, b)  # the value arrives during the second byte
        finally:
            self.cs(1)
        return b[1]

    # --- chip setup ---

    def init(self):
        """Reset and configure the chip, switch the antenna on. Raises RFIDError
        'no_reader' if nothing that answers like an MFRC522 is on the bus."""
        if self.rst is not None:
            self.rst(0)  # hard power-down, then power up: clears any state
            self._sleep_ms(1)
            self.rst(1)
        self._write(_COMMAND, _CMD_SOFT_RESET)
        for _ in range(50):  # oscillator start-up (8.8.2): PowerDown clears when ready
            self._sleep_ms(1)
            if not self._read(_COMMAND) & _POWER_DOWN:
                break
        else:
            raise RFIDError("no_reader", "MFRC522 stays in power-down after reset")
        v = self._read(_VERSION)
        if v == 0x00 or v == 0xFF:  # floating or shorted MISO: no chip is talking
            raise RFIDError("no_reader", "no MFRC522 on the SPI bus (VersionReg 0x%02X)" % v)
        self.version = v
        w = self._write
        w(_TX_MODE, 0x00)  # 106 kBd, no hardware CRC: CRC_A is added/checked explicitly
        w(_RX_MODE, 0x00)
        w(_MOD_WIDTH, 0x26)
        w(_T_MODE, 0x80)  # TAuto: the timer starts when a transmission ends
        w(_T_PRESCALER, 0xA9)
        w(_T_RELOAD_H, self._reload >> 8)
        w(_T_RELOAD_L, self._reload & 0xFF)
        w(_TX_ASK, 0x40)  # 100 % ASK, which type A requires
        w(_MODE, 0x3D)  # CRC preset 0x6363, the CRC_A initial value (ISO 14443-3 6.2.4)
        w(_COLL, self._read(_COLL) & 0x7F)  # ValuesAfterColl=0: clear bits after one
        self.antenna(True)

    def antenna(self, on):
        v = self._read(_TX_CONTROL)
        self._write(_TX_CONTROL, (v | 0x03) if on else (v & ~0x03))

    # --- one exchange with the tag ---

    def _transceive(self, n, last_bits=0):
        """Send self._frame[:n] (last byte with last_bits bits if not 0); the answer
        goes to self._resp. Returns its length, or -1 if no tag answered."""
        w = self._write
        w(_COMMAND, _CMD_IDLE)  # stop whatever ran
        w(_COM_IRQ, 0x7F)  # Set1=0: clear every request bit
        w(_FIFO_LEVEL, 0x80)  # flush the FIFO
        f = self._frame
        for i in range(n):
            w(_FIFO_DATA, f[i])
        w(_BIT_FRAMING, last_bits)
        w(_COMMAND, _CMD_TRANSCEIVE)
        w(_BIT_FRAMING, _START_SEND | last_bits)
        irq = 0
        for _ in range(_POLLS):
            irq = self._read(_COM_IRQ)
            if irq & _IRQ_RX_IDLE:
                break
            if irq & _IRQ_TIMER:
                return -1
        else:
            raise RFIDError("timeout", "MFRC522 did not finish a transceive (ComIrqReg 0x%02X)"
                            % irq)
        err = self._read(_ERROR)
        if err & _ERR_COLL:
            raise RFIDError("collision", "several tags answered at once (CollReg 0x%02X)"
                            % self._read(_COLL))
        if err & _ERR_FRAME:
            raise RFIDError("protocol", "bad answer from the tag (ErrorReg 0x%02X)" % err)
        got = self._read(_FIFO_LEVEL) & 0x7F
        resp = self._resp
        if got > len(resp):
            raise RFIDError("protocol", "answer of %d bytes is longer than any expected" % got)
        for i in range(got):
            resp[i] = self._read(_FIFO_DATA)
        self._nbits = self._read(_CONTROL) & 0x07
        return got

    def crc_a(self, buf, n):
        """CRC_A of buf[:n] from the chip's coprocessor (low byte first on air)."""
        w = self._write
        w(_COMMAND, _CMD_IDLE)
        w(_DIV_IRQ, _IRQ_CRC)  # Set2=0: clear CRCIRq
        w(_FIFO_LEVEL, 0x80)
        for i in range(n):
            w(_FIFO_DATA, buf[i])
        w(_COMMAND, _CMD_CALC_CRC)
        for _ in range(_POLLS):
            if self._read(_DIV_IRQ) & _IRQ_CRC:
                w(_COMMAND, _CMD_IDLE)
                return self._read(_CRC_RESULT_L) | (self._read(_CRC_RESULT_H) << 8)
        raise RFIDError("timeout", "MFRC522 CRC coprocessor did not finish")

    # --- ISO/IEC 14443-3 type A ---

    def request(self, wake=False):
        """REQA (tags in IDLE) or WUPA (also HALTed tags). Returns ATQA, or None."""
        self._frame[0] = _WUPA if wake else _REQA
        n = self._transceive(1, 7)  # a short frame: 7 bits
        if n < 0:
            return None
        if n != 2 or self._nbits:
            raise RFIDError("protocol", "ATQA must be 16 bits, got %d byte(s) + %d bit(s)"
                            % (n, self._nbits))
        r = self._resp
        self.atqa = r[0] | (r[1] << 8)
        return self.atqa

    def _level(self, sel):
        """ANTICOLLISION + SELECT at one cascade level: UID CLn to self._frame[2:6];
        returns the SAK."""
        f, r = self._frame, self._resp
        f[0] = sel
        f[1] = _NVB_ANTICOLL
        n = self._transceive(2)
        if n != 5 or self._nbits:
            raise RFIDError("protocol", "tag left during anticollision" if n < 0 else
                            "UID CLn answer must be 5 bytes, got %d" % n)
        if r[0] ^ r[1] ^ r[2] ^ r[3] != r[4]:
            raise RFIDError("bcc", "UID check byte wrong: %02X%02X%02X%02X BCC %02X"
                            % (r[0], r[1], r[2], r[3], r[4]))
        f[1] = _NVB_SELECT
        for i in range(5):
            f[2 + i] = r[i]
        crc = self.crc_a(f, 7)
        f[7] = crc & 0xFF
        f[8] = crc >> 8
        n = self._transceive(9)
        if n != 3 or self._nbits:
            raise RFIDError("protocol", "tag left during select" if n < 0 else
                            "SAK must be 3 bytes, got %d" % n)
        sak = r[0]
        crc = self.crc_a(r, 1)
        if crc != r[1] | (r[2] << 8):
            raise RFIDError("crc", "SAK CRC_A %02X%02X, expected %02X%02X"
                            % (r[1], r[2], crc & 0xFF, crc >> 8))
        return sak

    def select(self):
        """Every cascade level after request(): the UID as bytes (4, 7 or 10 long)."""
        uid, f = self._uid, self._frame
        n = 0
        for sel in (0x93, 0x95, 0x97):  # SEL CL1, CL2, CL3
            sak = self._level(sel)
            if sak & _SAK_CASCADE:
                if f[2] != _CT or sel == 0x97:
                    raise RFIDError("protocol", "cascade bit set in SAK 0x%02X at level %d"
                                    " without a cascade tag" % (sak, (sel - 0x91) >> 1))
                for i in range(3):
                    uid[n + i] = f[3 + i]
                n += 3
                continue
            for i in range(4):
                uid[n + i] = f[2 + i]
            n += 4
            self.sak = sak
            return bytes(uid[:n])
        raise RFIDError("protocol", "UID longer than three cascade levels")

    def halt(self):
        """HLTA: the selected tag goes quiet until it leaves the field (or a WUPA), so
        a card resting on the antenna is read once. True if the tag obeyed."""
        f = self._frame
        f[0] = _HLTA
        f[1] = 0
        crc = self.crc_a(f, 2)
        f[2] = crc & 0xFF
        f[3] = crc >> 8
        # ISO 14443-3 6.4.3: any answer to HLTA is a NAK; silence is success.
        return self._transceive(4) < 0

    def read_uid(self, wake=False):
        """The UID of one tag entering the field (bytes), or None if there is none.
        Raises RFIDError for collisions, CRC/BCC errors and chip faults."""
        if self.request(wake) is None:
            return None
        uid = self.select()
        try:
            self.halt()
        except RFIDError:
            # The UID is already read and checked; a failed halt only means the same
            # tag may be read again, which the shoe reports as a repeat.
            pass
        return uid
