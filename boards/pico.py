# Raspberry Pi Pico (RP2040): which peripherals the table controller has and on which pins.
#
# Flashing copies this file to the board as /board.py (compiled to /board.mpy), so the
# firmware only ever does `import board`; this is the one place that creates `machine`
# objects. The data is plain module constants so host tests can check the wiring without
# a board; `machine` is imported inside the factories so this module imports on CPython.
#
# Wiring (GPn = RP2040 GPIO n; every pin is a valid function pin for its block):
#   shoe          UART1  TX GP4  RX GP5      UART0 is left free, the REPL is on USB CDC
#   RFID MFRC522  SPI0   SCK GP18  MOSI GP19  MISO GP16  CS GP17  RST GP20
#   SSD1306 OLED  I2C0   SDA GP8   SCL GP9    address 0x3C, 128x64
#   status LED    GP25   the Pico's on-board LED (active high)
#   buttons       GP14, GP15  to GND, internal pull-ups, so pressed reads 0
#   service switch  GP22 to GND (internal pull-up): the logic door's key switch; held
#                 closed at reset = service mode (REPL, flashing), open = production
try:
    from micropython import const
except ImportError:  # CPython (host tests): const() is only a compile-time hint
    # `__x` makes the parameter positional-only for type checkers, like the stub's;
    # MicroPython has no `/` syntax for that.
    def const(__x):
        return __x


NAME = "pico"
PLATFORM = "rp2"
MCU = "RP2040"
# What exists on this board; firmware asks here before calling a factory.
PERIPHERALS = ("shoe", "rfid", "display", "led", "buttons")

SHOE_UART_ID = const(1)
SHOE_TX = const(4)
SHOE_RX = const(5)
# 9600 8N1 is what the shoe speaks; slow enough that the UART's RX FIFO plus rxbuf
# never overruns while the evaluator runs.
SHOE_BAUD = const(9600)
SHOE_RXBUF = const(256)
# machine.UART can sit in select.poll beside the USB input: the main loop wakes on a
# shoe's byte instead of after its poll timeout (pitboss.loop.serve, issue 27).
SHOE_POLLABLE = True

RFID_SPI_ID = const(0)
RFID_SCK = const(18)
RFID_MOSI = const(19)
RFID_MISO = const(16)
RFID_CS = const(17)
RFID_RST = const(20)
# The MFRC522 allows 10 MHz; 1 MHz keeps flying leads to the reader reliable.
RFID_BAUD = const(1_000_000)

DISPLAY_I2C_ID = const(0)
DISPLAY_SDA = const(8)
DISPLAY_SCL = const(9)
DISPLAY_ADDR = const(0x3C)
DISPLAY_WIDTH = const(128)
DISPLAY_HEIGHT = const(64)
DISPLAY_FREQ = const(400_000)

LED_PIN = const(25)
# The logic-door switch, read once at boot (pitboss.service): closed (0) = service mode.
SERVICE_PIN = const(22)
BUTTON_PINS = (14, 15)


def pins():
    """Role -> GPIO number, for wiring docs and the host-side conflict check."""
    return {
        "shoe_tx": SHOE_TX,
        "shoe_rx": SHOE_RX,
        "rfid_sck": RFID_SCK,
        "rfid_mosi": RFID_MOSI,
        "rfid_miso": RFID_MISO,
        "rfid_cs": RFID_CS,
        "rfid_rst": RFID_RST,
        "display_sda": DISPLAY_SDA,
        "display_scl": DISPLAY_SCL,
        "led": LED_PIN,
        "button_a": BUTTON_PINS[0],
        "button_b": BUTTON_PINS[1],
        "service": SERVICE_PIN,
    }


def shoe_uart():
    """The shoe's UART (machine.UART: read/readinto/any/write)."""
    from machine import UART, Pin

    return UART(
        SHOE_UART_ID,
        baudrate=SHOE_BAUD,
        tx=Pin(SHOE_TX),
        rx=Pin(SHOE_RX),
        rxbuf=SHOE_RXBUF,
    )


def rfid():
    """(spi, cs, rst) for the MFRC522 driver; cs idles high, rst high = running."""
    from machine import SPI, Pin

    spi = SPI(
        RFID_SPI_ID,
        baudrate=RFID_BAUD,
        polarity=0,
        phase=0,
        sck=Pin(RFID_SCK),
        mosi=Pin(RFID_MOSI),
        miso=Pin(RFID_MISO),
    )
    cs = Pin(RFID_CS, Pin.OUT, value=1)
    rst = Pin(RFID_RST, Pin.OUT, value=1)
    return spi, cs, rst


def display_i2c():
    """(i2c, addr) of the SSD1306."""
    from machine import I2C, Pin

    i2c = I2C(DISPLAY_I2C_ID, sda=Pin(DISPLAY_SDA), scl=Pin(DISPLAY_SCL), freq=DISPLAY_FREQ)
    return i2c, DISPLAY_ADDR


def led():
    """Status LED as a machine.Pin (on()/off()/value())."""
    from machine import Pin

    return Pin(LED_PIN, Pin.OUT, value=0)


def buttons():
    """The two buttons as input Pins; value() is 0 while pressed."""
    from machine import Pin

    return tuple(Pin(n, Pin.IN, Pin.PULL_UP) for n in BUTTON_PINS)


def service_switch():
    """True if the logic-door service switch is held closed (reads 0 through the pull-up).
    Read once at boot by pitboss.service; the pin is left as an input."""
    from machine import Pin

    return Pin(SERVICE_PIN, Pin.IN, Pin.PULL_UP).value() == 0




# USB serial input: MicroPython keeps what the host sent in a ring buffer in RAM
# (ports/rp2/mphalport.c stdin_ringbuf, a py/ringbuf.h ringbuf_t: uint8_t *buf, then
# uint16_t size, iget, iput), but offers no count of it: sys.stdin.buffer.readinto(b)
# blocks until len(b) bytes came. Knowing the count, the main loop reads many bytes with
# one call (issue 29: a 1 MB junk line cost 65 s of chip time a byte at a time).
_RAM = const(0x20000000)
_RAM_END = const(0x20042000)
_RING = const(512)  # MICROPY_HW_STDIN_BUFFER_LEN of the stock RPI_PICO build
_SCAN_END = const(0x20008000)  # the buffer's struct is in .data, near RAM's start
_SCAN_STEP = const(2048)  # bytes scanned per call: no long pause anywhere
_SURE = const(4)  # reads the one candidate must follow before it is trusted


def stdin():
    """(any, discard) for MicroPython's USB stdin ring buffer, found in RAM:
    any() -> how many bytes wait in it (0 when unknown), so the loop reads them with
    one readinto; discard() -> how many bytes of a refused line it dropped from it, up to
    (not including) the next CR or LF, found with find() on the buffer itself and
    consumed by moving its read index: no Python work per byte and none of the C
    per-byte cost of reading stdin (both issue 29: a 1 MB junk line took 65 s of chip
    time byte by byte).

    The buffer's struct is found by scanning RAM for its shape, a little per call, and
    trusted only once exactly one candidate has followed _SURE single-byte reads (its
    iget one further each time: the caller reads one byte between calls whenever
    any() answers 0 or 1). Until then, and on a firmware where it is not found,
    any() and discard() answer 0 and the loop reads a byte at a time as before.

    The pitboss image has both in C (boards/rp2/PITBOSS_PICO/cdc_rx: the module
    pitboss_cdc), and its discard() also drops the rest of the line as it arrives, in
    the USB receive callback: a junk megabyte costs no Python at all."""
    try:
        from pitboss_cdc import any, discard  # pyright: ignore[reportMissingImports]

        return any, discard
    except ImportError:
        pass
    from machine import mem16, mem32

    st = [_RAM, [], None, None]  # scan position, candidates [addr, iget, matches],
    #                              the struct's address (0: given up), a view of its bytes

    def any():  # (names the firmware already has: each new one is heap for good)
        a = st[2]
        if a is not None:
            if not a:
                return 0
            n = mem16[a + 8] - mem16[a + 6]
            return n + _RING if n < 0 else n
        keep = []
        for c in st[1]:  # one byte was read since the last call
            g = mem16[c[0] + 6]
            if g == (c[1] + 1) % _RING:
                c[1] = g
                c[2] += 1
                keep.append(c)
        pos = st[0]
        if pos < _SCAN_END:
            end = pos + _SCAN_STEP
            while pos < end:
                if mem16[pos + 4] == _RING and mem16[pos + 6] < _RING and \
                        mem16[pos + 8] < _RING and _RAM <= mem32[pos] < _RAM_END:
                    keep.append([pos, mem16[pos + 6], 0])
                pos += 4
            st[0] = pos
        st[1] = keep
        if pos >= _SCAN_END:
            if not keep:
                st[2] = 0
            elif len(keep) == 1 and keep[0][2] >= _SURE:
                import uctypes

                a = keep[0][0]
                st[3] = uctypes.bytearray_at(mem32[a], _RING)  # a view, not a copy
                st[2] = a
                st[1] = []
        return 0

    def discard():
        a = st[2]
        if not a:
            return 0
        g = mem16[a + 6]
        p = mem16[a + 8]
        if g == p:
            return 0
        end = p if p > g else _RING  # the bytes up to the end of the ring, first
        v = st[3]
        j = v.find(b"\n", g, end)
        k = v.find(b"\r", g, end if j < 0 else j)
        if k >= 0:
            j = k
        if j < 0:
            j = end
        mem16[a + 6] = j % _RING  # consumed (only the reader moves iget)
        return j - g

    return any, discard


def unique_id():
    """The board's unique id as hex (RP2040: the 64-bit unique id of its flash chip, machine.unique_id()):
    what the host's key store names this board's key by (`version` reports it)."""
    from binascii import hexlify

    from machine import unique_id

    return hexlify(unique_id()).decode()


def watchdog(timeout_ms):
    """The hardware watchdog (machine.WDT), started now: from here the main loop must
    feed() it within timeout_ms or the chip resets and boots into the journal's recovery.
    Created by pitboss.loop.main() only after the boot (which may take longer)."""
    from machine import WDT

    return WDT(timeout=timeout_ms)


def watchdog_stop():
    """Pause the watchdog (service mode, before the REPL: pitboss.loop.main). MicroPython's
    WDT has no deinit on rp2; clearing WATCHDOG CTRL.ENABLE (RP2040 datasheet 4.7.6,
    through the register block's atomic-clear alias at +0x3000) pauses its countdown, and
    the next WDT() enables it again."""
    from machine import mem32

    mem32[0x40058000 + 0x3000] = 1 << 30


def gc_every():
    """The heap allocated between the collector's own collections (pitboss.loop sets
    gc.threshold to it, and collects between cards and after a line once half of it was
    allocated). On the pitboss images the code is in ROMFS or frozen and ~175 KB is free
    with a table configured: 16 KB, so no collection falls inside a card's path (issue
    27: at 2 KB one did, ~17 ms, about once a card) and a Pai Gow round is collected half
    as often as at 8 KB (12.7% fewer busy cycles a round, 3.6 KB off the low-water mark,
    which stays 20 KB above its 150 KB budget over the whole budget session; docs/bench.md).
    On the stock image the code is in the heap and its lowest free heap sits a few KB
    above the 64 KB floor: 2 KB (loop.GC_EVERY)."""
    return 2048 if _image_layout() is None else 16384


def _image_layout():
    """The pitboss image's flash layout (its frozen pitboss_layout module), or None on a
    stock image. The storage area's size, which the image fixes, tells them apart, so a
    stray pitboss_layout.py on littlefs cannot make a stock image look like it."""
    try:
        import pitboss_layout as layout  # pyright: ignore[reportMissingImports]
    except ImportError:
        return None
    import rp2

    if rp2.Flash().ioctl(4, 0) * 4096 != layout.STORAGE_BYTES:  # pyright: ignore
        return None
    return layout


def journal_flash():
    """The raw journal region of the pitboss image (boards/rp2/PITBOSS_PICO), outside
    littlefs, as an rp2.Flash block device: 4 KB blocks; writeblocks(block, buf, offset)
    programs 256-byte pages without erasing; ioctl(6, block) erases one block;
    memoryview(dev) reads it memory-mapped. Where it lies is written once, in the image's
    frozen pitboss_layout module: JOURNAL_START (offset into rp2.Flash()'s storage area)
    and JOURNAL_BYTES. None on a stock image (_image_layout): it has no such region (its
    journal's sectors are files on littlefs: pitboss.hw.board.journal_region())."""
    layout = _image_layout()
    if layout is None:
        return None
    import rp2

    # (The stubs know neither the image's frozen module nor v1.27's Flash(start=, len=).)
    return rp2.Flash(start=layout.JOURNAL_START, len=layout.JOURNAL_BYTES)  # pyright: ignore


def set_rtc(tm):
    """Set the RP2040's RTC (what time.time() reads) from a time.gmtime() tuple: the
    host's time, sent when it connects (pitboss.hw.clock)."""
    from machine import RTC

    # RTC.datetime wants (year, month, day, weekday, hours, minutes, seconds, subseconds)
    RTC().datetime((tm[0], tm[1], tm[2], tm[6], tm[3], tm[4], tm[5], 0))


# The journal's flash region's budget (docs/journal.md, "The journal on a flash region";
# the firmware builds the region from it). On the pitboss image it is the raw region
# journal_flash() gives (768 KB, 192
# sectors, outside littlefs): a page program is one ROM call, no file system in the way.
# The stock image has no raw region (rp2.Flash(start=, len=) reaches only littlefs's own
# area, issue 27), so there the journal's sectors are files on littlefs: a page
# programmed is a littlefs write and sync (a 4 KB block copied and erased, as each append
# to a segment file was). JOURNAL_SECTORS of them: 512 KB of the 1,408 KB filesystem (the
# segment files' budget was 704 KB).
JOURNAL_SECTORS = const(128)
