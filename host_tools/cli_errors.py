"""How a command says it failed: one line on stderr, never a traceback. Exit 2 for input
the host refused or a board it could not reach; exit 1 (EXIT_REFUSED) for a board that
answered but would not do it."""
import sys

EXIT_REFUSED = 1


def one_line(e):
    """An error as one line: a board's traceback is cut to its first and last lines (the
    exception is what the operator needs)."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    if len(lines) > 2:
        lines = [lines[0], lines[-1]]
    return " | ".join(lines) or type(e).__name__


def fail(e):
    """One line on stderr, exit 2."""
    sys.stderr.write("pitboss: %s\n" % one_line(e))
    return 2


def refused(message):
    """The board answered but would not do it: one line on stderr, exit 1 (exit 2 is
    for input the host refused or a board it could not reach)."""
    sys.stderr.write("pitboss: %s\n" % message)
    return EXIT_REFUSED
