# A segment of the journal as RAM knows it (both journals: pitboss.store.journal,
# pitboss.store.ringjournal): its seqs and size, where its snapshot records (checkpoints)
# are, and what open(lazy=True) left for verify().
from array import array

from pitboss.compat import const
from pitboss.store.record import SEG_HDR

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
