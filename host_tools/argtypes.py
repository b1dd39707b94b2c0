"""argparse types shared by the commands: bad input refused by the parser, in one line,
before anything runs."""
import argparse


def positive(text):
    """A count of at least 1 (`--rounds 0`, `--workers -3` were taken, issue 29)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number" % text)
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1, got %d" % n)
    return n
