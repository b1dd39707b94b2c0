# The table's journal: every round event (configuration, card in, hand set, settlement)
# appended to flash before the controller answers or acts on it outside the engine, so
# that a power cut never loses or invents a round (docs/journal.md has the format with a
# worked hex example).
#
# Why this is safe
# ----------------
# The journal only ever does four things to flash, and each has an all-or-nothing
# reading:
#   1. append one whole record to the newest segment, then flush + sync before the
#      caller is told the record exists (a record counts only once complete and valid);
#   2. create a new segment with its header and a snapshot record in one write + sync;
#   3. delete the oldest segment, only after step 2 is durable;
#   4. (recovery only) cut a torn tail off the newest segment by copying its valid prefix
#      to NNNNNNNN.fix, syncing, and renaming that over the segment.
# Every record carries its sequence number, a header check and a CRC-32, so recovery can
# tell "the last append never finished" (a valid *prefix* of the next record at the very
# end of the newest segment: discarded, it was never acknowledged) from damage (anything
# else: JournalCorrupt, which the controller turns into a tilt; nothing is guessed).
#
# littlefs (the rp2/esp32 default) is copy-on-write: a file's new contents appear only at
# flush/close, and a power cut before that leaves the previous contents, so 1 and 2 can
# only ever leave the old or the new file, and rename (4) replaces atomically. The torn
# cases below never even arise there; they are handled for FAT and for pessimism.
# FAT: we assume only that a write which returned before a power cut is a prefix of what
# was asked for (bytes in order, no garbage beyond the last written byte once the file
# size is on flash) and that f_sync/os.sync orders data before the directory update.
# MicroPython's FAT rename over an existing file is remove-then-rename, so recovery also
# handles "NNNNNNNN.fix exists, NNNNNNNN.jnl does not" (the .fix is complete: it was synced
# before the remove). A FAT card that reorders or corrupts sectors on power loss is out of
# scope: the CRCs turn that into JournalCorrupt, never into a wrong replay.
#
# Rotation bounds flash use: segments of at most `segment_size` bytes, the last `keep`
# kept. Each segment starts with a snapshot record supplied by the caller (the table's
# state as of every record before it), so replay never needs a deleted segment.
#
# Checkpoints bound the boot: checkpoint() writes another snapshot record inside the
# segment, and replay() starts at the newest snapshot, so a boot re-applies what came
# after it instead of a whole segment (issue 11: a 64 KB segment re-applied took seconds
# of a Pico's boot). A cut inside a checkpoint is a torn append like any other.
#
# open(lazy=True) bounds the rest of it: a boot checks segment headers and the newest
# segment from the checkpoint the commit record names (where a torn append can be); the
# older records are checked when read and by verify(), called from the main loop's idle
# passes, so a full journal opens as fast as an empty one (a full open reads ~14 ms a KB
# on a Pico: seconds for 10 x 64 KB).
#
# The filesystem helpers it writes through are pitboss.store.osfs (OsFS is injectable so tests
# can cut power at any byte); the A/B records for small state are pitboss.store.slots.
import json
import struct
from array import array
from binascii import crc32

from pitboss.compat import const
from pitboss.store.osfs import OsFS, as_bytes, makedirs, readfull
from pitboss.store.slots import SlotCorrupt, Slots

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
_COPY = const(256)  # bytes per step when copying a segment prefix (no big buffers)
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


class Journal:
    """Append-only journal of records in segment files NNNNNNNN.jnl under `path`.

    snapshot: callable(seq) -> str/bytes, the table's state as of every record appended
    so far; called when a new segment starts (the first append, and every rotation) and
    written as record `seq` of kind KIND_SNAPSHOT.

    commit=True keeps an A/B record `<path>/commit` (pitboss.store.slots) saved after every
    append: the last seq written, the seq acknowledged by an export (acknowledge()) and
    `meta`, a few small ints of the owner's (the controller's highest round number). At
    open() a journal that ends before the committed seq was cut (a segment truncated at a
    record boundary, a segment deleted): JournalCorrupt("truncated").

    retain=True never deletes a segment holding a record after the acknowledged seq or at
    or after `hold_from` (the owner's: the oldest record recall must still find); a
    rotation that would have to is refused with JournalFull, and `full` says when the
    last free segment has been started (time to export).
    """

    def __init__(self, path="/journal", snapshot=None, fs=None, segment_size=16384,
                 keep=4, max_payload=1024, commit=False, retain=False):
        if not isinstance(max_payload, int) or not 0 < max_payload <= 0xFFFF:
            raise ValueError("max_payload must be 1..65535")
        if not isinstance(keep, int) or keep < 2:
            raise ValueError("keep must be >= 2 segments")
        if not isinstance(segment_size, int) or \
                segment_size < _SEG_HDR + 2 * (_OVERHEAD + max_payload):
            raise ValueError("segment_size must hold a header, a snapshot and a record")
        self.path = path.rstrip("/") or "/"
        self.snapshot = snapshot
        self.fs = fs or OsFS()
        self.segment_size = segment_size
        self.keep = keep
        self.max_payload = max_payload
        # Small buffers, allocated once: a record is written as header, payload, CRC (no
        # copy of the payload) and read piece by piece with a running CRC, so no buffer
        # the size of the largest record is held (issue 11: two of them were 12 KB of a
        # Pico's heap for good).
        self._wbuf = bytearray(_HDR + 4)  # a record's header, then its CRC
        self._wmv = memoryview(self._wbuf)
        self._wf = None  # the newest segment, kept open by append(hold=True)
        self._rbuf = bytearray(_CHUNK)
        self._kind = 0  # the last record _read_record() read: its kind, CRC, payload
        self._crc = 0
        self._payload = b""
        self._segs = []
        self._next_number = 1
        self.next_seq = 1
        self.high_seq = 0  # highest seq seen by open(), even in a corrupt journal
        self._state = "closed"  # closed / open / corrupt / broken
        self._commit = Slots(self.path + "/commit", self.fs, max_size=256) if commit \
            else None
        self.committed = 0  # the last seq the commit record says was written
        self.acked = 0  # the last seq an export acknowledged
        self.meta = {}  # the owner's small ints, saved in the commit record
        self._cp = None  # the commit record's newest snapshot: [segment, offset, seq]
        self._cend = None  # ... the newest segment's size, and [number, first seqs...]
        self._csegs = None
        self._vnum = 0  # verify(): the segment it is in, the offset and seq it reached
        self._voff = 0
        self._vseq = 0
        self.retain = retain
        self.hold_from = 0  # with retain: records from here on are never deleted (0: none)

    # -- paths --
    def _name(self, number, suffix=_SUFFIX):
        return "%s/%08d%s" % (self.path if self.path != "/" else "", number, suffix)

    @property
    def last_seq(self):
        return self.next_seq - 1

    @property
    def first_seq(self):
        """Seq of the oldest record kept (its segment's snapshot); next_seq if none."""
        return self._segs[0].first if self._segs else self.next_seq

    @property
    def segments(self):
        """[(number, first_seq, last_seq, bytes)], oldest first."""
        return [(s.number, s.first, s.last, self._sized(s).size) for s in self._segs]

    def _sized(self, seg):
        # A sealed segment opened from the commit record: its size is looked up when first
        # needed (a stat is a littlefs path walk, ~3-6 ms on a Pico; a boot needs none).
        if seg.size == _TO_EOF:
            seg.size = self.fs.size(self._name(seg.number))
            if seg.vend == _TO_EOF:
                seg.vend = seg.size
        return seg

    # -- recovery --
    def open(self, lazy=False):
        """Scan, verify and repair the journal. Returns a dict of what recovery did
        ({'torn': bytes discarded, 'dropped': segments removed as torn, 'fixed': leftover
        .fix files handled, 'pruned': old segments removed}). Raises JournalCorrupt (the journal then stays unusable until
        quarantine()).

        lazy=True (a boot): where the commit record names the segments on flash, read
        only what follows the last record it names (where a torn append can be);
        otherwise check every segment's header and the newest segment's records from
        its newest checkpoint. What is not read now (`unchecked` bytes) is checked when
        it is read, and all of it by verify(), which the owner calls until it returns 0
        (the main loop's idle passes). A boot then costs the same whatever the journal
        holds."""
        fs = self.fs
        self.release()
        self._segs = []
        self._state = "closed"
        self._vnum = 0
        report = {"torn": 0, "dropped": 0, "fixed": 0, "pruned": 0}
        makedirs(fs, self.path)
        names = fs.listdir(self.path)
        numbers = []
        top = 0
        for nm in names:
            num = _number(nm)
            if num < 0:
                continue  # not ours (meters.a, notes...): ignored
            top = max(top, num)
            suf = nm[8:]
            if suf == _FIX:
                # A repair was interrupted. Its target still there: the rename did not
                # happen, redo the repair from scratch. Target gone: FAT's rename removed
                # it after the .fix was complete and synced; finish the rename.
                if (_name_of(num, _SUFFIX)) in names:
                    fs.remove(self._name(num, _FIX))
                else:
                    fs.rename(self._name(num, _FIX), self._name(num))
                    numbers.append(num)
                fs.sync_dir(self.path)
                report["fixed"] += 1
            elif suf == _SUFFIX:
                numbers.append(num)
        numbers.sort()
        self._next_number = top + 1
        self.high_seq = 0
        try:
            self._load_commit()
            if not (lazy and self._from_commit(numbers, report)):
                self._segs = []
                self._scan(numbers, report, lazy)
            last = self._segs[-1].last if self._segs else 0
            if last < self.committed:
                # Whole records (or segments) are gone that were written and synced: not
                # something a power cut does. Nothing is guessed.
                raise JournalCorrupt("truncated", "%s ends at seq %d, %d were written"
                                     % (self.path, last, self.committed))
        except JournalCorrupt:
            self._state = "corrupt"
            raise
        while len(self._segs) > self.keep and self._deletable(self._segs[0]):
            # A cut after a rotation's new segment was durable but before the oldest went.
            self._remove_oldest()
            report["pruned"] += 1
        self.next_seq = self._segs[-1].last + 1 if self._segs else \
            max(self.high_seq, self.committed) + 1
        self._state = "open"
        return report

    def _load_commit(self):
        if self._commit is None:
            return
        try:
            text = self._commit.load()
            if text is None:
                c = {"last": 0, "ack": 0, "meta": {}}
            else:
                c = json.loads(text)
            last, ack, meta = c["last"], c["ack"], c["meta"]
            if type(last) is not int or type(ack) is not int or not 0 <= ack <= last \
                    or not isinstance(meta, dict):
                raise ValueError("values")
            cp = c.get("cp")  # [segment, offset, seq] of the newest snapshot record
            end = c.get("end")  # the newest segment's size after record `last`
            segs = c.get("segs")  # [oldest segment's number, each one's first seq...]
            for v, n in ((cp, 3), (segs, 0)):
                if v is not None and (type(v) is not list or (n and len(v) != n) or
                                      [x for x in v if type(x) is not int or x < 0]):
                    raise ValueError("cp/segs")
            if end is not None and (type(end) is not int or end < 0):
                raise ValueError("end")
        except (SlotCorrupt, ValueError, KeyError, TypeError) as e:
            raise JournalCorrupt("bad_commit", "%s/commit: %s" % (self.path, e))
        self._cp = cp
        self._cend = end
        self._csegs = segs
        self.committed = last
        self.acked = ack
        self.meta = meta

    def _save_commit(self, last):
        if self._commit is None:
            return
        c = {"last": last, "ack": self.acked, "meta": self.meta}
        if self._segs:
            # What open(lazy=True) needs to start without reading any segment but the
            # newest one's end: its newest checkpoint, its size, each segment's first seq.
            seg = self._segs[-1]
            c["cp"] = [seg.number, seg.snap_off, seg.snap]
            c["end"] = seg.size
            c["segs"] = [self._segs[0].number] + [x.first for x in self._segs]
        self._commit.save(json.dumps(c))
        self.committed = last

    def _deletable(self, seg):
        if not self.retain:
            return True
        return seg.last <= self.acked and (self.hold_from <= 0 or seg.last < self.hold_from)

    @property
    def full(self):
        """With retain: the last segment the flash budget allows has been started and the
        oldest cannot be deleted yet (export and acknowledge, or the next rotation is
        refused with JournalFull)."""
        return self.retain and len(self._segs) >= self.keep and \
            not self._deletable(self._segs[0])

    def acknowledge(self, seq):
        """An export has stored every record up to `seq` (<= last_seq; never backwards):
        saved in the commit record; segments wholly acknowledged may go at the next
        rotation. Returns the acknowledged seq."""
        self._ready()
        if self._commit is None:
            raise JournalError("acknowledge needs commit=True")
        if type(seq) is not int or not self.acked <= seq <= self.last_seq:
            raise ValueError("ack must be %d..%d, got %r" % (self.acked, self.last_seq, seq))
        if seq != self.acked:
            old = self.acked
            self.acked = seq
            try:
                self._save_commit(self.last_seq)
            except OSError:
                self.acked = old
                raise
        return seq

    def _from_commit(self, numbers, report):
        """open(lazy=True) from the commit record alone: the segments it names are the
        ones on flash, so nothing is read but the newest segment past `end` (a record
        synced before a cut kept the commit record from naming it, or a torn append).
        Everything up to `end` is verify()'s (and any read's) to check, headers included.
        False (nothing changed) where the commit record and the flash do not line up:
        open() then reads the headers and the newest segment itself."""
        cs, cp, end, last = self._csegs, self._cp, self._cend, self.committed
        if not cs or cp is None or end is None or len(cs) != len(numbers) + 1:
            return False
        for i in range(len(numbers)):
            if numbers[i] != cs[0] + i or (i and cs[i + 1] <= cs[i]):
                return False
        num = numbers[-1]
        first = cs[-1]
        if cp[0] != num or not first <= cp[2] <= last or not _SEG_HDR <= cp[1] < end or \
                (cp[2] == first) != (cp[1] == _SEG_HDR):
            return False
        path = self._name(num)
        size = self.fs.size(path)
        if size < end:
            return False  # shorter than it was: open() says what happened
        segs = []
        for i in range(len(numbers) - 1):
            seg = _Seg(numbers[i], cs[i + 1], cs[i + 2] - 1, _TO_EOF)
            seg.vend, seg.vseq, seg.hdr_ok = _TO_EOF, cs[i + 2], False
            segs.append(seg)
        seg = _Seg(num, first, last, end)
        if cp[2] != first:
            seg.note_cp(cp[2], cp[1])
        seg.vend, seg.vseq, seg.hdr_ok = end, last + 1, False
        segs.append(seg)
        if size > end:
            f = self.fs.open(path, "rb")
            try:
                f.seek(end)
                off, seq = end, last + 1
                while off < size:
                    r = self._read_record(f, path, off, size, seq, False)
                    if r < 0:  # torn: the append after the last one committed
                        f.close()
                        report["torn"] += size - off
                        self._truncate(num, off)
                        break
                    if self._kind == KIND_SNAPSHOT:
                        seg.note_cp(seq, off)
                    off += r
                    seq += 1
            except JournalCorrupt:
                return False  # open() reads it all and decides
            finally:
                f.close()
            seg.size, seg.last = off, seq - 1
        self._segs = segs
        self.high_seq = max(self.high_seq, seg.last)
        return True

    def _scan(self, numbers, report, lazy=False):
        expect = None  # the seq the next segment must start with (None: unknown yet)
        segs = self._segs
        for i, num in enumerate(numbers):
            newest = i == len(numbers) - 1
            if i and num != numbers[i - 1] + 1:
                raise JournalCorrupt("missing_segment", _name_of(numbers[i - 1] + 1, _SUFFIX))
            if lazy and not newest:
                # Sealed: its header now, its records later (verify(), or when read). It
                # ends where the next segment begins.
                seg = self._header(num, expect)
                self._seal(seg)
                seg.vend = self.fs.size(self._name(num))
                seg.size = seg.vend
                segs.append(seg)
                expect = None
                continue
            cp = self._cp
            seg = None
            if lazy and cp is not None and cp[0] == num:
                try:
                    seg = self._scan_segment(num, expect, newest, report, cp[1], cp[2])
                except JournalCorrupt:
                    seg = None  # the commit record's checkpoint did not hold: read it all
            if seg is None:
                seg = self._scan_segment(num, expect, newest, report)
            if seg is None:  # the newest segment was a torn rotation: removed
                if segs and segs[-1].vend and segs[-1].vseq == 0:
                    # The segment before it is the newest now, and its end is known only
                    # by reading it (as a sealed segment: a torn record there is damage).
                    prev = segs.pop()
                    segs.append(self._scan_segment(prev.number, None, False, report))
                continue
            self._seal(seg)
            segs.append(seg)
            expect = seg.last + 1

    def _seal(self, seg):
        # The segment before `seg`, if its records are not read yet, ends at seg.first.
        segs = self._segs
        if segs and segs[-1].vend and segs[-1].vseq == 0:
            prev = segs[-1]
            if seg.first <= prev.first:
                raise JournalCorrupt("sequence_gap", "%s (starts at %d, after %d)"
                                     % (self._name(seg.number), seg.first, prev.first))
            prev.last = seg.first - 1
            prev.vseq = seg.first

    def _header(self, num, expect):
        # The segment header of a segment whose records are not read now.
        path = self._name(num)
        mv = memoryview(self._rbuf)
        try:
            f = self.fs.open(path, "rb")
        except OSError:
            raise JournalCorrupt("missing_segment", path)
        try:
            got = readfull(f, mv[:_SEG_HDR])
        finally:
            f.close()
        if got < _SEG_HDR:
            raise JournalCorrupt("bad_segment_header", path)
        first = self._check_header(path, num, expect)
        return _Seg(num, first, first, _SEG_HDR)

    def _check_header(self, path, num, expect):
        buf = self._rbuf
        magic, number, first = struct.unpack_from(_SEG_FMT, buf, 0)
        (hcrc,) = struct.unpack_from("<I", buf, 12)
        if magic != _SEG_MAGIC or hcrc != crc32(memoryview(buf)[:12]) or number != num:
            raise JournalCorrupt("bad_segment_header", path)
        self.high_seq = max(self.high_seq, first - 1)
        if expect is not None and first != expect:
            raise JournalCorrupt("sequence_gap", "%s (starts at %d, expected %d)"
                                 % (path, first, expect))
        return first

    def _scan_segment(self, num, expect, newest, report, at=0, at_seq=0):
        """Check segment `num`'s header and its records, from the start or (at > 0) from
        the snapshot record `at_seq` at offset `at` (the commit record's: the records
        before it are left to verify()). Returns its _Seg, or None if it was the newest
        segment and a torn rotation (removed)."""
        fs = self.fs
        path = self._name(num)
        size = fs.size(path)
        mv = memoryview(self._rbuf)
        f = fs.open(path, "rb")
        try:
            got = readfull(f, mv[:_SEG_HDR])
            if got < _SEG_HDR:
                # Cut while creating the segment: only a prefix of its header exists.
                if newest and not at and _SEG_MAGIC.startswith(bytes(mv[:min(got, 4)])):
                    f.close()
                    self._drop(num, report)
                    return None
                raise JournalCorrupt("bad_segment_header", path)
            first = self._check_header(path, num, expect)
            seg = _Seg(num, first, first, size)
            off = _SEG_HDR
            seq = first
            if at:
                if not (_SEG_HDR < at < size and first < at_seq):
                    raise JournalCorrupt("bad_commit", path)
                f.seek(at)
                off, seq = at, at_seq
                seg.vend, seg.vseq = at, at_seq  # what verify() has to check
            start = seq
            while off < size:
                r = self._read_record(f, path, off, size, seq, seq == start)
                if r < 0:  # torn: a valid prefix of the next record, then end of file
                    if not newest or seq == at_seq:
                        raise _corrupt("bad_record", path, off)
                    f.close()
                    if seq == first:  # not even the snapshot: the rotation was cut
                        self._drop(num, report)
                        return None
                    report["torn"] += size - off
                    self._truncate(num, off)
                    size = off
                    break
                if self._kind == KIND_SNAPSHOT:
                    seg.note_cp(seq, off)
                off += r
                self.high_seq = max(self.high_seq, seq)
                seq += 1
            if seq == first:  # a header and nothing else
                if not newest:
                    raise JournalCorrupt("bad_snapshot", path)
                f.close()
                self._drop(num, report)
                return None
            seg.last = seq - 1
            seg.size = size
            return seg
        finally:
            f.close()

    def _read_record(self, f, path, off, size, seq, first, keep=False):
        """Read and check the record at off (f positioned there). Returns its length, or
        -1 if the rest of the file is a valid prefix of record `seq` (a torn append).
        Raises JournalCorrupt for anything else. Its kind and CRC are left in _kind and
        _crc, and with keep=True its payload (bytes) in _payload."""
        buf = self._rbuf
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
        if magic != _MAGIC or hchk != crc32(mv[:8]) & 0xFFFF or length > self.max_payload:
            raise _corrupt("bad_record", path, off)
        if first and kind != KIND_SNAPSHOT:
            raise _corrupt("bad_snapshot", path, off)
        if not first and kind != KIND_RECORD and kind != KIND_SNAPSHOT:
            raise _corrupt("bad_record", path, off)
        if rseq != seq:
            raise _corrupt("sequence_gap", path, off, " (seq %d, expected %d)" % (rseq, seq))
        total = _OVERHEAD + length
        if avail < total:
            # A complete, self-consistent header and a body cut short: a torn append.
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
                self._payload = bytes(mv[:length])
            self._kind = kind
            self._crc = stored
            return total
        if keep:  # the payload the caller keeps: read as one bytes object, no copy
            data = f.read(length)
            if len(data) != length:
                raise _corrupt("bad_record", path, off)
            crc = crc32(data, crc)
            self._payload = data
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
        self._kind = kind
        self._crc = stored
        return total

    def _drop(self, num, report):
        # The newest segment holds nothing acknowledged (a rotation cut short).
        self.fs.remove(self._name(num))
        self.fs.sync_dir(self.path)
        report["dropped"] += 1

    def _truncate(self, num, length):
        # MicroPython files have no truncate(): copy the valid prefix aside, sync, rename
        # it over the segment. See the module comment for a cut at each step.
        fs = self.fs
        src = fs.open(self._name(num), "rb")
        dst = fs.open(self._name(num, _FIX), "wb")
        mv = memoryview(self._rbuf)
        try:
            left = length
            while left:
                k = readfull(src, mv[:min(_COPY, left, len(mv))])
                if not k:
                    raise JournalError("segment shrank while being repaired")
                dst.write(mv[:k])
                left -= k
            fs.fsync(dst)
        finally:
            dst.close()
            src.close()
        fs.sync_dir(self.path)
        fs.rename(self._name(num, _FIX), self._name(num))
        fs.sync_dir(self.path)

    def _remove_oldest(self):
        seg = self._segs.pop(0)
        self.fs.remove(self._name(seg.number))
        self.fs.sync_dir(self.path)

    # -- writing --
    def _ready(self):
        if self._state != "open":
            raise JournalError("journal is %s: %s" % (
                self._state, "call open()" if self._state == "closed" else
                "recovery needed (tilt; quarantine() to start afresh)"
                if self._state == "corrupt" else "a write failed; reopen"))

    def _frame(self, kind, seq, data):
        """The record's header and its trailing CRC-32 (views of _wbuf, allocated once:
        a record per dealt card), for writing as header, payload, CRC: three writes in
        order, one record (a cut leaves a prefix of it, as a cut inside one write
        does)."""
        buf, mv = self._wbuf, self._wmv
        struct.pack_into(_REC_FMT, buf, 0, _MAGIC, kind, seq, len(data))
        struct.pack_into("<H", buf, 8, crc32(mv[:8]) & 0xFFFF)
        struct.pack_into("<I", buf, _HDR, crc32(data, crc32(mv[:_HDR])))
        return mv[:_HDR], mv[_HDR:]

    def _write_record(self, f, kind, seq, data):
        head, tail = self._frame(kind, seq, data)
        f.write(head)
        f.write(data)
        f.write(tail)

    def _check_payload(self, data, what):
        data = as_bytes(data, what)
        if len(data) > self.max_payload:
            raise ValueError("%s is %d bytes, max %d" % (what, len(data), self.max_payload))
        return data

    def append(self, payload, hold=False):
        """Append one record durably; returns its seq. Starts a new segment (with a
        snapshot from the snapshot callable) first when this one would overflow.

        hold=True keeps the segment's file open afterwards, for a caller with more
        records coming (a round's cards): on a Pico each open is ~1.2 KB of garbage
        (littlefs's file and its cache) and ~4 ms, of the 4.3 KB a dealt card left for
        the collector before hold existed. The next append without
        hold, release(), and every change of segment close it, so it is open only
        while the caller says records are streaming in. Each record is still synced
        before append() returns."""
        self._ready()
        data = self._check_payload(payload, "payload")
        n = _OVERHEAD + len(data)
        if not self._segs or self._segs[-1].size + n > self.segment_size:
            self._rotate()
        return self._write(KIND_RECORD, data, hold)

    def release(self):
        """Close the segment kept open by append(hold=True), if any. Everything written
        through it was synced already, so a close that fails loses nothing: it is
        dropped (the next append opens the file afresh)."""
        f, self._wf = self._wf, None
        if f is not None:
            try:
                f.close()
            except OSError:
                pass

    def checkpoint(self):
        """Write the snapshot callable's state as a record of the newest segment, so that
        replay() starts there (see the module comment). Call it where the state is small
        (between rounds). Returns its seq, or None if the segment has no room for it (the
        next append starts a segment, which begins with a snapshot anyway)."""
        self._ready()
        if not self._segs or self.snapshot is None:
            return None
        seg = self._segs[-1]
        data = self._check_payload(self.snapshot(self.next_seq), "snapshot")
        if seg.size + _OVERHEAD + len(data) > self.segment_size:
            return None
        return self._write(KIND_SNAPSHOT, data)

    @property
    def since_checkpoint(self):
        """Bytes of records after the newest snapshot: what a boot would re-apply."""
        if not self._segs:
            return 0
        seg = self._segs[-1]
        return seg.size - seg.snap_off

    def _write(self, kind, data, hold=False):
        seg = self._segs[-1]
        n = _OVERHEAD + len(data)
        seq = self.next_seq
        fs = self.fs
        f, self._wf = self._wf, None  # (always the newest segment: see release())
        try:
            if f is None:
                f = fs.open(self._name(seg.number), "ab")
            try:
                self._write_record(f, kind, seq, data)
                fs.fsync(f)
                if hold:
                    self._wf, f = f, None
            finally:
                if f is not None:
                    f.close()
            if kind == KIND_SNAPSHOT:
                seg.note_cp(seq, seg.size)  # before the commit record names it
            seg.size += n
            seg.last = seq
            self.next_seq = seq + 1
            # After the record is synced: a cut between the two leaves the journal one
            # record ahead of the commit record, which open() accepts.
            self._save_commit(seq)
        except OSError:
            # What reached flash is unknown: refuse further appends until open() has
            # looked (it keeps a complete record or cuts a torn one).
            self._state = "broken"
            self.release()
            raise
        return seq

    def prepare(self, erases=1):
        """Erase ahead of need: nothing to do on segment files (the filesystem erases);
        pitboss.store.ringjournal's journal on a flash region does. True: ready."""
        return True

    def reserve(self, nbytes=None):
        """Make sure the next append of up to `nbytes` payload bytes (default max_payload)
        will not start a segment, starting one now if it would. For a caller that applies
        an event before journalling it: reserve() first, while the state is still the one
        before the event, so the snapshot never already contains it."""
        self._ready()
        n = self.max_payload if nbytes is None else nbytes
        if not isinstance(n, int) or not 0 <= n <= self.max_payload:
            raise ValueError("nbytes must be 0..%d" % self.max_payload)
        if not self._segs or self._segs[-1].size + _OVERHEAD + n > self.segment_size:
            self._rotate()

    @property
    def state(self):
        """'closed' (open() not called), 'open', 'corrupt' (open() raised JournalCorrupt)
        or 'broken' (a write failed: call open() again)."""
        return self._state

    def _rotate(self):
        if self.snapshot is None:
            raise JournalError("the journal needs a snapshot callable to start a segment")
        if len(self._segs) >= self.keep and not self._deletable(self._segs[0]):
            raise JournalFull("journal full: segment %d holds records after the "
                              "acknowledged seq %d (export first)"
                              % (self._segs[0].number, self.acked))
        self.release()
        seq = self.next_seq
        snap = self._check_payload(self.snapshot(seq), "snapshot")
        num = self._segs[-1].number + 1 if self._segs else self._next_number
        head = struct.pack(_SEG_FMT, _SEG_MAGIC, num, seq)
        head += struct.pack("<I", crc32(head))
        fs = self.fs
        try:
            f = fs.open(self._name(num), "wb")
            try:
                f.write(head)
                self._write_record(f, KIND_SNAPSHOT, seq, snap)
                fs.fsync(f)
            finally:
                f.close()
            fs.sync_dir(self.path)
            self._segs.append(_Seg(num, seq, seq, _SEG_HDR + _OVERHEAD + len(snap)))
            self._next_number = num + 1
            self.next_seq = seq + 1
            self._save_commit(seq)
        except OSError:
            self._state = "broken"
            raise
        # Only now, with the snapshot durable, may the oldest segment go.
        while len(self._segs) > self.keep and self._deletable(self._segs[0]):
            self._remove_oldest()

    # -- reading --
    def records(self, start_seq=0):
        """Yield (seq, kind, payload_bytes) in sequence order from start_seq (or the
        oldest kept record), reading one record at a time."""
        for rec in self.records_crc(start_seq):
            yield rec[:3]

    def records_crc(self, start_seq=0):
        """As records(), with each record's stored CRC-32 as a fourth item (an export)."""
        self._ready()
        for seg in list(self._segs):
            if seg.last < start_seq:
                continue
            # From the newest checkpoint at or before start_seq, not the segment's start
            # (recall and meters' recovery read a round or two, not a segment).
            at_seq, at = seg.seek(start_seq)
            for rec in self._iter_segment(seg, start_seq, at, at_seq):
                yield rec

    def replay(self):
        """Recovery: the newest snapshot (a checkpoint, or the newest segment's first
        record), then every record after it."""
        self._ready()
        if not self._segs:
            return iter(())
        return self._replay(self._segs[-1])

    def _replay(self, seg):
        for rec in self._iter_segment(seg, seg.snap, seg.snap_off, seg.snap):
            yield rec[:3]

    def last(self, n, match=None, seqs=False, tick=None):
        """The last n records (or the last n for which match(kind, payload) is true), oldest
        first, reading segments newest first; only n payloads are held in RAM. seqs=True:
        only their seqs (no payload held: 50 Pai Gow settlements are ~115 KB, half a
        Pico's heap). tick(), if given, is called for every record read (the main loop's
        watchdog: a scan of 8 full segments takes seconds on a chip)."""
        self._ready()
        if not isinstance(n, int) or n < 0:
            raise ValueError("n must be an int >= 0")
        out = []
        for seg in reversed(self._segs):
            need = n - len(out)
            if need <= 0:
                break
            ring = []
            pos = 0
            for rec in self._iter_segment(seg, 0):
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

    def _iter_segment(self, seg, start_seq, start_off=_SEG_HDR, off_seq=None):
        """The segment's records from start_seq. Reading begins at its start, or at
        start_off where record off_seq (<= start_seq; a checkpoint) begins, so the
        records before that are not read."""
        path = self._name(seg.number)
        self._sized(seg)
        f = self.fs.open(path, "rb")
        try:
            if not seg.hdr_ok and start_off == _SEG_HDR:
                # Read from its start: its header too (open(lazy=True) did not read it).
                self._header(seg.number, seg.first)
                seg.hdr_ok = True
            f.seek(start_off)
            off = start_off
            seq = seg.first if off_seq is None else off_seq
            while off < seg.size:
                keep = seq >= start_seq
                r = self._read_record(f, path, off, seg.size, seq, seq == seg.first, keep)
                if r < 0:  # it was whole at open(): changed under us
                    raise _corrupt("bad_record", path, off)
                if keep:
                    data, self._payload = self._payload, b""
                    yield (seq, self._kind, data, self._crc)
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
            self._state = "corrupt"
            raise
        finally:
            f.close()

    # -- checking what open(lazy=True) left --
    @property
    def unchecked(self):
        """Bytes of records open(lazy=True) left for verify() (0: all checked)."""
        n = 0
        for seg in self._segs:
            if seg.vend:
                n += self._sized(seg).vend - (self._voff if self._vnum == seg.number
                                              else _SEG_HDR)
        return n

    def verify(self, n=4):
        """Check up to `n` more records that open(lazy=True) left unchecked, oldest
        first. Returns the bytes still unchecked (0: the journal is wholly checked, as
        open() would have). Raises JournalCorrupt (the journal then refuses use, as after
        open())."""
        seg = self._to_verify()
        if seg is None:
            return 0
        path = self._name(seg.number)
        try:
            if self._vnum != seg.number:
                self._sized(seg)
                if not seg.hdr_ok:
                    self._header(seg.number, seg.first)
                    seg.hdr_ok = True
                self._vnum, self._voff, self._vseq = seg.number, _SEG_HDR, seg.first
            off, seq = self._voff, self._vseq
            f = self.fs.open(path, "rb")
            try:
                f.seek(off)
                while n > 0 and off < seg.vend:
                    r = self._read_record(f, path, off, seg.vend, seq, seq == seg.first)
                    if r < 0:
                        raise _corrupt("bad_record", path, off)
                    if self._kind == KIND_SNAPSHOT:
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
                self._vnum = 0
        except JournalCorrupt:
            self._state = "corrupt"
            raise
        self._voff, self._vseq = off, seq
        return self.unchecked

    def _to_verify(self):
        # The oldest segment open(lazy=True) left unchecked; None: none, or not open.
        if self._state == "open":
            for seg in self._segs:
                if seg.vend:
                    return seg
        return None

    # -- after corruption --
    def quarantine(self, min_seq=1):
        """Set every segment aside as NNNNNNNN.bad (kept for the investigation, never
        replayed) and start a new segment, with a snapshot, at seq max(high_seq + 1,
        min_seq): numbering continues so meters and logs never see a seq twice. The
        operator's tilt stays set until this returns; a cut part-way leaves the tilt set
        and the clear is simply repeated."""
        fs = self.fs
        self.release()
        makedirs(fs, self.path)
        top = self._next_number - 1
        for nm in fs.listdir(self.path):
            num = _number(nm)
            if num < 0:
                continue
            top = max(top, num)
            if nm[8:] in (_SUFFIX, _FIX):
                fs.rename(self._name(num, nm[8:]), self._name(num, _BAD))
        fs.sync_dir(self.path)
        self._segs = []
        self._vnum = 0
        self._next_number = top + 1
        self.next_seq = max(self.high_seq + 1, self.committed + 1, min_seq, 1)
        # What was set aside is no longer this journal's to export or keep.
        self.acked = self.next_seq - 1
        self._state = "open"
        self._rotate()
        return self.next_seq - 1


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
