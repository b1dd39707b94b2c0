"""The host tools' shared error classes (issue 28: one place, imported by the modules
that raise them, so no module imports another only for its exception class)."""


class BoardError(RuntimeError):
    """A board (real or virtual) cannot be reached, started or used; the message says why.
    The one class for it: host_tools.emu.vboard and host_tools.link.repl re-export it."""
