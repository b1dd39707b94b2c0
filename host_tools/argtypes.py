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


def operator_id(text):
    """argparse type: the firmware's own check (pitboss.store.tilt.check_operator), so an id
    the board would split ("tech 1" became operator "tech", tilt code "1") is refused
    on the host before any line is sent."""
    from pitboss.store.tilt import check_operator
    try:
        return check_operator(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def tilt_code(text):
    from pitboss.store.tilt import CODES
    if text not in CODES:
        raise argparse.ArgumentTypeError("unknown tilt code %r (docs/protocol.md lists "
                                         "them)" % text)
    return text
