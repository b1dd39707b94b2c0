# The journal on a flash region (pitboss.store.region): the same records as pitboss.store.journal
# (docs/journal.md: magic, kind, seq, length, header check, payload, CRC-32), the same
# segments each starting with a snapshot, the same reading, recall, export and
# acknowledgement, but no filesystem on a record's path: a record is programmed into
# 256-byte pages of erased NOR flash, nothing erased or copied, and no commit record saved.
# Measured on the emulated Pico (issue 27): a synced littlefs append costs a 4 KB block copy
# (~49 ms, up to 123 ms), a page program 0.8 ms.
#
# Layout. The region's sectors are grouped into segments of `segment_sectors` sectors, used
# as a ring: segment positions 0..nseg-1, each new segment at the position after the
# newest, so every sector is erased once per lap (wear spread over the whole region).
#   segment header (16 bytes, offset 0)  "PBJ1" (continues the segment before it in the
#       ring) or "PBJ0" (starts a journal: a fresh region, or after quarantine()), u32
#       segment number (one more than any before it), u32 first seq, u32 CRC-32 of the 12
#       bytes before; "\0\0\0\0" as its magic: retired (about to be erased)
#   records, back to back from offset 16: the first a snapshot of seq `first`; then
#       0xFF (erased) after the last one
# A segment before the newest ends with the record before the next segment's first seq
# (anything after it, a torn append that made the journal move on, is never read).
#
# Why a cut never loses an acknowledged record or doubles one:
# - append: the record's pages are programmed in order, the last one (holding the
#   record's end) last; append returns only after that. Earlier records sharing the first
#   page are programmed again with identical bytes, which NOR leaves as they are (it only
#   clears bits) whatever the cut. A cut leaves a torn record at the tail of the newest
#   segment: a valid prefix in whole pages, then one page of unpredictable bits, then
#   erased pages. open() checks exactly that shape (anything else is JournalCorrupt), keeps
#   the records before it, and the next append starts a new segment (a torn page cannot
#   be programmed over).
# - a new segment: its snapshot's pages are programmed with the header left erased, then
#   page 0 again with the header: a segment has a valid header only once its snapshot is
#   whole. A cut before that leaves a segment without a header, which is never read and is
#   erased before use.
# - erasing: only positions outside the journal are erased (the oldest segment is retired
#   first: its magic programmed to zero, a one-page program), and a sector is checked
#   blank after its erase, so a cut inside an erase (a sector of unpredictable bits) is
#   found and erased again before anything is written there.
# - boot reads one header per segment and the newest segment's records (the tail); older
#   segments are checked by verify() from the main loop's idle passes, or when read
#   (pitboss.store.ringopen: open() and verify(), methods of this class written there).
#
# Erasing happens ahead of need, in prepare() (the controller's idle passes, one sector a
# call): the position after the newest segment is retired if the journal may let it go,
# and its sectors erased and checked blank, so a rotation on a card's path only programs.
# A/B slots, keys and configuration stay on the filesystem; the commit record (pitboss.store.slots)
# is saved only when the acknowledged seq or the owner's meta changes, not per record.
import json

from pitboss.compat import const
from pitboss.store import ringopen
from pitboss.store.journal import Journal
from pitboss.store.record import JournalCorrupt, JournalError, JournalFull, corrupt
from pitboss.store.record import (HDR, KIND_RECORD, KIND_SNAPSHOT, OVERHEAD, SEG_HDR,
                                  SEG_MAGIC, SEG_START, frame, pack_seg_header)
from pitboss.store.record import native as _native
from pitboss.store.ringopen import Cursor
from pitboss.store.record import Seg

# The region's page (pitboss.store.region.PAGE; ringopen.py's too): a const() named with an
# underscore cannot be imported on MicroPython, and every record's pages are counted in it.
_PAGE = const(256)
_ERASE_TRIES = const(3)


class RegionJournal(Journal):
    """The journal (pitboss.store.journal.Journal's interface and records) on a flash region.

    region: a pitboss.store.region driver. path, fs: where the commit record (acknowledged
    seq, the owner's meta) is kept, as an A/B record on the filesystem. segment_sectors:
    sectors per segment (the region holds region.sectors // segment_sectors of them, at
    least 3). The other arguments as Journal's; `keep` is every segment of the region."""

    def __init__(self, region, path="/journal", snapshot=None, fs=None, segment_sectors=8,
                 max_payload=1024, commit=False, retain=False):
        nseg = region.sectors // segment_sectors
        if nseg < 3:
            raise ValueError("the region holds %d segments of %d sectors, 3 needed"
                             % (nseg, segment_sectors))
        Journal.__init__(self, path, snapshot, fs, segment_sectors * region.sector_size,
                         nseg, max_payload, commit, retain)
        self.region = region
        self.nseg = nseg
        self.spseg = segment_sectors
        # The page being filled and the one after it, as they will be programmed: a
        # record is copied in and each page programmed once full, the last one at the
        # record's end (allocated once: a card's record is encoded into it).
        self._pb = bytearray(2 * _PAGE)
        mv = memoryview(self._pb)
        self._lo = mv[:_PAGE]
        self._hi = mv[_PAGE:]
        self._ff = b"\xff" * _PAGE
        # The boot's buffer for long payloads (pitboss.recovery sets and clears it):
        # records read then are views of it, each valid until the next is read.
        self.scratch = None
        self._paddr = 0  # region address of the page _lo holds
        self._fill = 0  # bytes of _pb holding the record stream
        self._dirty = False  # the newest segment ends in a torn record: rotate first
        self._top = 0  # the highest segment number on the region
        self._top_pos = -1  # ... and its position
        self._bpos = -1  # prepare(): the position being made ready ...
        self._blank = 0  # ... its sectors checked blank so far
        self._meta_saved = {}
        self._nat = None  # record.native(), looked up at the first record

    # -- geometry --
    def _base(self, pos):
        return pos * self.segment_size

    def _next_pos(self):
        if self._segs:
            return (self._segs[-1].pos + 1) % self.nseg
        return (self._top_pos + 1) % self.nseg

    def _name(self, number, suffix=""):
        return "region segment %d" % number

    def _sized(self, seg):
        return seg

    @property
    def segments(self):
        return [(s.number, s.first, s.last, s.size) for s in self._segs]

    # -- recovery, checking what open(lazy=True) left: pitboss.store.ringopen --
    open = ringopen.open_region
    verify = ringopen.verify

    def _set_tail(self, addr):
        # The page buffer from flash: the tail page's programmed bytes, erased after them.
        page = addr & ~(_PAGE - 1)
        self._paddr = page
        self._fill = addr - page
        self.region.read(page, self._lo)
        self._hi[:] = self._ff

    # -- reading --
    def _iter_segment(self, seg, start_seq, start_off=SEG_HDR, off_seq=None):
        cur = Cursor(self.region, self._base(seg.pos), self.scratch)
        name = self._name(seg.number)
        off = start_off
        seq = seg.first if off_seq is None else off_seq
        try:
            while seq <= seg.last:
                keep = seq >= start_seq
                cur.seek(off)
                r = self._read_record(cur, name, off, self.segment_size, seq,
                                      seq == seg.first, keep)
                if r < 0:
                    raise corrupt("bad_record", name, off)
                if keep:
                    data, self._payload = self._payload, b""
                    yield (seq, self._kind, data, self._crc)
                off += r
                seq += 1
        except JournalCorrupt:
            self._state = "corrupt"
            raise

    # -- writing --
    def release(self):
        """Nothing is held open on a region (every record is programmed before append
        returns); kept for the controller, which calls it between rounds."""
        close = getattr(self.region, "close", None)
        if close is not None:
            close()

    def append(self, payload, hold=False):
        """Append one record; returns its seq once every page of it is programmed.
        payload: str, bytes, bytearray or memoryview (not copied: a card's record encoded
        into a buffer allocated once costs no allocation here)."""
        if self._state != "open":
            self._ready()  # (raises, naming the state: a call only then, issue 27)
        if isinstance(payload, str):
            payload = payload.encode()
        n = len(payload)
        if n > self.max_payload:
            raise ValueError("payload is %d bytes, max %d" % (n, self.max_payload))
        segs = self._segs
        if self._dirty or not segs or segs[-1].size + OVERHEAD + n > self.segment_size:
            self._rotate()
        return self._write(KIND_RECORD, payload)

    def fits(self, nbytes):
        """Does the next record of up to nbytes payload go into the newest segment as it
        is (reserve(nbytes) would do nothing)? The card's path asks this first: reserve()'s
        layers were ~0.4 ms of a Pico's card (issue 27)."""
        segs = self._segs
        return (self._state == "open" and not self._dirty and len(segs) > 0
                and segs[-1].size + OVERHEAD + nbytes <= self.segment_size)

    def checkpoint(self):
        if self._dirty:
            return None  # the next append starts a segment, with its snapshot
        return Journal.checkpoint(self)

    def reserve(self, nbytes=None):
        if self._dirty:
            self._ready()
            self._rotate()
            return
        Journal.reserve(self, nbytes)

    def _write(self, kind, data, hold=False):
        seg = self._segs[-1]
        seq = self.next_seq
        try:
            self._put_record(kind, seq, data)
        except OSError:
            self._state = "broken"  # what reached flash: open() looks again
            raise
        if kind == KIND_SNAPSHOT:
            seg.note_cp(seq, seg.size)
        seg.size += OVERHEAD + len(data)
        seg.last = seq
        self.next_seq = seq + 1
        if self._commit is not None and self.meta != self._meta_saved:
            self._save_commit(seq)  # the owner's meta (a new round number): rare
        return seq

    def _put_record(self, kind, seq, data):
        # Header and CRC into Journal's _wbuf (record.frame; allocated once, as its views).
        # Native code called from here where there is some: a call of frame() is a
        # Python frame, which MicroPython allocates on the heap past 11 words (~96 B).
        nat = self._nat
        if nat is None:
            nat = self._nat = _native()
        n = len(data)
        fill = self._fill
        if nat and fill + n + OVERHEAD <= 2 * _PAGE:
            # Most records (a card's, a round's): written whole into the page being
            # filled and the next by one native call (recnative.put), not framed and
            # then copied by three slice assignments (issue 27's card path).
            nat.put(self._pb, fill, data, n, kind, seq)  # pyright: ignore[reportAttributeAccessIssue]
            self._fill = fill = fill + OVERHEAD + n
            if fill >= _PAGE:
                self._page_out()
            if self._fill:
                self.region.program(self._paddr, self._lo)
            return
        if nat:
            nat.frame(self._wbuf, data, n, kind, seq)  # pyright: ignore[reportAttributeAccessIssue]
        else:
            frame(self._wbuf, self._w8, self._whead, kind, seq, data)
        fill = self._fill
        if fill + n + OVERHEAD <= 2 * _PAGE:
            # Most records (a card's, a round's): copied here as _put would (the page
            # being filled and the next, the first programmed once full), not by three
            # calls of _put: each is a Python frame, which MicroPython allocates on the
            # heap past 11 words, and a Pico's allocator searches its fragmented heap
            # for a run of free blocks for each (issue 27's card budget).
            pb = self._pb
            pb[fill:fill + HDR] = self._whead
            pb[fill + HDR:fill + HDR + n] = data
            pb[fill + HDR + n:fill + OVERHEAD + n] = self._wtail
            self._fill = fill + OVERHEAD + n
            if self._fill >= _PAGE:
                self._page_out()
        else:
            self._put(self._whead)
            self._put(data)
            self._put(self._wtail)
        if self._fill:
            # The record's last page: earlier records' bytes in it programmed again as
            # they are (NOR keeps them), erased bytes after it.
            self.region.program(self._paddr, self._lo)

    def _put(self, src):
        pb = self._pb
        n = len(src)
        fill = self._fill
        if fill + n <= 2 * _PAGE:
            pb[fill:fill + n] = src
            self._fill = fill + n
            if self._fill >= _PAGE:
                self._page_out()
            return
        mv = memoryview(src)
        i = 0
        while i < n:
            k = min(n - i, 2 * _PAGE - self._fill)
            pb[self._fill:self._fill + k] = mv[i:i + k]
            self._fill += k
            i += k
            if self._fill >= _PAGE:
                self._page_out()

    def _page_out(self):
        # _lo is full: program it, and the next page becomes the one being filled.
        self.region.program(self._paddr, self._lo)
        self._lo[:] = self._hi
        self._hi[:] = self._ff
        self._paddr += _PAGE
        self._fill -= _PAGE

    def _rotate(self, start=False):
        if self.snapshot is None:
            raise JournalError("the journal needs a snapshot callable to start a segment")
        pos = self._next_pos()
        try:
            if not self._make_ready(pos, 0x7FFF):
                raise JournalFull("journal full: segment %d holds records after the "
                                  "acknowledged seq %d (export first)"
                                  % (self._segs[0].number, self.acked))
            seq = self.next_seq
            snap = self.snapshot(seq)
            if isinstance(snap, str):
                snap = snap.encode()
            if len(snap) > self.max_payload:
                raise ValueError("snapshot is %d bytes, max %d" % (len(snap),
                                                                   self.max_payload))
            base = self._base(pos)
            num = self._top + 1
            # The snapshot with the header left erased, then the header into page 0.
            self._paddr, self._fill = base, 0
            self._lo[:] = self._ff
            self._hi[:] = self._ff
            self._put(memoryview(self._ff)[:SEG_HDR])
            self._put_record(KIND_SNAPSHOT, seq, snap)
            page = self._rbuf
            self.region.read(base, page)
            pack_seg_header(page, SEG_START if start or not self._segs else SEG_MAGIC, num,
                            seq)
            self.region.program(base, page)
            if self._paddr == base:
                self._lo[:] = page
        except OSError:
            self._state = "broken"
            raise
        seg = Seg(num, seq, seq, SEG_HDR + OVERHEAD + len(snap))
        seg.pos = pos
        self._segs.append(seg)
        self._top, self._top_pos = num, pos
        self._dirty = False
        self._bpos = -1
        self.next_seq = seq + 1

    # -- erasing ahead --
    def prepare(self, erases=1):
        """Erase ahead of need (call where a pause of one sector erase, ~45 ms on a Pico,
        does not hold up a card): retire the segment at the position after the newest if
        the journal may let it go, erase up to `erases` of its sectors and check them blank.
        Returns True once that position is ready for the next rotation, False while work
        is left or the oldest segment must be kept (export first)."""
        if self._state != "open":
            return False
        try:
            return self._make_ready(self._next_pos(), erases)
        except OSError:
            self._state = "broken"
            raise

    def _make_ready(self, pos, erases):
        if self._bpos != pos:
            self._bpos, self._blank = pos, 0
        segs = self._segs
        if segs and segs[0].pos == pos and len(segs) > 1:
            if not self._deletable(segs[0]):
                return False
            self._retire(segs[0])
            segs.pop(0)
            self._vnum = 0
        first = pos * self.spseg
        while self._blank < self.spseg:
            s = first + self._blank
            tries = 0
            while not self.region.blank(s):
                if erases <= 0:
                    return False
                if tries >= _ERASE_TRIES:
                    raise OSError(5, "flash sector %d does not erase" % s)
                self.region.erase(s)
                erases -= 1
                tries += 1
            self._blank += 1
        return True

    def _retire(self, seg):
        # Its magic programmed to zero (NOR clears bits): no longer part of the journal,
        # so an erase cut part-way cannot leave a header that looks whole over garbage.
        page = self._rbuf
        base = self._base(seg.pos)
        self.region.read(base, page)
        page[0] = page[1] = page[2] = page[3] = 0
        self.region.program(base, page)

    @property
    def full(self):
        """With retain: every position holds a segment and the oldest cannot go yet
        (export and acknowledge: the next rotation would be refused)."""
        return self.retain and len(self._segs) >= self.nseg and \
            not self._deletable(self._segs[0])

    # -- the commit record: acknowledged seq and meta only --
    def _save_commit(self, last):
        # No "cp"/"end"/"segs": the region's headers say where everything is.
        if self._commit is None:
            return
        self._commit.save(json.dumps({"last": last, "ack": self.acked, "meta": self.meta}))
        self.committed = last
        self._meta_saved = dict(self.meta)

    def quarantine(self, min_seq=1):
        """Start a new journal (a "PBJ0" segment) after the damaged one, numbering on from
        max(high_seq + 1, min_seq): the damaged segments stay on the region, never read
        again, until the ring erases them."""
        self._segs = []
        self._vnum = 0
        self._dirty = False
        self._bpos = -1
        self.next_seq = max(self.high_seq + 1, self.committed + 1, min_seq, 1)
        self.acked = self.next_seq - 1
        self._state = "open"
        self._rotate(start=True)
        self._save_commit(self.next_seq - 1)
        return self.next_seq - 1
