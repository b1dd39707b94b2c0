"""Progress on long work (shoe's rounds, export's records): tqdm (pinned in
requirements.txt), on stderr, only on a terminal and never with -q (PITBOSS_QUIET), so
stdout keeps the command's output alone."""
import os
import sys


def bar(total=None, desc="", unit="it"):
    from tqdm import tqdm

    quiet = bool(os.environ.get("PITBOSS_QUIET"))
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                disable=True if quiet else None)  # None: off unless stderr is a terminal
