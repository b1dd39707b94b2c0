# Opening the journal on a flash region (pitboss.store.ringjournal; docs/journal.md):
# boot reads one header per segment, walks back from the newest through the positions
# before it while numbers run on, and reads the newest segment's records (the tail), where
# a torn append can be: the valid prefix in whole pages, one page of unpredictable bits,
# erased pages (anything else is JournalCorrupt); older segments are checked by verify()
# from the main loop's idle passes, or when read. These are RegionJournal's methods, bound
# in its class (j is the journal); Cursor reads a segment as a file.
import struct
from binascii import crc32

from pitboss.compat import const
from pitboss.store.record import JournalCorrupt, corrupt
from pitboss.store.record import (HDR, KIND_RECORD, KIND_SNAPSHOT, MAGIC, OVERHEAD, REC_FMT,
                                  SEG_HDR, SEG_MAGIC, SEG_START, seg_header)
from pitboss.store.record import Seg

# The region's page (pitboss.store.region.PAGE; ringjournal.py's too): a const() named with
# an underscore cannot be imported on MicroPython, and a public one would be looked up.
_PAGE = const(256)
_FF = const(0xFF)


class Cursor:
    """A segment read as a file (seek, readinto, read): what Journal._read_record reads."""

    def __init__(self, region, base, scratch=None):
        self.region = region
        self.base = base
        self.pos = 0
        self.scratch = scratch  # RegionJournal.scratch: where a long payload is read

    def seek(self, off):
        self.pos = off

    def readinto(self, buf):
        self.region.read(self.base + self.pos, buf)
        self.pos += len(buf)
        return len(buf)

    def read(self, n):
        # With a scratch buffer (the boot's: RegionJournal.scratch), a view of it, valid
        # until the next record is read; else the bytearray itself, not a bytes copy of
        # it (a copy wanted a second block of n beside the first). A stock image's boot
        # after two six-seat Pai Gow rounds had no 2.3 KB block left for their
        # settlement's record (boot_failed: MemoryError, 2026-12-06).
        s = self.scratch
        if s is not None and n <= len(s):
            out = memoryview(s)[:n]
        else:
            out = bytearray(n)
        self.readinto(out)
        return out

    def close(self):
        pass


# -- recovery --
def open_region(j, lazy=False):
    """Find the journal on the region (one header per segment, the newest segment's
    records). Returns {'torn': bytes of a torn append left behind, 'dropped': 0,
    'fixed': 0, 'pruned': 0}. lazy=False also checks every older record now (else
    verify() does, from the idle passes). Raises JournalCorrupt."""
    j.release()
    j._segs = []
    j._state = "closed"
    j._vnum = 0
    j._dirty = False
    j._bpos = -1
    j.high_seq = 0
    report = {"torn": 0, "dropped": 0, "fixed": 0, "pruned": 0}
    try:
        j._load_commit()
        j._meta_saved = dict(j.meta)
        heads = headers(j)
        if j._top_pos >= 0:
            chain(j, heads, report)
        last = j._segs[-1].last if j._segs else 0
        if last < j.committed:
            raise JournalCorrupt("truncated", "region ends at seq %d, %d were written"
                                 % (last, j.committed))
        if j.retain and j._segs and j._segs[0].first > j.acked + 1 and \
                j.acked:
            # Segments go only once acknowledged: an older one is missing (damage).
            raise JournalCorrupt("missing_segment", "records %d..%d"
                                 % (j.acked + 1, j._segs[0].first - 1))
    except JournalCorrupt:
        j._state = "corrupt"
        raise
    j.next_seq = j._segs[-1].last + 1 if j._segs else \
        max(j.high_seq, j.committed) + 1
    j._state = "open"
    if not lazy:
        while j.verify(64):
            pass
    return report


def headers(j):
    """[(number, first, start) or None] per position; notes the top number."""
    buf = j._rbuf
    mv = memoryview(buf)[:SEG_HDR]
    heads = []
    j._top = 0
    j._top_pos = -1
    for pos in range(j.nseg):
        j.region.read(j._base(pos), mv)
        got = seg_header(buf)
        h = None
        if got is not None and got[0] in (SEG_START, SEG_MAGIC):
            magic, number, first = got
            h = (number, first, magic == SEG_START)
            if number > j._top:
                j._top, j._top_pos = number, pos
            j.high_seq = max(j.high_seq, first - 1)
        heads.append(h)
    return heads


def chain(j, heads, report):
    pos = j._top_pos
    number, first, start = heads[pos]
    seg = scan_newest(j, pos, number, first, report)
    segs = [seg]
    while not start and len(segs) < j.nseg:
        pos = (pos - 1) % j.nseg
        h = heads[pos]
        if h is None or h[0] != number - 1 or h[1] >= first:
            break
        number, first, start = h
        older = Seg(number, first, segs[0].first - 1, j.segment_size)
        older.pos = pos
        older.vend, older.vseq = j.segment_size, segs[0].first  # verify()'s
        segs.insert(0, older)
    j._segs = segs


def scan_newest(j, pos, number, first, report):
    """Read the newest segment's records to its end: erased flash, or a torn append
    (which must look like one, else JournalCorrupt)."""
    seg = Seg(number, first, first, SEG_HDR)
    seg.pos = pos
    size = j.segment_size
    base = j._base(pos)
    cur = Cursor(j.region, base)
    name = j._name(number)
    # Read whole from its newest checkpoint on (what replay needs, where a torn append
    # can be); the records before it are verify()'s.
    off, seq = hop(j, base, first)
    if off > SEG_HDR:
        seg.vend, seg.vseq = off, seq
    while off < size:
        cur.seek(off)
        try:
            r = j._read_record(cur, name, off, size, seq, seq == first)
        except JournalCorrupt:
            r = -1
        if r < 0 and erased_from(j, base, off):
            break  # the end: nothing was started here
        if r < 0:
            try:
                if seq == first:  # the header is written after the whole snapshot
                    raise corrupt("bad_snapshot", name, off)
                report["torn"] += torn(j, base, off, seq, name)
            except JournalCorrupt:
                salvage_high(j, base, off)
                raise
            j._dirty = True
            break
        if j._kind == KIND_SNAPSHOT:
            seg.note_cp(seq, off)
        off += r
        j.high_seq = max(j.high_seq, seq)
        seq += 1
    if seq == first:
        raise corrupt("bad_snapshot", name, off)
    seg.size, seg.last = off, seq - 1
    j._set_tail(base + off)
    return seg


def hop(j, base, seq):
    """(offset, seq) of the newest snapshot record in the segment at base, found by
    reading record headers only (magic, seq and header check), from its first record
    to the first header that does not hold: a boot reads a segment's headers, not its
    payloads (on a Pico a record read whole is ~1 ms of the boot's 400)."""
    buf = j._rbuf
    mv = memoryview(buf)[:HDR]
    h8 = memoryview(buf)[:8]
    at, at_seq = SEG_HDR, seq
    off = SEG_HDR
    size = j.segment_size
    while off + HDR <= size:
        j.region.read(base + off, mv)
        magic, kind, rseq, length = struct.unpack_from(REC_FMT, buf, 0)
        if magic != MAGIC or rseq != seq or length > j.max_payload or \
                struct.unpack_from("<H", buf, 8)[0] != crc32(h8) & 0xFFFF:
            break
        if kind == KIND_SNAPSHOT:
            at, at_seq = off, seq
        off += OVERHEAD + length
        seq += 1
    return at, at_seq


def erased_from(j, base, off):
    """Is everything from off to the end of its page erased (nothing started there)?"""
    buf = j._rbuf
    page = off & ~(_PAGE - 1)
    j.region.read(base + page, buf)
    for i in range(off - page, _PAGE):
        if buf[i] != _FF:
            return False
    return True


def torn(j, base, off, seq, name):
    """The bytes from off must be one append cut short: whole pages of a valid prefix
    of record `seq`, then (page L) whatever a cut page program leaves, then erased
    pages. Returns the bytes spoiled; raises JournalCorrupt for anything else."""
    size = j.segment_size
    buf = j._rbuf
    mv = memoryview(buf)
    last = off & ~(_PAGE - 1)  # the last page not erased (L)
    p = last + _PAGE
    while p < size:
        j.region.read(base + p, buf)
        if buf == j._ff:
            break
        last = p
        p += _PAGE
    # After L: nothing but erased pages up to the record's largest possible end.
    limit = min(size, off + OVERHEAD + j.max_payload + _PAGE)
    q = p
    while q < limit:
        j.region.read(base + q, buf)
        if buf != j._ff:
            raise corrupt("bad_record", name, off, " (not a torn append)")
        q += _PAGE
    # (A record's payload is text, so a programmed page is never all 0xFF.)
    whole = last - off  # bytes of the record in pages programmed whole
    if whole > 0:
        n = min(whole, HDR)
        j.region.read(base + off, mv[:n])
        ok = buf[0] == MAGIC and (n < 2 or buf[1] in (KIND_RECORD, KIND_SNAPSHOT))
        if ok and n >= 6:
            ok = struct.unpack_from("<I", buf, 2)[0] == seq
        if ok and n == HDR:
            length = struct.unpack_from("<H", buf, 6)[0]
            ok = struct.unpack_from("<H", buf, 8)[0] == crc32(mv[:8]) & 0xFFFF and \
                length <= j.max_payload and off + OVERHEAD + length > last
        if not ok:
            raise corrupt("bad_record", name, off, " (not a torn append)")
    return last + _PAGE - off


def salvage_high(j, base, off):
    # Damage in the newest segment: the seqs written after it still count for
    # quarantine()'s numbering (no seq is ever used twice), so look for record
    # headers past it whose header check holds.
    buf = bytearray(_PAGE + HDR)
    mv = memoryview(buf)
    for p in range(off & ~(_PAGE - 1), j.segment_size, _PAGE):
        k = min(_PAGE + HDR, j.segment_size - p)
        j.region.read(base + p, mv[:k])
        i = buf.find(b"\xa5")
        while 0 <= i <= k - HDR:
            if struct.unpack_from("<H", buf, i + 8)[0] == crc32(mv[i:i + 8]) & 0xFFFF:
                j.high_seq = max(j.high_seq, struct.unpack_from("<I", buf, i + 2)[0])
            i = buf.find(b"\xa5", i + 1)


# -- checking what open(lazy=True) left --
def verify(j, n=4):
    """Check up to `n` more records of the segments open() did not read, oldest
    first. Returns the bytes (an estimate: a segment's size until it is read) still
    unchecked. Raises JournalCorrupt (the journal then refuses use)."""
    seg = j._to_verify()
    if seg is None:
        return 0
    if j._vnum != seg.number:
        j._vnum, j._voff, j._vseq = seg.number, SEG_HDR, seg.first
    off, seq = j._voff, j._vseq
    cur = Cursor(j.region, j._base(seg.pos))
    name = j._name(seg.number)
    try:
        while n > 0 and seq < seg.vseq:
            cur.seek(off)
            r = j._read_record(cur, name, off, j.segment_size, seq,
                               seq == seg.first)
            if r < 0:
                raise corrupt("bad_record", name, off)
            if j._kind == KIND_SNAPSHOT:
                seg.note_cp(seq, off)
            off += r
            seq += 1
            n -= 1
    except JournalCorrupt:
        j._state = "corrupt"
        raise
    if seq >= seg.vseq:
        if seg is not j._segs[-1]:
            seg.size = off  # (the newest's size is known: open() read its end)
        seg.vend = 0
        j._vnum = 0
    j._voff, j._vseq = off, seq
    return j.unchecked
