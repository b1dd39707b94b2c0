# Reading the journal back (pitboss.store.journal): a segment's header, one record at a
# time with a running CRC, records from a seq on, the replay from the newest snapshot,
# the last n matching records, and the check of what open(lazy=True) left. Functions of
# the Journal (its methods: Journal.records = records); the record format is here.
import struct
from array import array
from binascii import crc32

from pitboss.compat import const
from pitboss.store.osfs import readfull

# ---- record framing -------------------------------------------------------------------
# header: magic u8, kind u8, seq u32, len u16, hchk u16 (low 16 bits of CRC-32 of the
# first 8 bytes); then payload; then CRC-32 (u32) of header + payload. Little-endian.
# hchk exists so that a damaged *length* in the last record of the newest segment reads as
# corruption instead of as a torn append (which would silently drop an acknowledged
# record); the trailing CRC alone cannot tell the two apart.
_MAGIC = const(0xA5)  # neither erased flash (0xFF) nor zeroed flash (0x00)
KIND_RECORD = const(0x52)  # 'R': an event from the table
KIND_SNAPSHOT = const(0x53)  # 'S': the first record of every segment, and checkpoints
_HDR = const(10)
_OVERHEAD = const(14)  # header + CRC
_REC_FMT = "<BBIH"
# segment header: b"PBJ1", u32 segment number, u32 first seq, u32 CRC-32 of the 12 bytes
_SEG_MAGIC = b"PBJ1"
_CHUNK = const(256)  # the read buffer: a header, or a piece of a record's payload
_SEG_HDR = const(16)
_SEG_FMT = "<4sII"
_SUFFIX = ".jnl"
_FIX = ".fix"  # a repaired copy of the newest segment, being renamed over it
_BAD = ".bad"  # a segment set aside by quarantine()
# Checkpoints remembered per segment (8 bytes each): at one per 2 KB of a 64 KB segment,
# every one; past that, reading begins at an earlier one.
_MAX_CPS = const(40)
_TO_EOF = const(0x7FFFFFFF)  # a size/vend not looked up yet: the file's size (_sized())


class JournalError(Exception):
    """The journal cannot be used (not opened, a write failed, bad arguments)."""


class JournalCorrupt(JournalError):
    """Damage recovery must not guess about. reason: bad_segment_header, bad_record,
    sequence_gap, missing_segment, bad_snapshot, truncated (fewer records than the commit
    record says were written), bad_commit; where: file and offset."""

    def __init__(self, reason, where=""):
        super().__init__("journal corrupt: %s at %s" % (reason, where))
        self.reason = reason
        self.where = where


class JournalFull(JournalError):
    """A new segment is needed but the oldest one holds records not yet exported and
    acknowledged (or still needed for recall): nothing is deleted, the append refused."""


# ---- the journal -----------------------------------------------------------------------
class _Seg:
    __slots__ = ("number", "first", "last", "size", "snap", "snap_off", "cps", "vend",
                 "vseq", "hdr_ok")

    def __init__(self, number, first, last, size, snap=None, snap_off=_SEG_HDR):
        self.number = number
        self.first = first  # seq of its snapshot record
        self.last = last  # seq of its last record
        self.size = size  # bytes of valid records (+ header)
        self.snap = first if snap is None else snap  # its newest snapshot (a checkpoint)
        self.snap_off = snap_off  # ... and where that record starts
        # Where reading may begin: (seq, offset) of each snapshot record known so far,
        # flattened (recall and meters' recovery seek to the nearest one before them).
        self.cps = array("I", (first, _SEG_HDR))
        # Left unchecked by open(lazy=True): records from the start up to offset vend
        # (0: none), where record vseq must begin (verify() checks them).
        self.vend = 0
        self.vseq = 0
        self.hdr_ok = True  # False: its header is verify()'s to check (open from commit)

    def note_cp(self, seq, off):
        if seq >= self.snap:
            self.snap, self.snap_off = seq, off
        cps = self.cps
        i = len(cps)
        if i >= _MAX_CPS * 2:
            return
        # Kept in seq order: verify() finds the older checkpoints of the newest segment
        # after open() noted its newer ones.
        j = i
        while j > 0 and cps[j - 2] > seq:
            j -= 2
        if j > 0 and cps[j - 2] == seq:
            return  # known already
        cps.append(0)
        cps.append(0)
        while i > j:
            cps[i] = cps[i - 2]
            cps[i + 1] = cps[i - 1]
            i -= 2
        cps[j] = seq
        cps[j + 1] = off

    def seek(self, seq):
        """(seq, offset) of the newest known snapshot record at or before `seq`."""
        cps = self.cps
        i = len(cps) - 2
        while i > 0 and cps[i] > seq:
            i -= 2
        return cps[i], cps[i + 1]


def _header(j, num, expect):
    # The segment header of a segment whose records are not read now.
    path = j._name(num)
    mv = memoryview(j._rbuf)
    try:
        f = j.fs.open(path, "rb")
    except OSError:
        raise JournalCorrupt("missing_segment", path)
    try:
        got = readfull(f, mv[:_SEG_HDR])
    finally:
        f.close()
    if got < _SEG_HDR:
        raise JournalCorrupt("bad_segment_header", path)
    first = j._check_header(path, num, expect)
    return _Seg(num, first, first, _SEG_HDR)


def _check_header(j, path, num, expect):
    buf = j._rbuf
    magic, number, first = struct.unpack_from(_SEG_FMT, buf, 0)
    (hcrc,) = struct.unpack_from("<I", buf, 12)
    if magic != _SEG_MAGIC or hcrc != crc32(memoryview(buf)[:12]) or number != num:
        raise JournalCorrupt("bad_segment_header", path)
    j.high_seq = max(j.high_seq, first - 1)
    if expect is not None and first != expect:
        raise JournalCorrupt("sequence_gap", "%s (starts at %d, expected %d)"
                             % (path, first, expect))
    return first


def _read_record(j, f, path, off, size, seq, first, keep=False):
    """Read and check the record at off (f positioned there). Returns its length, or
    -1 if the rest of the file is a valid prefix of record `seq` (a torn append).
    Raises JournalCorrupt for anything else. Its kind and CRC are left in _kind and
    _crc, and with keep=True its payload (bytes) in _payload."""
    buf = j._rbuf
    mv = memoryview(buf)
    avail = size - off
    n = readfull(f, mv[:min(_HDR, avail)])
    if n < _HDR:
        # Torn inside the header: every byte there must be what record `seq` has
        # (a record or, past the first, a checkpoint's snapshot).
        if n < avail:
            raise _corrupt("bad_record", path, off)
        want = struct.pack("<BBI", _MAGIC, KIND_SNAPSHOT if first else buf[1], seq)
        if bytes(mv[:min(n, 6)]) != want[:min(n, 6)] or (
                n > 1 and not first and buf[1] not in (KIND_RECORD, KIND_SNAPSHOT)):
            raise _corrupt("bad_record", path, off)
        return -1
    magic, kind, rseq, length = struct.unpack_from(_REC_FMT, buf, 0)
    (hchk,) = struct.unpack_from("<H", buf, 8)
    if magic != _MAGIC or hchk != crc32(mv[:8]) & 0xFFFF or length > j.max_payload:
        raise _corrupt("bad_record", path, off)
    if first and kind != KIND_SNAPSHOT:
        raise _corrupt("bad_snapshot", path, off)
    if not first and kind != KIND_RECORD and kind != KIND_SNAPSHOT:
        raise _corrupt("bad_record", path, off)
    if rseq != seq:
        raise _corrupt("sequence_gap", path, off, " (seq %d, expected %d)" % (rseq, seq))
    total = _OVERHEAD + length
    if avail < total:
        # A complete, j-consistent header and a body cut short: a torn append.
        return -1
    crc = crc32(mv[:_HDR])
    if length + 4 <= _CHUNK:
        # Most records: payload and CRC in one read (each read is ~0.3 ms of a
        # Pico's littlefs, whatever its size).
        if readfull(f, mv[:length + 4]) != length + 4:
            raise _corrupt("bad_record", path, off)
        crc = crc32(mv[:length], crc)
        (stored,) = struct.unpack_from("<I", buf, length)
        if stored != crc:
            raise _corrupt("bad_record", path, off)
        if keep:
            j._payload = bytes(mv[:length])
        j._kind = kind
        j._crc = stored
        return total
    if keep:  # the payload the caller keeps: read as one bytes object, no copy
        data = f.read(length)
        if len(data) != length:
            raise _corrupt("bad_record", path, off)
        crc = crc32(data, crc)
        j._payload = data
    else:
        left = length
        while left:
            k = min(left, _CHUNK)
            if readfull(f, mv[:k]) != k:
                raise _corrupt("bad_record", path, off)
            crc = crc32(mv[:k], crc)
            left -= k
    if readfull(f, mv[:4]) != 4:
        raise _corrupt("bad_record", path, off)
    (stored,) = struct.unpack_from("<I", buf, 0)
    if stored != crc:
        raise _corrupt("bad_record", path, off)
    j._kind = kind
    j._crc = stored
    return total


def records(j, start_seq=0):
    """Yield (seq, kind, payload_bytes) in sequence order from start_seq (or the
    oldest kept record), reading one record at a time."""
    for rec in j.records_crc(start_seq):
        yield rec[:3]


def records_crc(j, start_seq=0):
    """As records(), with each record's stored CRC-32 as a fourth item (an export)."""
    j._ready()
    for seg in list(j._segs):
        if seg.last < start_seq:
            continue
        # From the newest checkpoint at or before start_seq, not the segment's start
        # (recall and meters' recovery read a round or two, not a segment).
        at_seq, at = seg.seek(start_seq)
        for rec in j._iter_segment(seg, start_seq, at, at_seq):
            yield rec


def replay(j):
    """Recovery: the newest snapshot (a checkpoint, or the newest segment's first
    record), then every record after it."""
    j._ready()
    if not j._segs:
        return iter(())
    return j._replay(j._segs[-1])


def _replay(j, seg):
    for rec in j._iter_segment(seg, seg.snap, seg.snap_off, seg.snap):
        yield rec[:3]


def last(j, n, match=None, seqs=False, tick=None):
    """The last n records (or the last n for which match(kind, payload) is true), oldest
    first, reading segments newest first; only n payloads are held in RAM. seqs=True:
    only their seqs (no payload held: 50 Pai Gow settlements are ~115 KB, half a
    Pico's heap). tick(), if given, is called for every record read (the main loop's
    watchdog: a scan of 8 full segments takes seconds on a chip)."""
    j._ready()
    if not isinstance(n, int) or n < 0:
        raise ValueError("n must be an int >= 0")
    out = []
    for seg in reversed(j._segs):
        need = n - len(out)
        if need <= 0:
            break
        ring = []
        pos = 0
        for rec in j._iter_segment(seg, 0):
            if tick is not None:
                tick()
            if match is not None and not match(rec[1], rec[2]):
                continue
            rec = rec[0] if seqs else rec[:3]
            if len(ring) < need:
                ring.append(rec)
            else:
                ring[pos] = rec
                pos = (pos + 1) % need
        out = ring[pos:] + ring[:pos] + out
    return out


def _iter_segment(j, seg, start_seq, start_off=_SEG_HDR, off_seq=None):
    """The segment's records from start_seq. Reading begins at its start, or at
    start_off where record off_seq (<= start_seq; a checkpoint) begins, so the
    records before that are not read."""
    path = j._name(seg.number)
    j._sized(seg)
    f = j.fs.open(path, "rb")
    try:
        if not seg.hdr_ok and start_off == _SEG_HDR:
            # Read from its start: its header too (open(lazy=True) did not read it).
            j._header(seg.number, seg.first)
            seg.hdr_ok = True
        f.seek(start_off)
        off = start_off
        seq = seg.first if off_seq is None else off_seq
        while off < seg.size:
            keep = seq >= start_seq
            r = j._read_record(f, path, off, seg.size, seq, seq == seg.first, keep)
            if r < 0:  # it was whole at open(): changed under us
                raise _corrupt("bad_record", path, off)
            if keep:
                data, j._payload = j._payload, b""
                yield (seq, j._kind, data, j._crc)
            off += r
            seq += 1
        if seq != seg.last + 1:
            # Only a segment open(lazy=True) has not read yet can end elsewhere than
            # where the next one begins: damage.
            raise _corrupt("sequence_gap", path, off, " (ends at seq %d, expected %d)"
                           % (seq - 1, seg.last))
    except JournalCorrupt:
        # Damage found by a read (a segment open(lazy=True) had not checked yet, or
        # flash changed since): the journal refuses use, as after open().
        j._state = "corrupt"
        raise
    finally:
        f.close()


def unchecked(j):
    """Bytes of records open(lazy=True) left for verify() (0: all checked)."""
    n = 0
    for seg in j._segs:
        if seg.vend:
            n += j._sized(seg).vend - (j._voff if j._vnum == seg.number
                                          else _SEG_HDR)
    return n


def verify(j, n=4):
    """Check up to `n` more records that open(lazy=True) left unchecked, oldest
    first. Returns the bytes still unchecked (0: the journal is wholly checked, as
    open() would have). Raises JournalCorrupt (the journal then refuses use, as after
    open())."""
    if j._state != "open":
        return 0
    for seg in j._segs:
        if seg.vend:
            break
    else:
        return 0
    path = j._name(seg.number)
    try:
        if j._vnum != seg.number:
            j._sized(seg)
            if not seg.hdr_ok:
                j._header(seg.number, seg.first)
                seg.hdr_ok = True
            j._vnum, j._voff, j._vseq = seg.number, _SEG_HDR, seg.first
        off, seq = j._voff, j._vseq
        f = j.fs.open(path, "rb")
        try:
            f.seek(off)
            while n > 0 and off < seg.vend:
                r = j._read_record(f, path, off, seg.vend, seq, seq == seg.first)
                if r < 0:
                    raise _corrupt("bad_record", path, off)
                if j._kind == KIND_SNAPSHOT:
                    seg.note_cp(seq, off)
                off += r
                seq += 1
                n -= 1
        finally:
            f.close()
        if off >= seg.vend:
            if seq != seg.vseq:
                raise _corrupt("sequence_gap", path, off, " (seq %d, expected %d)"
                               % (seq, seg.vseq))
            seg.vend = 0
            j._vnum = 0
    except JournalCorrupt:
        j._state = "corrupt"
        raise
    j._voff, j._vseq = off, seq
    return j.unchecked


def _corrupt(reason, path, off, extra=""):
    # Built only on the error path: the scan itself formats no strings.
    return JournalCorrupt(reason, "%s@%d%s" % (path, off, extra))


def _number(name):
    """NNNNNNNN.jnl/.fix/.bad -> NNNNNNNN, anything else -> -1."""
    if len(name) != 12 or name[8:] not in (_SUFFIX, _FIX, _BAD):
        return -1
    digits = name[:8]
    for c in digits:
        if c < "0" or c > "9":
            return -1
    return int(digits)


def _name_of(num, suffix):
    return "%08d%s" % (num, suffix)
