# The one place that papers over MicroPython/CPython differences, so every other
# module can be written once for both.
try:
    from micropython import const  # noqa: F401
except ImportError:  # CPython: const() is only a compile-time hint on the board

    # `__x`: positional-only for type checkers, like the stubs' const (no `/` on MicroPython)
    def const(__x):
        return __x


def forget(name):
    """Drop module `name` (dotted) from sys.modules and from its package on MicroPython,
    so its code and tables are collected once nothing else holds them: for modules a
    board needs only while it takes a configuration (house ways, the paytable
    registry; each is heap for good otherwise, issue 11's budget). CPython keeps it (no
    heap to fit, and host callers hold the module)."""
    import sys

    if sys.implementation.name != "micropython":
        return
    sys.modules.pop(name, None)
    i = name.rfind(".")
    pkg = sys.modules.get(name[:i]) if i > 0 else None
    if pkg is not None and hasattr(pkg, name[i + 1:]):
        delattr(pkg, name[i + 1:])


# The WebAssembly VM (the virtual board) raises emscripten's errno numbers from its
# filesystem while its `errno` module has MicroPython's: compare OSErrors with these.
ENOENT = (2, 44)
EEXIST = (17, 20)


_free = None  # the function mem_free() calls, found on its first call


def mem_free():
    """gc.mem_free(), or None on a port without it (CPython). On the pitboss image the
    same count comes from its C module pitboss_heap (boards/rp2/PITBOSS_PICO/heap), which
    reads the allocation table a word at a time: gc.mem_free() walks every block and
    cost ~8 ms of every line the loop answers (it keeps the low-water mark)."""
    global _free
    if _free is None:
        import gc

        _free = _heap("free", getattr(gc, "mem_free", None) or _none)
    return _free()


_since = None  # the function alloc_since() calls, found on its first call


def alloc_since():
    """Bytes allocated since the last collection, or None where the port cannot tell
    cheaply (a stock image: gc.mem_alloc() walks the whole heap; CPython). On the pitboss
    image, the collector's own count (pitboss_heap.since): the loop collects in the gap
    after a card or a line only once enough garbage built up (pitboss.loop)."""
    global _since
    if _since is None:
        _since = _heap("since", _none)
    return _since()


def mem_alloc():
    """gc.mem_alloc(), or None on a port without it (CPython); on the pitboss image from
    pitboss_heap.alloc, which reads the allocation table a word at a time as mem_free()
    does (gc.mem_alloc() is gc_info(), a walk of the heap block by block)."""
    import gc

    return _heap("alloc", getattr(gc, "mem_alloc", None) or _none)()


def max_block():
    """The largest single allocation that would succeed now, in bytes, where the port
    tells it cheaply (the pitboss image: pitboss_heap.max_block, the longest free run of
    the allocation table); None elsewhere."""
    return _heap("max_block", _none)()


def pystack():
    """[deepest, size]: the most of the Python stack the firmware ever used since reset,
    and its size, in bytes, on the pitboss image (its frames are not on the heap:
    boards/rp2/PITBOSS_PICO/heap/heap.c); None elsewhere."""
    f = _heap("pystack", _none)
    r = f()
    return None if r is None else [r[1], r[2]]


def started_ms():
    """ticks_ms() when this run of MicroPython began: 0 after a power-on or a hardware
    reset, the soft reset's time after one (`pitboss reset`, the end of `pitboss flash`)
    on the pitboss image (pitboss_heap.started). Elsewhere 0, so a stock image's boot
    figures after a soft reset still count from its power-on."""
    return _heap("started", _none)() or 0


def _heap(name, fallback):
    """pitboss_heap.<name> (the pitboss image's C module), else `fallback`."""
    try:
        import pitboss_heap  # pyright: ignore[reportMissingImports]
    except ImportError:
        return fallback
    return getattr(pitboss_heap, name, fallback)


def _none():
    return None


def missing(e):
    """True if OSError e means 'no such file', on every port."""
    return e.args and e.args[0] in ENOENT
