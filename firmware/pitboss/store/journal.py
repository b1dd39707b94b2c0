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
# can cut power at any byte); the A/B records for small state are pitboss.store.slots. The
# parts: the record format pitboss.store.record, the errors pitboss.store.record, a
# segment's bookkeeping pitboss.store.record, and open(), verify() and quarantine() (with
# the segment-file names) pitboss.store.journalopen; this module writes and reads.
import json

from pitboss.store import journalopen
from pitboss.store.record import JournalCorrupt, JournalError, JournalFull, corrupt
from pitboss.store.journalopen import SUFFIX
from pitboss.store.osfs import OsFS, as_bytes
from pitboss.store.record import (CHUNK, HDR, KIND_RECORD, KIND_SNAPSHOT, OVERHEAD,
                                  SEG_HDR, SEG_MAGIC, frame, pack_seg_header, read_record)
from pitboss.store.record import TO_EOF, Seg
from pitboss.store.slots import Slots


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
                segment_size < SEG_HDR + 2 * (OVERHEAD + max_payload):
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
        self._wbuf = bytearray(OVERHEAD)  # a record's header, then its CRC (record.frame)
        mv = memoryview(self._wbuf)
        self._w8 = mv[:8]  # ... views of it, made once: what the header check covers,
        self._whead = mv[:HDR]  # the header, the CRC
        self._wtail = mv[HDR:]
        self._wf = None  # the newest segment, kept open by append(hold=True)
        self._rbuf = bytearray(CHUNK)  # what read_record reads into
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
    def _name(self, number, suffix=SUFFIX):
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
        if seg.size == TO_EOF:
            seg.size = self.fs.size(self._name(seg.number))
            if seg.vend == TO_EOF:
                seg.vend = seg.size
        return seg

    # -- recovery, checking what open(lazy=True) left, after corruption: methods of this
    # class written in pitboss.store.journalopen; reading a record: pitboss.store.record --
    open = journalopen.open_journal
    _load_commit = journalopen.load_commit
    unchecked = property(journalopen.unchecked)
    verify = journalopen.verify
    _to_verify = journalopen.to_verify
    quarantine = journalopen.quarantine
    _read_record = read_record

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


    def _write_record(self, f, kind, seq, data):
        # Header, payload, CRC: three writes in order, one record (record.frame: the
        # header and CRC in _wbuf, allocated once; the payload never copied).
        frame(self._wbuf, self._w8, self._whead, kind, seq, data)
        f.write(self._whead)
        f.write(data)
        f.write(self._wtail)

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
        n = OVERHEAD + len(data)
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
        if seg.size + OVERHEAD + len(data) > self.segment_size:
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
        n = OVERHEAD + len(data)
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
        if not self._segs or self._segs[-1].size + OVERHEAD + n > self.segment_size:
            self._rotate()

    def fits(self, nbytes):
        """Does the next record of up to nbytes payload go into the newest segment as it
        is (reserve(nbytes) would do nothing)? The card's path asks this first."""
        segs = self._segs
        return (self._state == "open" and len(segs) > 0
                and segs[-1].size + OVERHEAD + nbytes <= self.segment_size)

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
        head = bytearray(SEG_HDR)
        pack_seg_header(head, SEG_MAGIC, num, seq)
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
            self._segs.append(Seg(num, seq, seq, SEG_HDR + OVERHEAD + len(snap)))
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

    def _iter_segment(self, seg, start_seq, start_off=SEG_HDR, off_seq=None):
        """The segment's records from start_seq. Reading begins at its start, or at
        start_off where record off_seq (<= start_seq; a checkpoint) begins, so the
        records before that are not read."""
        path = self._name(seg.number)
        self._sized(seg)
        f = self.fs.open(path, "rb")
        stopped = False
        try:
            if not seg.hdr_ok and start_off == SEG_HDR:
                # Read from its start: its header too (open(lazy=True) did not read it).
                journalopen.header(self, seg.number, seg.first)
                seg.hdr_ok = True
            f.seek(start_off)
            off = start_off
            seq = seg.first if off_seq is None else off_seq
            while off < seg.size:
                keep = seq >= start_seq
                r = self._read_record(f, path, off, seg.size, seq, seq == seg.first, keep)
                if r < 0:  # it was whole at open(): changed under us
                    raise corrupt("bad_record", path, off)
                if keep:
                    data, self._payload = self._payload, b""
                    yield (seq, self._kind, data, self._crc)
                off += r
                seq += 1
            if seq != seg.last + 1:
                # Only a segment open(lazy=True) has not read yet can end elsewhere than
                # where the next one begins: damage.
                raise corrupt("sequence_gap", path, off, " (ends at seq %d, expected %d)"
                              % (seq - 1, seg.last))
        except JournalCorrupt:
            # Damage found by a read (a segment open(lazy=True) had not checked yet, or
            # flash changed since): the journal refuses use, as after open().
            self._state = "corrupt"
            raise
        except GeneratorExit:
            stopped = True
            raise
        finally:
            try:
                f.close()
            except OSError:
                # A read-only close loses nothing; raised as the reader stops early, it
                # would replace GeneratorExit (uncatchable: CPython calls it unraisable).
                if not stopped:
                    raise

    # -- checking what open(lazy=True) left --
