# The table's wall clock: Unix seconds, set by the host when it connects (`clock UNIX`,
# docs/protocol.md) and injected into the controller, whose tilt log and journal records
# carry its times.
#
# A board has no battery-backed clock: at power-on its RTC restarts from the port's epoch
# (2000-01-01 on some ports, 1970 on others), so until a host sets it the times are
# "seconds since boot, roughly". Setting it writes the board's RTC through the board file
# (boards/*.py `set_rtc`, the only place that touches `machine`) so everything else on
# the chip sees the same time, and keeps an offset for a board that has none.
import time
from pitboss.compat import const

_UNIX_2000 = const(946684800)  # the Unix time of 2000-01-01, where ports with a 2000 epoch start


class Clock:
    def __init__(self, hw=None, now=None):
        self._hw = hw
        self._now = now or time.time
        # The port's epoch: gmtime(0) is 1970-01-01 or 2000-01-01.
        self._base = _UNIX_2000 if time.gmtime(0)[0] == 2000 else 0
        self._offset = 0
        self.is_set = False  # a host has set it since boot

    def __call__(self):
        """Unix seconds now (an int; above 2**30, so a long int on MicroPython)."""
        t = int(self._now())  # (time.time()'s own long int: int() returns it as it is)
        # Each sum with a long int is another one on the heap; a board whose RTC was set
        # (or whose epoch is 1970) adds nothing: a dealt card's time is one long int.
        if self._base:
            t += self._base
        if self._offset:
            t += self._offset
        return t

    def set(self, unix):
        """Set the time. The board's RTC where it has one; the offset covers the rest
        (and a board whose RTC write failed)."""
        setter = getattr(self._hw, "set_rtc", None)
        if setter is not None:
            try:
                setter(time.gmtime(unix - self._base))
                self._offset = 0
            except Exception:  # noqa: BLE001  (an RTC that refuses: the offset still works)
                pass
        self._offset = 0
        self._offset = unix - self()
        self.is_set = True
