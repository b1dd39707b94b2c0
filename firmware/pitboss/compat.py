# The one place that papers over MicroPython/CPython differences, so every other
# module can be written once for both.
try:
    from micropython import const  # noqa: F401
except ImportError:  # CPython: const() is only a compile-time hint on the board

    # `__x`: positional-only for type checkers, like the stubs' const (no `/` on MicroPython)
    def const(__x):
        return __x


# The WebAssembly VM (the virtual board) raises emscripten's errno numbers from its
# filesystem while its `errno` module has MicroPython's: compare OSErrors with these.
ENOENT = (2, 44)
EEXIST = (17, 20)


def missing(e):
    """True if OSError e means 'no such file', on every port."""
    return e.args and e.args[0] in ENOENT
