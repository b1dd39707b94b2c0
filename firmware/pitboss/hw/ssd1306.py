# SSD1306 OLED driver (I2C): a framebuf.FrameBuffer whose show() pushes the pages that
# changed (show_pages() those its caller says changed).
#
# Drawing goes through framebuf (fill/text/rect/...), which is C code on the board, so the
# firmware never touches pixels in Python. The buffer is in MONO_VLSB layout because that
# is the controller's own GDDRAM layout: show() copies it byte for byte, no conversion.
# The board module (board.display()) builds this from its I2C bus; the virtual board builds
# it on a simulated bus, so the same driver runs on every board.
# Built into MicroPython. On CPython the host installs its stand-in first
# (host_tools.emu.framebuf_shim.install()): the firmware itself carries no host code.
import framebuf
from array import array
from binascii import crc32

from pitboss.compat import const

_CONTROL_CMD = const(0x80)  # Co=1, D/C#=0: one command byte follows
_DATA = const(0x40)  # Co=0, D/C#=1: display RAM data follows
_SET_CONTRAST = const(0x81)
_SET_ENTIRE_ON = const(0xA4)
_SET_NORM_INV = const(0xA6)
_SET_DISP = const(0xAE)
_SET_MEM_ADDR = const(0x20)
_SET_COL_ADDR = const(0x21)
_SET_PAGE_ADDR = const(0x22)
_SET_DISP_START_LINE = const(0x40)
_SET_SEG_REMAP = const(0xA0)
_SET_MUX_RATIO = const(0xA8)
_SET_COM_OUT_DIR = const(0xC0)
_SET_DISP_OFFSET = const(0xD3)
_SET_COM_PIN_CFG = const(0xDA)
_SET_DISP_CLK_DIV = const(0xD5)
_SET_PRECHARGE = const(0xD9)
_SET_VCOM_DESEL = const(0xDB)
_SET_CHARGE_PUMP = const(0x8D)


class SSD1306(framebuf.FrameBuffer):
    def __init__(self, i2c, addr, width, height):
        self.i2c = i2c
        self.addr = addr
        self.width = width
        self.height = height
        self.pages = height // 8
        # The frame with one byte before it, so that any run of pages goes to the panel
        # in one writeto with its control byte (0x40, "GDDRAM data follows") in front
        # (_send). A writevto of [control, pages] is copied into one new buffer by
        # MicroPython's I2C layer: ~1 KB of garbage for a whole frame.
        self._wire = bytearray(1 + self.pages * width)
        self._wire[0] = _DATA
        self._mv = memoryview(self._wire)
        self.buf = self._mv[1:]  # the pixels, MONO_VLSB
        super().__init__(self.buf, width, height, framebuf.MONO_VLSB)
        # Preallocated so that commands and show() allocate nothing per frame.
        self._cmd = bytearray(2)
        self._cmd[0] = _CONTROL_CMD
        # What the panel holds, as a CRC-32 per page (issue 30: show() sends only the
        # pages that changed since; a change escapes it with odds of 1 in 2**32). None
        # until the first show() and after a failed one, which send every page. Not a
        # copy of the frame: that was 1 KB of a Pico's heap for good (the survive
        # session fell under its 64 KB floor).
        self._sums = None
        # Whether the panel holds the buffer as show_pages() last sent it (False: its
        # RAM is unknown, the next show_pages() sends every page).
        self._known = False
        self.init_display()

    def write_cmd(self, c):
        self._cmd[1] = c
        self.i2c.writeto(self.addr, self._cmd)

    def init_display(self):
        w = self.write_cmd
        w(_SET_DISP)  # off while configuring
        w(_SET_MEM_ADDR)
        w(0x00)  # horizontal addressing: show() streams the buffer in one write
        w(_SET_DISP_START_LINE)
        w(_SET_SEG_REMAP | 0x01)  # column 127 -> SEG0, so x grows to the right
        w(_SET_MUX_RATIO)
        w(self.height - 1)
        w(_SET_COM_OUT_DIR | 0x08)  # scan COM[N-1]..COM0, so y grows downwards
        w(_SET_DISP_OFFSET)
        w(0x00)
        w(_SET_COM_PIN_CFG)
        w(0x02 if self.width > 2 * self.height else 0x12)
        w(_SET_DISP_CLK_DIV)
        w(0x80)
        w(_SET_PRECHARGE)
        w(0xF1)  # internal charge pump: long phase 2
        w(_SET_VCOM_DESEL)
        w(0x30)
        w(_SET_CONTRAST)
        w(0xFF)
        w(_SET_ENTIRE_ON)  # show RAM, not all-on
        w(_SET_NORM_INV)
        w(_SET_CHARGE_PUMP)
        w(0x14)  # modules like ours have no external VCC
        w(_SET_DISP | 0x01)
        self._sums = None  # a (re)initialised panel's RAM is unknown: the next show sends all
        self._known = False
        self.fill(0)
        self.show()

    def poweroff(self):
        self.write_cmd(_SET_DISP)

    def poweron(self):
        self.write_cmd(_SET_DISP | 0x01)

    def contrast(self, value):
        self.write_cmd(_SET_CONTRAST)
        self.write_cmd(value)

    def invert(self, on):
        self.write_cmd(_SET_NORM_INV | (1 if on else 0))

    def show_pages(self, first, last):
        """Send pages first..last (first > last: none), which the caller knows to be all
        that changed since the last show: pitboss.hw.display draws whole 8-pixel text
        rows, one page each, and compares each row's text with what it drew before. No
        page is read back or checksummed, so nothing is allocated (issue 27: the CRC of
        every page in show() was ~0.9 KB of garbage a redraw, its results long ints on
        the chip). Every page goes while the panel's RAM is unknown (at first and after
        a failure). As in show(), the panel is asked at least one command."""
        if not self._known:
            first, last = 0, self.pages - 1
        self._sums = None  # show()'s record of the panel is stale now: it sends all
        self._known = False  # until the pages are on the panel
        if first > last:
            self.write_cmd(_SET_DISP | 0x01)  # raises OSError where no panel answers
        else:
            self._send(first, last)
        self._known = True

    def _send(self, first, last):
        w = self.write_cmd
        width = self.width
        w(_SET_COL_ADDR)
        w(0)
        w(width - 1)
        w(_SET_PAGE_ADDR)
        w(first)
        w(last)
        # The byte before page `first` becomes the control byte while the pages go (the
        # last pixel byte of the page above, or the one kept for page 0), then is put back.
        wire = self._wire
        i = first * width
        keep = wire[i]
        wire[i] = _DATA
        try:
            self.i2c.writeto(self.addr, self._mv[i:(last + 1) * width + 1])
        finally:
            wire[i] = keep

    def show(self):
        """Send the pages (8-pixel rows) that differ from what the panel holds: a result
        screen that changes two rows costs 256 bytes on the bus, not 1 KB (~25 ms at
        400 kHz). When nothing changed the panel is still asked one command (display
        on), so an unplugged display is a failure at every redraw, as when every show
        sent the frame (a display_fault tilt, issue 11), not only at the next change.
        After a failure nothing is assumed of the panel's RAM (a display plugged back in
        holds nothing): the next show sends every page."""
        width = self.width
        pages = self.pages
        sums = self._sums
        mv = memoryview(self.buf)
        first = 0
        last = pages - 1
        if sums is not None:
            first = -1
            for pg in range(pages):
                if crc32(mv[pg * width:(pg + 1) * width]) != sums[pg]:
                    if first < 0:
                        first = pg
                    last = pg
        self._sums = None  # until the frame is on the panel
        self._known = False
        if first < 0:
            self.write_cmd(_SET_DISP | 0x01)  # raises OSError where no panel answers
        else:
            self._send(first, last)
        self._known = True
        if first < 0:
            self._sums = sums
            return
        if sums is None:
            sums = array("I", [0] * pages)  # once: later shows update it in place
        for pg in range(first, last + 1):
            sums[pg] = crc32(mv[pg * width:(pg + 1) * width])
        self._sums = sums
