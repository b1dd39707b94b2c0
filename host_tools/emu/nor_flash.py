"""NOR flash that can lose power, with the block-device interface of rp2.Flash (what
pitboss.store.region.FlashRegion drives): readblocks(block, buf, offset),
writeblocks(block, buf, offset) (programs 256-byte aligned pages without erasing; bits only
go 1 -> 0, as the emulator's flash model does, host_tools/emu/pico/flash.mjs) and
ioctl(6, block) (erases a 4 KB sector).

Every byte programmed costs one unit and every erase ERASE_STEPS units; `cut_after(k)`
lets k units happen and cuts the power at the next one:
- inside a program: the bytes before the cut are programmed, the byte being programmed
  gets an unpredictable part of its bits cleared, the rest of the page is untouched;
- inside an erase: the sector is left as unpredictable bits (seeded random: per byte its
  old value, erased, random, or a mix), whatever step the cut came at.
After a cut every call raises `Cut` (tests set it to tests/support/powercut_fs.py's PowerCut)
until `reboot()`. Host-only: the journal's power-cut tests and `pitboss bench --journal`
(flash wear) use it."""
import random


class FlashCut(BaseException):
    # BaseException: firmware code that catches Exception/OSError must not swallow it.
    pass

SECTOR = 4096
PAGE = 256
ERASE_STEPS = 8


class NorFlash:
    Cut = FlashCut

    def __init__(self, sectors, seed=0, junk=False):
        self.sectors = sectors
        self.mem = bytearray(b"\xff" * (sectors * SECTOR))
        if junk:  # flash used before (a filesystem's old blocks): anything at all
            self.mem[:] = random.Random(seed).randbytes(len(self.mem))
        self.left = None
        self.dead = False
        self.units = 0
        self.seed = seed
        self.wear = [0] * sectors  # erases per sector
        self.pages = 0  # pages programmed
        self.erases = 0

    # ---- power ----
    def cut_after(self, k):
        self.left = k

    def reboot(self):
        self.dead = False
        self.left = None

    def clone(self):
        c = type(self)(self.sectors, self.seed)
        c.mem[:] = self.mem
        c.wear = list(self.wear)
        return c

    def _alive(self):
        if self.dead:
            raise self.Cut("no power")

    def _spend(self):
        """One unit; False (and the power is gone) if the cut comes now."""
        self._alive()
        if self.left is not None:
            if self.left == 0:
                self.dead = True
                return False
            self.left -= 1
        self.units += 1
        return True

    # ---- the block device ----
    def ioctl(self, op, arg):
        self._alive()
        if op == 4:
            return self.sectors
        if op == 5:
            return SECTOR
        if op == 6:
            self._erase(arg)
            return 0
        return None

    def readblocks(self, block, buf, offset=0):
        self._alive()
        a = block * SECTOR + offset
        n = len(buf)
        if a < 0 or a + n > len(self.mem):
            raise ValueError("read outside the flash: %d+%d" % (a, n))
        buf[:] = self.mem[a:a + n]

    def writeblocks(self, block, buf, offset=None):
        self._alive()
        if offset is None:
            raise ValueError("the journal never erases through writeblocks")
        a = block * SECTOR + offset
        data = bytes(buf)
        if a % PAGE or len(data) % PAGE or a + len(data) > len(self.mem):
            raise ValueError("program must be whole 256-byte pages: %d+%d" % (a, len(data)))
        rng = random.Random(self.seed * 7919 + self.units)
        for i, b in enumerate(data):
            if not self._spend():
                self.mem[a + i] &= b | rng.randrange(256)  # some of its bits, not all
                raise self.Cut("power cut inside a page program")
            self.mem[a + i] &= b
        self.pages += len(data) // PAGE

    def _erase(self, s):
        if not 0 <= s < self.sectors:
            raise ValueError("no sector %d" % s)
        a = s * SECTOR
        for _ in range(ERASE_STEPS):
            if not self._spend():
                rng = random.Random(self.seed * 104729 + self.units)
                for i in range(a, a + SECTOR):
                    how = rng.randrange(4)
                    r = rng.randrange(256)
                    self.mem[i] = (self.mem[i], 0xFF, r, self.mem[i] | r)[how]
                raise self.Cut("power cut inside a sector erase")
        self.mem[a:a + SECTOR] = b"\xff" * SECTOR
        self.wear[s] += 1
        self.erases += 1
