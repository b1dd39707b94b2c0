# Opening a journal of segment files (pitboss.store.journal; docs/journal.md): scan,
# verify and repair (step 4 and the lazy open in journal.py's module comment), the commit
# record read back, verify()'s checks of what open(lazy=True) left, and quarantine(). These
# are Journal's methods, bound in its class (j is the journal); the segment-file names are
# here: NNNNNNNN.jnl, .fix (a repaired copy being renamed over it), .bad (set aside).
import json

from pitboss.compat import const
from pitboss.store.record import JournalCorrupt, JournalError, corrupt
from pitboss.store.osfs import makedirs, readfull
from pitboss.store.record import KIND_SNAPSHOT, SEG_HDR, SEG_MAGIC, seg_header
from pitboss.store.record import TO_EOF, Seg
from pitboss.store.slots import SlotCorrupt

SUFFIX = ".jnl"
FIX = ".fix"  # a repaired copy of the newest segment, being renamed over it
BAD = ".bad"  # a segment set aside by quarantine()
_COPY = const(256)  # bytes per step when copying a segment prefix (no big buffers)


# -- recovery --
def open_journal(j, lazy=False):
    """Scan, verify and repair the journal. Returns a dict of what recovery did
    ({'torn': bytes discarded, 'dropped': segments removed as torn, 'fixed': leftover
    .fix files handled, 'pruned': old segments removed}). Raises JournalCorrupt (the
    journal then stays unusable until quarantine()).

    lazy=True (a boot): where the commit record names the segments on flash, read
    only what follows the last record it names (where a torn append can be);
    otherwise check every segment's header and the newest segment's records from
    its newest checkpoint. What is not read now (`unchecked` bytes) is checked when
    it is read, and all of it by verify(), which the owner calls until it returns 0
    (the main loop's idle passes). A boot then costs the same whatever the journal
    holds."""
    fs = j.fs
    j.release()
    j._segs = []
    j._state = "closed"
    j._vnum = 0
    report = {"torn": 0, "dropped": 0, "fixed": 0, "pruned": 0}
    makedirs(fs, j.path)
    names = fs.listdir(j.path)
    numbers = []
    top = 0
    for nm in names:
        num = number_of(nm)
        if num < 0:
            continue  # not ours (meters.a, notes...): ignored
        top = max(top, num)
        suf = nm[8:]
        if suf == FIX:
            # A repair was interrupted. Its target still there: the rename did not
            # happen, redo the repair from scratch. Target gone: FAT's rename removed
            # it after the .fix was complete and synced; finish the rename.
            if (name_of(num, SUFFIX)) in names:
                fs.remove(j._name(num, FIX))
            else:
                fs.rename(j._name(num, FIX), j._name(num))
                numbers.append(num)
            fs.sync_dir(j.path)
            report["fixed"] += 1
        elif suf == SUFFIX:
            numbers.append(num)
    numbers.sort()
    j._next_number = top + 1
    j.high_seq = 0
    try:
        load_commit(j)
        if not (lazy and from_commit(j, numbers, report)):
            j._segs = []
            scan(j, numbers, report, lazy)
        last = j._segs[-1].last if j._segs else 0
        if last < j.committed:
            # Whole records (or segments) are gone that were written and synced: not
            # something a power cut does. Nothing is guessed.
            raise JournalCorrupt("truncated", "%s ends at seq %d, %d were written"
                                 % (j.path, last, j.committed))
    except JournalCorrupt:
        j._state = "corrupt"
        raise
    while len(j._segs) > j.keep and j._deletable(j._segs[0]):
        # A cut after a rotation's new segment was durable but before the oldest went.
        j._remove_oldest()
        report["pruned"] += 1
    j.next_seq = j._segs[-1].last + 1 if j._segs else \
        max(j.high_seq, j.committed) + 1
    j._state = "open"
    return report


def load_commit(j):
    if j._commit is None:
        return
    try:
        text = j._commit.load()
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
        raise JournalCorrupt("bad_commit", "%s/commit: %s" % (j.path, e))
    j._cp = cp
    j._cend = end
    j._csegs = segs
    j.committed = last
    j.acked = ack
    j.meta = meta


def from_commit(j, numbers, report):
    """open(lazy=True) from the commit record alone: the segments it names are the
    ones on flash, so nothing is read but the newest segment past `end` (a record
    synced before a cut kept the commit record from naming it, or a torn append).
    Everything up to `end` is verify()'s (and any read's) to check, headers included.
    False (nothing changed) where the commit record and the flash do not line up:
    open() then reads the headers and the newest segment itself."""
    cs, cp, end, last = j._csegs, j._cp, j._cend, j.committed
    if not cs or cp is None or end is None or len(cs) != len(numbers) + 1:
        return False
    for i in range(len(numbers)):
        if numbers[i] != cs[0] + i or (i and cs[i + 1] <= cs[i]):
            return False
    num = numbers[-1]
    first = cs[-1]
    if cp[0] != num or not first <= cp[2] <= last or not SEG_HDR <= cp[1] < end or \
            (cp[2] == first) != (cp[1] == SEG_HDR):
        return False
    path = j._name(num)
    size = j.fs.size(path)
    if size < end:
        return False  # shorter than it was: open() says what happened
    segs = []
    for i in range(len(numbers) - 1):
        seg = Seg(numbers[i], cs[i + 1], cs[i + 2] - 1, TO_EOF)
        seg.vend, seg.vseq, seg.hdr_ok = TO_EOF, cs[i + 2], False
        segs.append(seg)
    seg = Seg(num, first, last, end)
    if cp[2] != first:
        seg.note_cp(cp[2], cp[1])
    seg.vend, seg.vseq, seg.hdr_ok = end, last + 1, False
    segs.append(seg)
    if size > end:
        f = j.fs.open(path, "rb")
        try:
            f.seek(end)
            off, seq = end, last + 1
            while off < size:
                r = j._read_record(f, path, off, size, seq, False)
                if r < 0:  # torn: the append after the last one committed
                    f.close()
                    report["torn"] += size - off
                    truncate(j, num, off)
                    break
                if j._kind == KIND_SNAPSHOT:
                    seg.note_cp(seq, off)
                off += r
                seq += 1
        except JournalCorrupt:
            return False  # open() reads it all and decides
        finally:
            f.close()
        seg.size, seg.last = off, seq - 1
    j._segs = segs
    j.high_seq = max(j.high_seq, seg.last)
    return True


def scan(j, numbers, report, lazy=False):
    expect = None  # the seq the next segment must start with (None: unknown yet)
    segs = j._segs
    for i, num in enumerate(numbers):
        newest = i == len(numbers) - 1
        if i and num != numbers[i - 1] + 1:
            raise JournalCorrupt("missing_segment", name_of(numbers[i - 1] + 1, SUFFIX))
        if lazy and not newest:
            # Sealed: its header now, its records later (verify(), or when read). It
            # ends where the next segment begins.
            seg = header(j, num, expect)
            seal(j, seg)
            seg.vend = j.fs.size(j._name(num))
            seg.size = seg.vend
            segs.append(seg)
            expect = None
            continue
        cp = j._cp
        seg = None
        if lazy and cp is not None and cp[0] == num:
            try:
                seg = scan_segment(j, num, expect, newest, report, cp[1], cp[2])
            except JournalCorrupt:
                seg = None  # the commit record's checkpoint did not hold: read it all
        if seg is None:
            seg = scan_segment(j, num, expect, newest, report)
        if seg is None:  # the newest segment was a torn rotation: removed
            if segs and segs[-1].vend and segs[-1].vseq == 0:
                # The segment before it is the newest now, and its end is known only
                # by reading it (as a sealed segment: a torn record there is damage).
                prev = segs.pop()
                segs.append(scan_segment(j, prev.number, None, False, report))
            continue
        seal(j, seg)
        segs.append(seg)
        expect = seg.last + 1


def seal(j, seg):
    # The segment before `seg`, if its records are not read yet, ends at seg.first.
    segs = j._segs
    if segs and segs[-1].vend and segs[-1].vseq == 0:
        prev = segs[-1]
        if seg.first <= prev.first:
            raise JournalCorrupt("sequence_gap", "%s (starts at %d, after %d)"
                                 % (j._name(seg.number), seg.first, prev.first))
        prev.last = seg.first - 1
        prev.vseq = seg.first


def header(j, num, expect):
    # The segment header of a segment whose records are not read now.
    path = j._name(num)
    mv = memoryview(j._rbuf)
    try:
        f = j.fs.open(path, "rb")
    except OSError:
        raise JournalCorrupt("missing_segment", path)
    try:
        got = readfull(f, mv[:SEG_HDR])
    finally:
        f.close()
    if got < SEG_HDR:
        raise JournalCorrupt("bad_segment_header", path)
    first = check_header(j, path, num, expect)
    return Seg(num, first, first, SEG_HDR)


def check_header(j, path, num, expect):
    buf = j._rbuf
    h = seg_header(buf)
    if h is None or h[0] != SEG_MAGIC or h[1] != num:
        raise JournalCorrupt("bad_segment_header", path)
    first = h[2]
    j.high_seq = max(j.high_seq, first - 1)
    if expect is not None and first != expect:
        raise JournalCorrupt("sequence_gap", "%s (starts at %d, expected %d)"
                             % (path, first, expect))
    return first


def scan_segment(j, num, expect, newest, report, at=0, at_seq=0):
    """Check segment `num`'s header and its records, from the start or (at > 0) from
    the snapshot record `at_seq` at offset `at` (the commit record's: the records
    before it are left to verify()). Returns its Seg, or None if it was the newest
    segment and a torn rotation (removed)."""
    fs = j.fs
    path = j._name(num)
    size = fs.size(path)
    mv = memoryview(j._rbuf)
    f = fs.open(path, "rb")
    try:
        got = readfull(f, mv[:SEG_HDR])
        if got < SEG_HDR:
            # Cut while creating the segment: only a prefix of its header exists.
            if newest and not at and SEG_MAGIC.startswith(bytes(mv[:min(got, 4)])):
                f.close()
                drop(j, num, report)
                return None
            raise JournalCorrupt("bad_segment_header", path)
        first = check_header(j, path, num, expect)
        seg = Seg(num, first, first, size)
        off = SEG_HDR
        seq = first
        if at:
            if not (SEG_HDR < at < size and first < at_seq):
                raise JournalCorrupt("bad_commit", path)
            f.seek(at)
            off, seq = at, at_seq
            seg.vend, seg.vseq = at, at_seq  # what verify() has to check
        start = seq
        while off < size:
            r = j._read_record(f, path, off, size, seq, seq == start)
            if r < 0:  # torn: a valid prefix of the next record, then end of file
                if not newest or seq == at_seq:
                    raise corrupt("bad_record", path, off)
                f.close()
                if seq == first:  # not even the snapshot: the rotation was cut
                    drop(j, num, report)
                    return None
                report["torn"] += size - off
                truncate(j, num, off)
                size = off
                break
            if j._kind == KIND_SNAPSHOT:
                seg.note_cp(seq, off)
            off += r
            j.high_seq = max(j.high_seq, seq)
            seq += 1
        if seq == first:  # a header and nothing else
            if not newest:
                raise JournalCorrupt("bad_snapshot", path)
            f.close()
            drop(j, num, report)
            return None
        seg.last = seq - 1
        seg.size = size
        return seg
    finally:
        f.close()


def drop(j, num, report):
    # The newest segment holds nothing acknowledged (a rotation cut short).
    j.fs.remove(j._name(num))
    j.fs.sync_dir(j.path)
    report["dropped"] += 1


def truncate(j, num, length):
    # MicroPython files have no truncate(): copy the valid prefix aside, sync, rename
    # it over the segment. See journal.py's module comment for a cut at each step.
    fs = j.fs
    src = fs.open(j._name(num), "rb")
    dst = fs.open(j._name(num, FIX), "wb")
    mv = memoryview(j._rbuf)
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
    fs.sync_dir(j.path)
    fs.rename(j._name(num, FIX), j._name(num))
    fs.sync_dir(j.path)


# -- checking what open(lazy=True) left --
def unchecked(j):
    """Bytes of records open(lazy=True) left for verify() (0: all checked)."""
    n = 0
    for seg in j._segs:
        if seg.vend:
            n += j._sized(seg).vend - (j._voff if j._vnum == seg.number
                                       else SEG_HDR)
    return n


def verify(j, n=4):
    """Check up to `n` more records that open(lazy=True) left unchecked, oldest
    first. Returns the bytes still unchecked (0: the journal is wholly checked, as
    open() would have). Raises JournalCorrupt (the journal then refuses use, as after
    open())."""
    seg = to_verify(j)
    if seg is None:
        return 0
    path = j._name(seg.number)
    try:
        if j._vnum != seg.number:
            j._sized(seg)
            if not seg.hdr_ok:
                header(j, seg.number, seg.first)
                seg.hdr_ok = True
            j._vnum, j._voff, j._vseq = seg.number, SEG_HDR, seg.first
        off, seq = j._voff, j._vseq
        f = j.fs.open(path, "rb")
        try:
            f.seek(off)
            while n > 0 and off < seg.vend:
                r = j._read_record(f, path, off, seg.vend, seq, seq == seg.first)
                if r < 0:
                    raise corrupt("bad_record", path, off)
                if j._kind == KIND_SNAPSHOT:
                    seg.note_cp(seq, off)
                off += r
                seq += 1
                n -= 1
        finally:
            f.close()
        if off >= seg.vend:
            if seq != seg.vseq:
                raise corrupt("sequence_gap", path, off, " (seq %d, expected %d)"
                              % (seq, seg.vseq))
            seg.vend = 0
            j._vnum = 0
    except JournalCorrupt:
        j._state = "corrupt"
        raise
    j._voff, j._vseq = off, seq
    return j.unchecked


def to_verify(j):
    # The oldest segment open(lazy=True) left unchecked; None: none, or not open.
    if j._state == "open":
        for seg in j._segs:
            if seg.vend:
                return seg
    return None


# -- after corruption --
def quarantine(j, min_seq=1):
    """Set every segment aside as NNNNNNNN.bad (kept for the investigation, never
    replayed) and start a new segment, with a snapshot, at seq max(high_seq + 1,
    min_seq): numbering continues so meters and logs never see a seq twice. The
    operator's tilt stays set until this returns; a cut part-way leaves the tilt set
    and the clear is simply repeated."""
    fs = j.fs
    j.release()
    makedirs(fs, j.path)
    top = j._next_number - 1
    for nm in fs.listdir(j.path):
        num = number_of(nm)
        if num < 0:
            continue
        top = max(top, num)
        if nm[8:] in (SUFFIX, FIX):
            fs.rename(j._name(num, nm[8:]), j._name(num, BAD))
    fs.sync_dir(j.path)
    j._segs = []
    j._vnum = 0
    j._next_number = top + 1
    j.next_seq = max(j.high_seq + 1, j.committed + 1, min_seq, 1)
    # What was set aside is no longer this journal's to export or keep.
    j.acked = j.next_seq - 1
    j._state = "open"
    j._rotate()
    return j.next_seq - 1


def number_of(name):
    """NNNNNNNN.jnl/.fix/.bad -> NNNNNNNN, anything else -> -1."""
    if len(name) != 12 or name[8:] not in (SUFFIX, FIX, BAD):
        return -1
    digits = name[:8]
    for c in digits:
        if c < "0" or c > "9":
            return -1
    return int(digits)


def name_of(num, suffix):
    return "%08d%s" % (num, suffix)
