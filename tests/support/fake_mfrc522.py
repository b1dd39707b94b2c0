"""A simulated MFRC522 on a simulated SPI bus, with ISO 14443-3 type A tags in its field.

Models what the driver relies on, from the datasheet's point of view: the SPI address
byte, the register file, the 64-byte FIFO, the CalcCRC / Transceive / SoftReset / Idle
commands, ComIrqReg / DivIrqReg set-clear semantics, BitFramingReg (StartSend,
TxLastBits, RxAlign), ErrorReg / CollReg on collisions, and tags that walk the
IDLE -> READY -> (cascade levels) -> ACTIVE -> HALT states. Faults are switches on the
chip and the tags. Plain Python that also runs on MicroPython, so the VM test can drive
the driver through it too.
"""

IDLE, READY, ACTIVE, HALT = 0, 1, 2, 3


def crc_a(data, crc=0x6363):
    """ISO 14443-3 CRC_A in software (the model's coprocessor; the driver uses the chip's)."""
    for b in data:
        b ^= crc & 0xFF
        b ^= (b << 4) & 0xFF
        crc = (crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)
    return crc & 0xFFFF


def _bits(data, nbits):
    return [(data[i >> 3] >> (i & 7)) & 1 for i in range(nbits)]


def _bytes_from_bits(bits):
    out = bytearray((len(bits) + 7) // 8)
    for i, v in enumerate(bits):
        if v:
            out[i >> 3] |= 1 << (i & 7)
    return bytes(out)


class Tag:
    def __init__(self, uid, sak=0x08, atqa=0x0044):
        assert len(uid) in (4, 7, 10)
        self.uid = bytes(uid)
        self.sak = sak
        self.atqa = atqa
        self.state = IDLE
        self.level = 0
        # faults
        self.bad_bcc = False
        self.bad_sak_crc = False
        self.parity_error = False  # garbles its answers (the reader sees ParityErr)
        self.silent_after_reqa = False  # leaves the field right after answering REQA
        self.naks_halt = False

    def levels(self):
        return {4: 1, 7: 2, 10: 3}[len(self.uid)]

    def cln(self, level):
        """UID CLn + BCC (5 bytes) of cascade level 0..2."""
        u, n = self.uid, self.levels()
        if level < n - 1:
            part = bytes([0x88]) + u[3 * level:3 * level + 3]
        else:
            part = u[3 * level:3 * level + 4]
        bcc = part[0] ^ part[1] ^ part[2] ^ part[3]
        if self.bad_bcc:
            bcc ^= 0xFF
        return part + bytes([bcc])

    def receive(self, data, nbits):
        """One frame from the reader -> list of answer bits, or None (silence)."""
        if nbits == 7 and data[0] in (0x26, 0x52):
            if self.state == IDLE or (self.state == HALT and data[0] == 0x52):
                self.state, self.level = READY, 0
                return _bits(bytes([self.atqa & 0xFF, self.atqa >> 8]), 16)
            if self.state != HALT:
                self.state = IDLE
            return None
        if self.state == READY and nbits >= 16 and data[0] == (0x93, 0x95, 0x97)[self.level]:
            if self.silent_after_reqa:
                return None
            nvb = data[1]
            cln = self.cln(self.level)
            if nvb == 0x70 and nbits == 72:
                if crc_a(data[:7]) != data[7] | (data[8] << 8) or data[2:7] != cln:
                    self.state = IDLE
                    return None
                last = self.level == self.levels() - 1
                sak = self.sak if last else 0x04
                if last:
                    self.state = ACTIVE
                else:
                    self.level += 1
                c = crc_a(bytes([sak]))
                if self.bad_sak_crc:
                    c ^= 0x0101
                return _bits(bytes([sak, c & 0xFF, c >> 8]), 24)
            known = ((nvb >> 4) - 2) * 8 + (nvb & 0x0F)
            if nbits != 16 + known or known > 40:
                self.state = IDLE
                return None
            mine = _bits(cln, 40)
            if _bits(data[2:], known) != mine[:known]:
                return None  # another tag's prefix: stay READY, stay quiet
            return mine[known:]
        if self.state == ACTIVE and nbits == 32 and data[0] == 0x50 and data[1] == 0:
            if crc_a(data[:2]) == data[2] | (data[3] << 8):
                if self.naks_halt:
                    return [0, 0, 0, 0]
                self.state = HALT
                return None
        if self.state in (READY, ACTIVE):
            self.state = IDLE
        return None


class Chip:
    # reset values of the registers the driver touches (datasheet ch. 9)
    RESET = {0x01: 0x20, 0x0A: 0x00, 0x0E: 0x80, 0x11: 0x3F, 0x14: 0x80, 0x37: 0x92}

    def __init__(self, version=0x92):
        self.version = version
        self.tags = []
        self.dead = False  # MISO reads 0, writes are lost: a disconnected reader
        self.crc_stalls = False  # CalcCRC never finishes
        self.irq_stalls = False  # a transceive never ends (no RxIRq, no TimerIRq)
        self.log = []  # commands executed, for assertions
        self.exchanges = []  # (frame bytes, nbits) sent to the air
        self._reset()
        self._first = True
        self._addr = 0
        self._read_mode = False

    def _reset(self):
        self.regs = bytearray(64)
        for r, v in self.RESET.items():
            self.regs[r] = v
        self.regs[0x37] = self.version
        self.fifo = bytearray()

    # --- SPI side ---
    def select(self, active):
        self._first = True

    def xfer(self, b):
        if self.dead:
            return 0
        if self._first:
            self._first = False
            self._addr = (b >> 1) & 0x3F
            self._read_mode = bool(b & 0x80)
            return 0
        if self._read_mode:
            out = self.read(self._addr)
            self._addr = (b >> 1) & 0x3F
            return out
        self.write(self._addr, b)
        return 0

    # --- register file ---
    def read(self, reg):
        if reg == 0x09:
            if self.fifo:
                v = self.fifo[0]
                self.fifo = self.fifo[1:]
                return v
            return 0
        if reg == 0x0A:
            return len(self.fifo)
        return self.regs[reg]

    def write(self, reg, v):
        r = self.regs
        if reg == 0x01:
            r[0x01] = v & 0x30
            self._command(v & 0x0F)
        elif reg in (0x04, 0x05):  # Set1/Set2: set or clear the marked bits
            mask = v & 0x7F
            r[reg] = (r[reg] | mask) if v & 0x80 else (r[reg] & ~mask)
        elif reg == 0x09:
            if len(self.fifo) >= 64:
                r[0x06] |= 0x10  # BufferOvfl
            else:
                self.fifo.append(v)
        elif reg == 0x0A:
            if v & 0x80:
                self.fifo = bytearray()
                r[0x06] &= ~0x10
        elif reg == 0x0D:
            r[0x0D] = v & 0x7F
            if v & 0x80 and r[0x01] & 0x0F == 0x0C:
                self._transceive()
        else:
            r[reg] = v

    def _command(self, cmd):
        self.log.append(cmd)
        r = self.regs
        if cmd == 0x0F:
            self._reset()
        elif cmd == 0x03:
            if self.crc_stalls:
                return
            preset = {0: 0x0000, 1: 0x6363, 2: 0xA671, 3: 0xFFFF}[r[0x11] & 3]
            c = crc_a(bytes(self.fifo), preset)
            r[0x22], r[0x21] = c & 0xFF, c >> 8
            r[0x05] |= 0x04
            r[0x01] = (r[0x01] & 0xF0) | 0x03  # CalcCRC runs until Idle is written
        else:
            r[0x01] = (r[0x01] & 0xF0) | cmd

    def _transceive(self):
        r = self.regs
        framing = r[0x0D]
        tx_last, rx_align = framing & 7, (framing >> 4) & 7
        data = bytes(self.fifo)
        nbits = len(data) * 8 if not tx_last else (len(data) - 1) * 8 + tx_last
        self.fifo = bytearray()
        self.exchanges.append((data, nbits))
        r[0x06] = 0
        if self.irq_stalls:
            return
        answers = []
        if r[0x14] & 0x03:  # antenna on
            for t in self.tags:
                a = t.receive(data, nbits)
                if a is not None:
                    answers.append((t, a))
        if not answers:
            r[0x04] |= 0x40 | 0x01  # TxIRq, TimerIRq (Transceive keeps running)
            return
        n = max(len(a) for _, a in answers)
        bits, coll = [], -1
        for i in range(n):
            vals = set(a[i] for _, a in answers if i < len(a))
            if coll < 0 and len(vals) > 1:
                coll = i
            bits.append(0 if coll >= 0 else vals.pop())
        if coll >= 0:
            r[0x06] |= 0x08
            r[0x0E] = (r[0x0E] & 0x80) | ((coll + 1) & 0x1F)
        else:
            r[0x0E] = (r[0x0E] & 0x80) | 0x20  # CollPosNotValid
        if any(t.parity_error for t, _ in answers):
            r[0x06] |= 0x02
        fifo = _bytes_from_bits([0] * rx_align + bits)
        self.fifo = bytearray(fifo)
        r[0x0C] = (r[0x0C] & 0xF8) | ((rx_align + len(bits)) & 7)
        r[0x04] |= 0x40 | 0x20 | 0x10 | (0x02 if r[0x06] else 0)


class Pin:
    def __init__(self, chip=None, value=1):
        self.chip = chip
        self.v = value
        self.history = []

    def __call__(self, v=None):
        return self.value(v)

    def value(self, v=None):
        if v is None:
            return self.v
        v = 1 if v else 0
        if self.chip is not None and v == 0 and self.v == 1:
            self.chip.select(True)
        self.v = v
        self.history.append(v)


class SPI:
    def __init__(self, chip):
        self.chip = chip
        self.transfers = 0

    def write(self, buf):
        self.transfers += 1
        for b in buf:
            self.chip.xfer(b)

    def write_readinto(self, wbuf, rbuf):
        self.transfers += 1
        for i in range(len(wbuf)):
            rbuf[i] = self.chip.xfer(wbuf[i])


def reader(tags=(), **chip_kw):
    """(chip, spi, cs, rst) wired together."""
    chip = Chip(**chip_kw)
    chip.tags = list(tags)
    return chip, SPI(chip), Pin(chip), Pin()
