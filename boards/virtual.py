# The virtual board: the MicroPython WebAssembly VM (sys.platform 'webassembly') and CPython.
#
# It has the same factories as the real boards (see boards/pico.py) so the firmware runs
# unchanged, but there is no `machine` module in the VM, so every peripheral is simulated
# here in plain Python:
#   shoe     BufferUART: the host feed()s shoe bytes in, the firmware reads them like a UART
#   display  SimI2C, a bus with a simulated SSD1306 (the firmware's real driver writes to
#            it: pitboss.hw.board.display) whose GDDRAM the host can read back (display_device().ram / .lines())
#   led      SimPin that only remembers its value
#   buttons  SimPins the host can press()/release()
#   rfid     none: PERIPHERALS leaves it out and rfid() raises OSError(ENODEV)
# Factories return one shared instance each, because the host (or a test) must feed and
# inspect the very object the firmware is using.
try:
    from micropython import const
except ImportError:  # CPython (host tests): const() is only a compile-time hint
    # `__x` makes the parameter positional-only for type checkers, like the stub's;
    # MicroPython has no `/` syntax for that.
    def const(__x):
        return __x


NAME = "virtual"
PLATFORM = "webassembly"
MCU = "MicroPython WebAssembly VM"
PERIPHERALS = ("shoe", "display", "led", "buttons")

SHOE_BAUD = const(9600)
# Holds a whole dealt round, so a host that feeds a shoe transcript at once loses nothing;
# beyond that bytes are dropped and counted, as a real UART overruns.
SHOE_RXBUF = const(4096)

DISPLAY_ADDR = const(0x3C)
DISPLAY_WIDTH = const(128)
DISPLAY_HEIGHT = const(64)

BUTTON_COUNT = const(2)

_ENODEV = const(19)


def pins():
    """No GPIOs: every peripheral is simulated."""
    return {}


class BufferUART:
    """machine.UART stand-in fed from a ring buffer; what the firmware writes goes to `tx`."""

    def __init__(self, size=SHOE_RXBUF):
        self._buf = bytearray(size)
        self._head = 0  # next byte to read
        self._count = 0
        self.overruns = 0
        self.tx = bytearray()

    def feed(self, data):
        """Host side: bytes arriving from the shoe."""
        size = len(self._buf)
        for b in data:
            if self._count == size:
                self.overruns += 1
                continue
            self._buf[(self._head + self._count) % size] = b
            self._count += 1

    def any(self):
        return self._count

    def readinto(self, buf, nbytes=-1):
        n = len(buf) if nbytes < 0 else min(nbytes, len(buf))
        n = min(n, self._count)
        if n == 0:
            return None  # like machine.UART on timeout: no data is None, not 0
        size = len(self._buf)
        for i in range(n):
            buf[i] = self._buf[self._head]
            self._head = (self._head + 1) % size
        self._count -= n
        return n

    def read(self, nbytes=-1):
        n = self._count if nbytes < 0 else min(nbytes, self._count)
        if n == 0:
            return None
        out = bytearray(n)
        self.readinto(out)
        return bytes(out)

    def readline(self):
        size = len(self._buf)
        for i in range(self._count):
            if self._buf[(self._head + i) % size] == 0x0A:
                return self.read(i + 1)
        return self.read()

    def write(self, data):
        self.tx.extend(data)
        return len(data)

    def flush(self):
        pass

    def txdone(self):
        return True


class SimPin:
    """machine.Pin stand-in: remembers its level; the host drives inputs with press()."""

    def __init__(self, value=0):
        self._value = value
        self._handler = None

    def value(self, v=None):
        if v is None:
            return self._value
        self._value = 1 if v else 0
        return None

    def __call__(self, v=None):
        return self.value(v)

    def on(self):
        self._value = 1

    def off(self):
        self._value = 0

    def irq(self, handler=None, trigger=0):
        self._handler = handler

    def _set_input(self, v):
        changed = v != self._value
        self._value = v
        if changed and self._handler is not None:
            self._handler(self)

    def press(self):
        """Host side: buttons are wired to GND with pull-ups, so pressed reads 0."""
        self._set_input(0)

    def release(self):
        self._set_input(1)


# SSD1306 commands that take parameter bytes, and how many: the simulator must skip
# those bytes rather than read them as commands.
_ARGC = {0x20: 1, 0x21: 2, 0x22: 2, 0x81: 1, 0x8D: 1, 0xA8: 1, 0xD3: 1, 0xD5: 1,
         0xD9: 1, 0xDA: 1, 0xDB: 1}


class SimSSD1306:
    """The controller's GDDRAM and the commands the driver uses (horizontal addressing)."""

    def __init__(self, width=DISPLAY_WIDTH, height=DISPLAY_HEIGHT):
        self.width = width
        self.pages = height // 8
        self.ram = bytearray(width * self.pages)
        self.on = False
        self.inverted = False
        self.contrast = 0x7F
        self.frames = 0  # completed full-screen writes, so a host can wait for a redraw
        self._col0, self._col1 = 0, width - 1
        self._page0, self._page1 = 0, self.pages - 1
        self._col, self._page = 0, 0
        self._op = -1
        self._args = []
        self._ctrl = -1  # -1: the next byte of a transaction is a control byte

    def start(self):
        self._ctrl = -1

    def byte(self, b):
        if self._ctrl < 0:
            self._ctrl = b
            return
        if self._ctrl & 0x40:
            self._data_run(bytes((b,)), 0, 1)
        else:
            self._command(b)
        if self._ctrl & 0x80:  # Co=1: another control byte follows
            self._ctrl = -1

    def _command(self, b):
        if self._op >= 0:
            self._args.append(b)
            if len(self._args) < _ARGC[self._op]:
                return
            op, a = self._op, self._args
            self._op, self._args = -1, []
            if op == 0x21:
                self._col0, self._col1 = a[0], a[1]
                self._col = a[0]
            elif op == 0x22:
                self._page0, self._page1 = a[0] & 7, a[1] & 7
                self._page = self._page0
            elif op == 0x81:
                self.contrast = a[0]
            return
        if b in _ARGC:
            self._op = b
        elif b & 0xFE == 0xAE:
            self.on = bool(b & 1)
        elif b & 0xFE == 0xA6:
            self.inverted = bool(b & 1)

    def feed(self, buf):
        """One transaction's bytes. A data stream (control byte 0x40: Co=0, D/C#=1, so
        every byte after it is display data) is copied into GDDRAM a row at a time: the
        model runs inside the MicroPython VM on the virtual board, where a Python call per
        byte made a 1 KB redraw cost more than the round it showed."""
        i, n = 0, len(buf)
        while i < n:
            if self._ctrl >= 0 and self._ctrl & 0xC0 == 0x40:
                i = self._data_run(buf, i, n)
                return
            self.byte(buf[i])
            i += 1

    def _data_run(self, buf, i, n):
        w = self.width
        while i < n:
            k = min(n - i, self._col1 - self._col + 1)
            at = self._page * w + self._col
            self.ram[at:at + k] = buf[i:i + k]
            i += k
            if self._col + k <= self._col1:
                self._col += k
                break
            self._col = self._col0
            if self._page < self._page1:
                self._page += 1
            else:
                self._page = self._page0
                self.frames += 1
        return i

    def pixel(self, x, y):
        return (self.ram[(y >> 3) * self.width + x] >> (y & 7)) & 1

    def lines(self, on="#", off="."):
        """The screen as text rows, for a host or a test to look at."""
        rows = []
        for y in range(self.pages * 8):
            rows.append("".join(on if self.pixel(x, y) else off for x in range(self.width)))
        return rows


class SimI2C:
    """machine.I2C stand-in with the simulated SSD1306 at DISPLAY_ADDR."""

    def __init__(self):
        self.devices = {DISPLAY_ADDR: SimSSD1306()}

    def scan(self):
        return sorted(self.devices)

    def _dev(self, addr):
        dev = self.devices.get(addr)
        if dev is None:
            raise OSError(_ENODEV)  # a real bus reports a missing device as an OSError
        return dev

    def writeto(self, addr, buf, stop=True):
        dev = self._dev(addr)
        dev.start()
        dev.feed(buf)
        return len(buf)

    def writevto(self, addr, vector, stop=True):
        dev = self._dev(addr)
        dev.start()
        n = 0
        for buf in vector:
            dev.feed(buf)
            n += len(buf)
        return n


_shoe = None
_i2c = None
_led = None
_buttons = None


def reset():
    """Forget the shared peripherals: the next factory call makes new ones (a host that
    runs several simulated boards in one process, e.g. tests)."""
    global _shoe, _i2c, _led, _buttons
    _shoe = _i2c = _led = _buttons = None


def shoe_uart():
    global _shoe
    if _shoe is None:
        _shoe = BufferUART()
    return _shoe


def rfid():
    raise OSError(_ENODEV)  # no reader on the virtual board; see PERIPHERALS


def display_i2c():
    global _i2c
    if _i2c is None:
        _i2c = SimI2C()
    return _i2c, DISPLAY_ADDR


def display_device():
    """Host side: the simulated controller (GDDRAM in .ram, .lines() as text)."""
    i2c, addr = display_i2c()
    return i2c.devices[addr]


def led():
    global _led
    if _led is None:
        _led = SimPin(0)
    return _led


def buttons():
    global _buttons
    if _buttons is None:
        _buttons = tuple(SimPin(1) for _ in range(BUTTON_COUNT))
    return _buttons


# The logic-door service switch. There is no GPIO: the virtual board's host sets it at
# power-on (`pitboss board start --production`, host_tools/emu/vboard.py, passes it to the
# bridge, which puts it in the ROM-like module pitboss_board as SERVICE). On CPython
# (host tests: no REPL to protect) a test sets SERVICE here.
SERVICE = False
# The bridge runs the main loop one input burst at a time (no blocking stdin in the VM):
# pitboss.loop.main() hands it the loop body instead of looping (see bridge.mjs).
EVENT_DRIVEN = True


def service_switch():
    import sys

    rom = sys.modules.get("pitboss_board")  # imported by the bridge at power-on
    return SERVICE if rom is None else bool(getattr(rom, "SERVICE", False))



def unique_id():
    """No chip, no unique id: the host finds this board's key by the fingerprint its
    `version` reply carries."""
    return None


def watchdog(timeout_ms):
    """None: the virtual board has no hardware watchdog (its bridge runs the loop one
    input burst at a time, and a hang is ended by stopping the board)."""
    return None
