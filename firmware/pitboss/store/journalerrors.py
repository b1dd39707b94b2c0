# What the journals (pitboss.store.journal, pitboss.store.ringjournal) raise.


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
