# The journal's records on flash (docs/journal.md, "Journal records", with a worked hex
# example): one format for both journals (pitboss.store.journal on segment files,
# pitboss.store.ringjournal on a flash region), and for host_tools/table/export.py, which
# rebuilds an exported record's CRC-32 with frame().
#
# record: magic u8, kind u8, seq u32, len u16, hchk u16 (low 16 bits of CRC-32 of the
# first 8 bytes); then payload; then CRC-32 (u32) of header + payload. Little-endian.
# hchk exists so that a damaged *length* in the last record of the newest segment reads as
# corruption instead of as a torn append (which would silently drop an acknowledged
# record); the trailing CRC alone cannot tell the two apart.
# segment header: 4-byte magic, u32 segment number, u32 first seq, u32 CRC-32 of the 12
# bytes before it.
#
# The names are public because both journals use them: a const() named with an
# underscore cannot be imported on MicroPython. What reading them can raise, and which
# records the journal keeps for recall, are here too: every journal module needs them.
import json
import struct
import sys
from binascii import crc32
from pitboss.compat import const
from pitboss.store.osfs import readfull
from array import array


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


def corrupt(reason, path, off, extra=""):
    # Built only on the error path: the scan itself formats no strings.
    return JournalCorrupt(reason, "%s@%d%s" % (path, off, extra))


RECALL_MAX = 50  # recall's most; the journal keeps them while its flash budget allows
# ... and never deletes a segment holding one of the last RECALL_HELD settlements (issue
# 5: recall shows at least the last 10 rounds). Holding all 50 stopped a full table for
# good: 50 seven-seat Three Card Prime rounds (~8.5 KB each, cards and wagers included)
# outgrew the budget, so no segment could go even once exported, and journal_full
# could never be cleared (found by the emulated Pico's 200-round session, 2026-12-02).
RECALL_HELD = const(10)


def loads(payload):
    """json.loads of a record's payload, whatever bytes-like it was read as: MicroPython's
    takes any buffer (a view of the boot's scratch, RegionJournal.scratch), CPython's no
    memoryview."""
    try:
        return json.loads(payload)
    except TypeError:
        return json.loads(bytes(payload))


def is_settle(kind, payload):
    # A round's end: settled, or voided after a misdeal (recall shows both).
    return b'"ev":"settle"' in payload or b'"ev":"void"' in payload


MAGIC = const(0xA5)  # neither erased flash (0xFF) nor zeroed flash (0x00)
KIND_RECORD = const(0x52)  # 'R': an event from the table
KIND_SNAPSHOT = const(0x53)  # 'S': the first record of every segment, and checkpoints
HDR = const(10)
OVERHEAD = const(14)  # header + CRC
REC_FMT = "<BBIH"
SEG_MAGIC = b"PBJ1"  # a segment (on a region: one continuing the segment before it)
SEG_START = b"PBJ0"  # on a region: a segment starting a journal (fresh, or after quarantine)
SEG_HDR = const(16)
SEG_FMT = "<4sII"
CHUNK = const(256)  # the read buffer: a header, or a piece of a record's payload


# A record's header and CRC values in native code where the port has a native emitter
# (pitboss/store/recnative.py, @micropython.viper: the Pico, the ESP32), looked up when the
# first record is written: None until then, False where there is none (CPython, the
# WebAssembly VM). binascii.crc32 returns a 32-bit int, a heap object on MicroPython
# above 2**30 (3 values in 4): three a record were ~240 B of each dealt card's garbage on
# the Pico (issue 27). The same CRC in bytecode took ~1 ms a card record there.
_nat = None


def native():
    """recnative (its frame(buf, data, n, kind, seq) writes what frame() below writes, and
    allocates nothing), or False where the port has no native code."""
    global _nat
    if _nat is None:
        _nat = False
        if sys.implementation.name == "micropython":
            try:
                from pitboss.store import recnative
                _nat = recnative
            except (ImportError, SyntaxError):  # not flashed / no native emitter here
                pass
    return _nat


def frame(buf, h8, head, kind, seq, data):
    """A record's header into buf[:HDR] and its CRC-32 into buf[HDR:OVERHEAD], for writing
    as header, payload, CRC: three writes in order, one record (a cut leaves a prefix of
    it, as a cut inside one write does), and the payload never copied. buf is the
    writer's, allocated once (a record per dealt card), h8 and head views of its first 8
    and HDR bytes made with it: nothing is allocated here but, without native code, the
    CRC values."""
    nat = _nat if _nat is not None else native()
    if nat:
        nat.frame(buf, data, len(data), kind, seq)  # pyright: ignore[reportAttributeAccessIssue]
        return
    struct.pack_into(REC_FMT, buf, 0, MAGIC, kind, seq, len(data))
    struct.pack_into("<H", buf, 8, crc32(h8) & 0xFFFF)
    struct.pack_into("<I", buf, HDR, crc32(data, crc32(head)))


def pack_seg_header(buf, magic, number, first):
    """A segment header into buf[:SEG_HDR]."""
    struct.pack_into(SEG_FMT, buf, 0, magic, number, first)
    struct.pack_into("<I", buf, 12, crc32(memoryview(buf)[:12]))


def seg_header(buf):
    """(magic, number, first seq) of the segment header in buf[:SEG_HDR], or None where its
    CRC-32 does not hold."""
    magic, number, first = struct.unpack_from(SEG_FMT, buf, 0)
    (hcrc,) = struct.unpack_from("<I", buf, 12)
    if hcrc != crc32(memoryview(buf)[:12]):
        return None
    return magic, number, first


def read_record(j, f, path, off, size, seq, first, keep=False):
    """Journal._read_record (bound in its class; j is the journal): read and check the
    record at off (f positioned there, read into j._rbuf). Returns its length, or -1 if
    the rest of the file is a valid prefix of record `seq` (a torn append). Raises
    JournalCorrupt for anything else. Its kind and CRC are left in j._kind and j._crc,
    and with keep=True its payload (bytes-like) in j._payload."""
    buf = j._rbuf
    mv = memoryview(buf)
    avail = size - off
    n = readfull(f, mv[:min(HDR, avail)])
    if n < HDR:
        # Torn inside the header: every byte there must be what record `seq` has
        # (a record or, past the first, a checkpoint's snapshot).
        if n < avail:
            raise corrupt("bad_record", path, off)
        want = struct.pack("<BBI", MAGIC, KIND_SNAPSHOT if first else buf[1], seq)
        if bytes(mv[:min(n, 6)]) != want[:min(n, 6)] or (
                n > 1 and not first and buf[1] not in (KIND_RECORD, KIND_SNAPSHOT)):
            raise corrupt("bad_record", path, off)
        return -1
    magic, kind, rseq, length = struct.unpack_from(REC_FMT, buf, 0)
    (hchk,) = struct.unpack_from("<H", buf, 8)
    if magic != MAGIC or hchk != crc32(mv[:8]) & 0xFFFF or length > j.max_payload:
        raise corrupt("bad_record", path, off)
    if first and kind != KIND_SNAPSHOT:
        raise corrupt("bad_snapshot", path, off)
    if not first and kind != KIND_RECORD and kind != KIND_SNAPSHOT:
        raise corrupt("bad_record", path, off)
    if rseq != seq:
        raise corrupt("sequence_gap", path, off, " (seq %d, expected %d)" % (rseq, seq))
    total = OVERHEAD + length
    if avail < total:
        # A complete, j-consistent header and a body cut short: a torn append.
        return -1
    crc = crc32(mv[:HDR])
    if length + 4 <= CHUNK:
        # Most records: payload and CRC in one read (each read is ~0.3 ms of a
        # Pico's littlefs, whatever its size).
        if readfull(f, mv[:length + 4]) != length + 4:
            raise corrupt("bad_record", path, off)
        crc = crc32(mv[:length], crc)
        (stored,) = struct.unpack_from("<I", buf, length)
        if stored != crc:
            raise corrupt("bad_record", path, off)
        if keep:
            j._payload = bytes(mv[:length])
        j._kind = kind
        j._crc = stored
        return total
    if keep:  # the payload the caller keeps: read as one object (bytes, or a region's
        # bytearray), no copy
        data = f.read(length)
        if len(data) != length:
            raise corrupt("bad_record", path, off)
        crc = crc32(data, crc)
        j._payload = data
    else:
        left = length
        while left:
            k = min(left, CHUNK)
            if readfull(f, mv[:k]) != k:
                raise corrupt("bad_record", path, off)
            crc = crc32(mv[:k], crc)
            left -= k
    if readfull(f, mv[:4]) != 4:
        raise corrupt("bad_record", path, off)
    (stored,) = struct.unpack_from("<I", buf, 0)
    if stored != crc:
        raise corrupt("bad_record", path, off)
    j._kind = kind
    j._crc = stored
    return total


# ---- segments in RAM ------------------------------------------------------------
# A segment of the journal as RAM knows it (both journals: pitboss.store.journal,
# pitboss.store.ringjournal): its seqs and size, where its snapshot records (checkpoints)
# are, and what open(lazy=True) left for verify().
# Checkpoints remembered per segment (8 bytes each): at one per 2 KB of a 64 KB segment,
# every one; past that, reading begins at an earlier one.
_MAX_CPS = const(40)
TO_EOF = const(0x7FFFFFFF)  # a size/vend not looked up yet: the file's size (Journal._sized())


class Seg:
    __slots__ = ("number", "first", "last", "size", "snap", "snap_off", "cps", "vend",
                 "vseq", "hdr_ok", "pos")

    def __init__(self, number, first, last, size, snap=None, snap_off=SEG_HDR):
        self.number = number
        self.first = first  # seq of its snapshot record
        self.last = last  # seq of its last record
        self.size = size  # bytes of valid records (+ header)
        self.snap = first if snap is None else snap  # its newest snapshot (a checkpoint)
        self.snap_off = snap_off  # ... and where that record starts
        # Where reading may begin: (seq, offset) of each snapshot record known so far,
        # flattened (recall and meters' recovery seek to the nearest one before them).
        self.cps = array("I", (first, SEG_HDR))
        # Left unchecked by open(lazy=True): records from the start up to offset vend
        # (0: none), where record vseq must begin (verify() checks them).
        self.vend = 0
        self.vseq = 0
        self.hdr_ok = True  # False: its header is verify()'s to check (open from commit)
        # (pos: its position on a flash region, set by pitboss.store.ringjournal only)

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
