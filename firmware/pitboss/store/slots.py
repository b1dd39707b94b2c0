# A/B double-buffered records for small state that must survive a power cut at any byte:
# the meters, the tilts, the auth key and replay counter (docs/journal.md, "A/B records").
import struct
from binascii import crc32

from pitboss.compat import const
from pitboss.store.osfs import OsFS, as_bytes, makedirs, write_file


class SlotCorrupt(Exception):
    """Both copies of an A/B record are present and neither is valid."""


# Each copy: b"PBS1", u32 generation, u32 length, data, u32 CRC-32 of all before it. A save
# writes generation g+1 into the copy that does not hold g, so a cut during the save
# leaves generation g intact; load picks the highest valid generation. No rename is
# involved, which is what makes this safe on FAT too.
_SLOT_MAGIC = b"PBS1"
_SLOT_HDR = const(12)


class Slots:
    def __init__(self, base, fs=None, max_size=8192):
        self.fs = fs or OsFS()
        self.paths = (base + ".a", base + ".b")
        i = base.rfind("/")
        self.parent = base[:i] if i > 0 else ("/" if i == 0 else ".")
        self.max_size = max_size
        self.gen = 0
        self._dir_ok = False

    def _read(self, path):
        """-> (status, gen, data): status 'ok', 'missing', 'torn' (a save cut short: the
        file is shorter than its header says) or 'bad'."""
        fs = self.fs
        size = fs.size(path)
        if size < 0:
            return "missing", 0, b""
        if size > self.max_size + _SLOT_HDR + 4:
            return "bad", 0, b""
        f = fs.open(path, "rb")
        try:
            blob = f.read()
        finally:
            f.close()
        n = len(blob)
        if n < _SLOT_HDR:
            # A cut while writing the header: a prefix of the magic, nothing else known.
            return ("torn" if _SLOT_MAGIC.startswith(blob[:4]) else "bad"), 0, b""
        magic, gen, length = struct.unpack_from("<4sII", blob, 0)
        if magic != _SLOT_MAGIC or length > self.max_size:
            return "bad", 0, b""
        if n < _SLOT_HDR + length + 4:
            return "torn", gen, b""
        if n != _SLOT_HDR + length + 4:
            return "bad", 0, b""
        (crc,) = struct.unpack_from("<I", blob, _SLOT_HDR + length)
        if crc != crc32(memoryview(blob)[:_SLOT_HDR + length]):
            return "bad", 0, b""
        return "ok", gen, bytes(blob[_SLOT_HDR:_SLOT_HDR + length])

    def load(self):
        """The newest valid data (bytes), or None if nothing was ever saved. Raises
        SlotCorrupt when copies exist and none is valid (except a torn very first save,
        which was never acknowledged)."""
        a = self._read(self.paths[0])
        b = self._read(self.paths[1])
        good = [r for r in (a, b) if r[0] == "ok"]
        if good:
            if len(good) == 2 and a[1] == b[1] and a[2] != b[2]:
                raise SlotCorrupt("%s: two different copies of generation %d"
                                  % (self.paths[0], a[1]))
            best = good[0] if len(good) == 1 or a[1] >= b[1] else good[1]
            self.gen = best[1]
            return best[2]
        present = [r for r in (a, b) if r[0] != "missing"]
        if not present:
            self.gen = 0
            return None
        if len(present) == 1 and present[0][0] == "torn" and present[0][1] <= 1:
            # Only a torn generation-1 copy exists: the first save ever was cut short.
            self.gen = 0
            return None
        raise SlotCorrupt("%s: no valid copy" % self.paths[0])

    def save(self, data):
        data = as_bytes(data, "slot data")
        if len(data) > self.max_size:
            raise ValueError("%s: %d bytes > max %d" % (self.paths[0], len(data),
                                                        self.max_size))
        gen = self.gen + 1
        # Header, data, CRC written as three pieces of one file: no copy of the data
        # (the journal's commit record is saved after every dealt card).
        head = struct.pack("<4sII", _SLOT_MAGIC, gen, len(data))
        tail = struct.pack("<I", crc32(data, crc32(head)))
        if not self._dir_ok:
            makedirs(self.fs, self.parent)
            self._dir_ok = True
        write_file(self.fs, self.paths[gen & 1], (head, data, tail), self.parent)
        self.gen = gen
        return gen
