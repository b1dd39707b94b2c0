# Flash regions for the journal (pitboss.store.ringjournal): a run of 4 KB sectors that can only
# be erased a sector at a time and programmed a 256-byte page at a time, as NOR flash is.
# Two drivers, one interface, so one journal format serves every board:
#   FlashRegion  a raw region of the chip's flash outside the filesystem: an
#                rp2.Flash(start=, len=) sub-region on the pitboss image (the board makes
#                it, only boards/ creates rp2/machine objects, and passes it in). A page
#                program is ~0.8 ms, no filesystem in the way.
#   FileRegion   the same sectors as files on a filesystem (littlefs on a stock image, the
#                ESP32, a host folder): for boards without a raw region. Slower: every
#                page program is a littlefs write and sync (a 4 KB block copied).
# The interface (what the journal calls):
#   sectors, sector_size, page_size     the geometry
#   read(addr, buf)                     fill buf from region address addr
#   program(addr, page)                 one 256-byte page at a page-aligned address; NOR
#                                       semantics: bits only go 1 -> 0, so a page may be
#                                       programmed again only with its programmed bytes
#                                       repeated identically (the journal's rule)
#   erase(sector)                       every byte of the sector back to 0xFF
#   blank(sector)                       True if every byte of the sector reads 0xFF
#   erases, programs                    counts since start (the bench's wear figures)
from pitboss.compat import const, missing
from pitboss.store.osfs import OsFS, makedirs, readfull

SECTOR = const(4096)
PAGE = const(256)
_IOCTL_COUNT = const(4)  # the block-device protocol's ioctls (MicroPython's vfs)
_IOCTL_SIZE = const(5)
_IOCTL_ERASE = const(6)


class FlashRegion:
    """A raw NOR region through MicroPython's extended block-device interface:
    readblocks(block, buf, offset), writeblocks(block, buf, offset) (programs, no erase:
    rp2.Flash passes it to the ROM's flash_range_program, which needs 256-byte aligned
    pages) and ioctl(6, block) (erases one 4 KB block). rp2.Flash(start=, len=) is one;
    tests pass a model of NOR flash with the same methods."""

    def __init__(self, dev):
        if dev.ioctl(_IOCTL_SIZE, 0) != SECTOR:
            raise ValueError("a journal region needs 4096-byte blocks")
        self.dev = dev
        self.sectors = dev.ioctl(_IOCTL_COUNT, 0)
        self.sector_size = SECTOR
        self.page_size = PAGE
        self.erases = 0
        self.programs = 0
        self._buf = bytearray(PAGE)  # blank(): a page read back (allocated once)
        self._ff = b"\xff" * PAGE

    def read(self, addr, buf):
        # rp2: a memcpy from the memory-mapped flash (XIP), no allocation.
        self.dev.readblocks(addr >> 12, buf, addr & 0xFFF)

    def program(self, addr, page):
        self.programs += 1
        self.dev.writeblocks(addr >> 12, page, addr & 0xFFF)

    def erase(self, sector):
        self.erases += 1
        self.dev.ioctl(_IOCTL_ERASE, sector)

    def blank(self, sector):
        buf = self._buf
        for off in range(0, SECTOR, PAGE):
            self.dev.readblocks(sector, buf, off)
            if buf != self._ff:
                return False
        return True


class FileRegion:
    """The region as one file per sector under `path` (NNNN.sec), on any filesystem. Why
    not one preallocated file: littlefs rewrites a file from the written block to its end
    at every sync (its files are copy-on-write lists), so a page programmed into a 512 KB
    file would copy up to 512 KB; a sector's own file is one 4 KB block. A missing file
    reads as erased, and erase(sector) removes it (atomic on littlefs and FAT).

    Programs overwrite rather than AND, which is the same for what the journal writes
    (erased bytes, programmed bytes repeated, a header zeroed). A program is one
    write + sync: on littlefs all or nothing, on FAT a prefix of the page; either is what
    the journal survives on NOR (tests/host/test_ringjournal.py)."""

    def __init__(self, path, sectors, fs=None):
        if sectors < 1:
            raise ValueError("a region needs at least one sector")
        self.fs = fs or OsFS()
        self.path = path.rstrip("/") or "/"
        self.sectors = sectors
        self.sector_size = SECTOR
        self.page_size = PAGE
        self.erases = 0
        self.programs = 0
        self._wf = None  # the sector file held open for programs, and its sector, size
        self._ws = -1
        self._wsize = 0
        self._rf = None  # the sector file held open for reads, and its sector, size
        self._rs = -1
        self._rsize = 0
        self._buf = bytearray(PAGE)
        self._ff = b"\xff" * PAGE
        self._dir = False

    def _name(self, sector):
        return "%s/%04d.sec" % (self.path, sector)

    def close(self):
        """Close the files held open (a program is synced already: nothing is lost)."""
        for f in (self._wf, self._rf):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        self._wf = self._rf = None
        self._ws = self._rs = -1

    def read(self, addr, buf):
        n = len(buf)
        mv = None
        done = 0
        while done < n:
            s = (addr + done) >> 12
            off = (addr + done) & 0xFFF
            k = min(n - done, SECTOR - off)
            if done or k < n:
                if mv is None:
                    mv = memoryview(buf)
                part = mv[done:done + k]
            else:
                part = buf
            self._read_sector(s, off, part, k)
            done += k

    def _read_sector(self, s, off, part, k):
        if s != self._rs:
            self._drop_reader()
            self._rs = s
            self._rsize = self.fs.size(self._name(s))
            if self._rsize > 0:
                self._rf = self.fs.open(self._name(s), "rb")
        got = 0
        if self._rf is not None and off < self._rsize:
            self._rf.seek(off)
            got = readfull(self._rf, memoryview(part)[:k])  # (a view: readfull slices it)
        while got < k:  # past the file's end: erased
            part[got] = 0xFF
            got += 1

    def program(self, addr, page):
        s = addr >> 12
        off = addr & 0xFFF
        fs = self.fs
        f = self._wf
        if s != self._ws or f is None:
            if f is not None:
                f.close()
            self._wf = None
            self._ws = s
            if not self._dir:
                makedirs(fs, self.path)
                self._dir = True
            name = self._name(s)
            self._wsize = fs.size(name)
            if self._wsize < 0:
                f = fs.open(name, "wb")
                self._wsize = 0
            else:
                f = fs.open(name, "r+b")
            self._wf = f
        self.programs += 1
        if off > self._wsize:  # pages skipped: erased bytes, as on flash
            f.seek(self._wsize)
            while self._wsize < off:
                f.write(self._ff)
                self._wsize += PAGE
        f.seek(off)
        f.write(page)
        fs.fsync(f)
        if off + PAGE > self._wsize:
            self._wsize = off + PAGE
        if s == self._rs:
            self._drop_reader()  # its size (and on some ports its cache) is stale

    def _drop_reader(self):
        if self._rf is not None:
            self._rf.close()
        self._rf, self._rs = None, -1

    def erase(self, sector):
        self.erases += 1
        if sector == self._ws and self._wf is not None:
            self._wf.close()
            self._wf, self._ws = None, -1
        if sector == self._rs:
            self._drop_reader()
        try:
            self.fs.remove(self._name(sector))
        except OSError as e:
            if not missing(e):
                raise
            return
        self.fs.sync_dir(self.path)

    def blank(self, sector):
        if self.fs.size(self._name(sector)) <= 0:
            return True
        buf = self._buf
        for off in range(0, SECTOR, PAGE):
            self._read_sector(sector, off, buf, PAGE)
            if buf != self._ff:
                return False
        return True
