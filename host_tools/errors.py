"""The errors every host tool raises about a board, defined once here so that any module
can raise or catch them without importing the module that talks to the board.

    BoardError      a board (real or emulated) cannot be reached, started or used
    FlashError      a flash or verify step failed (the message says which, and why)
    ProductionMode  the board runs its main loop: no raw REPL for the flash
"""


class BoardError(RuntimeError):
    """A board (real or virtual) cannot be reached, started or used; the message says why.
    The one class for it: a virtual board that will not start is the same failure to a
    caller as a board that cannot be reached (host_tools.vboard, host_tools.boardlink)."""


class FlashError(RuntimeError):
    pass


class ProductionMode(FlashError):
    """The board runs its main loop (production): no raw REPL until the service switch is
    held at reset (pitboss.service)."""
