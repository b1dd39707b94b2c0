"""Progress on long work: a bar (tqdm, pinned in requirements.txt) where there is a count
(shoe's rounds, export's records, vectors' files), a line per step where there is not
(bench's stages). Both on stderr and never with -q (PITBOSS_QUIET), so stdout keeps the
command's output alone (a --json document stays one document); a bar only on a
terminal."""
import os
import sys


def bar(total=None, desc="", unit="it", off=False):
    """A tqdm bar on stderr; off (or -q) shows nothing, for callers that did not ask."""
    from tqdm import tqdm

    quiet = off or bool(os.environ.get("PITBOSS_QUIET"))
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                disable=True if quiet else None)  # None: off unless stderr is a terminal


def step(msg):
    """One line of progress on stderr ("pitboss: <msg>"), flushed at once."""
    if not os.environ.get("PITBOSS_QUIET"):
        sys.stderr.write("pitboss: %s\n" % msg)
        sys.stderr.flush()
