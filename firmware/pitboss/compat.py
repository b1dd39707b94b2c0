# The one place that papers over MicroPython/CPython differences, so every other
# module can be written once for both.
try:
    from micropython import const  # noqa: F401
except ImportError:  # CPython: const() is only a compile-time hint on the board

    def const(x):
        return x
