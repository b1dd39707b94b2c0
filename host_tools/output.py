"""The command line's output convention, in one place: a failure is one line on stderr,
never a traceback (exit 2 for input the host refused or a board it could not reach,
exit 1, EXIT_REFUSED, for a board that answered but would not do it), and a `--json`
answer is one JSON document per line on stdout. The errors every host tool raises about
a board are defined here too, so that any module can raise or catch them without
importing the module that talks to the board:

    BoardError      a board (real or emulated) cannot be reached, started or used
    FlashError      a flash or verify step failed (the message says which, and why)
    ProductionMode  the board runs its main loop: no raw REPL for the flash
"""
import json
import sys

EXIT_BAD_INPUT = 2
EXIT_REFUSED = 1


class BoardError(RuntimeError):
    """A board (real or virtual) cannot be reached, started or used; the message says why.
    The one class for it: a virtual board that will not start is the same failure to a
    caller as a board that cannot be reached (host_tools.emu.vboard, host_tools.link.boardlink)."""


class FlashError(RuntimeError):
    pass


class ProductionMode(FlashError):
    """The board runs its main loop (production): no raw REPL until the service switch is
    held at reset (pitboss.service)."""


def emit(obj, **dumps):
    """One JSON document as one line on stdout (`dumps`: json.dumps' options)."""
    sys.stdout.write(json.dumps(obj, **dumps) + "\n")


def one_line(e):
    """An error as one line: a board's traceback is cut to its first and last lines (the
    exception is what the operator needs)."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    if len(lines) > 2:
        lines = [lines[0], lines[-1]]
    return " | ".join(lines) or type(e).__name__


def say_failed(message, code=EXIT_BAD_INPUT, command=None):
    """`pitboss: MESSAGE` (or `pitboss COMMAND: MESSAGE`) on stderr, the message as it is;
    returns the exit status, 2 unless told."""
    sys.stderr.write("pitboss%s: %s\n" % (" " + command if command else "", message))
    return code


def fail(e):
    """One line on stderr, exit 2."""
    return say_failed(one_line(e))


def refused(message):
    """The board answered but would not do it: one line on stderr, exit 1 (exit 2 is
    for input the host refused or a board it could not reach)."""
    sys.stderr.write("pitboss: %s\n" % message)
    return EXIT_REFUSED
