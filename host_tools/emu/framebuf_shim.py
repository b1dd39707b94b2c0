# A pure-Python stand-in for MicroPython's built-in `framebuf`, for CPython: host tests
# and screenshots draw with the very code the board runs. Host-only: it lives in
# host_tools/ and is never flashed; whoever runs firmware display code on CPython calls
# install() first (host_tools.table.targets.LocalTarget, tests/conftest.py). Only what
# pitboss draws with is here (MONO_VLSB; fill, fill_rect, pixel, hline, vline, rect, line,
# text), with the C module's clipping and the same 8x8 font, so a screen is bit-for-bit the
# one MicroPython draws: tests/vm/test_io_vm.py renders on both and compares the buffers.
#
# The board never imports this: MicroPython has framebuf built in, and the firmware just
# does `import framebuf`. The font is MicroPython's font_petme128_8x8 (MIT licence,
# Copyright (c) 2013 Damien P. George), read back from MicroPython 1.27's own text().
import sys
from binascii import unhexlify

MONO_VLSB = 0
MVLSB = 0

# 96 glyphs for chr(32)..chr(127), 8 column bytes each, bit 0 = top row.
FONT = unhexlify(
    "00000000000000000000004f4f0000000007070000070700147f7f14147f7f14"  #  !"#
    "00242e6b6b3a1200006333180c66630000327f4d4d7772500000000406030100"  # $%&'
    "00001c3e63410000000041633e1c0000082a3e1c1c3e2a080008083e3e080800"  # ()*+
    "000080e0600000000008080808080800000000606000000000406030180c0602"  # ,-./
    "003e7f49457f3e000040447f7f40400000627351494f460000226349497f3600"  # 0123
    "00181814167f7f1000276745457d3900003e7f49497b3200000303797d070300"  # 4567
    "00367f49497f360000266f49497f3e000000002424000000000080e464000000"  # 89:;
    "00081c3663414100001414141414140000414163361c080000020351590f0600"  # <=>?
    "003e7f414d4f2e00007c7e0b0b7e7c00007f7f49497f3600003e7f4141632200"  # @ABC
    "007f7f41633e1c00007f7f4949414100007f7f0909010100003e7f41497b3a00"  # DEFG
    "007f7f08087f7f000000417f7f410000002060417f3f0100007f7f1c36634100"  # HIJK
    "007f7f4040404000007f7f060c067f7f007f7f0e1c7f7f00003e7f41417f3e00"  # LMNO
    "007f7f09090f0600001e3f21617f5e00007f7f19396f460000266f49497b3200"  # PQRS
    "0001017f7f010100003f7f40407f3f00001f3f60603f1f00007f7f3018307f7f"  # TUVW
    "0063771c1c77630000070f78780f0700006171594d47430000007f7f41410000"  # XYZ[
    "0002060c18306040000041417f7f000000080c06060c0800c0c0c0c0c0c0c0c0"  # \]^_
    "000001030604000000207454547c7800007f7f44447c380000387c44446c2800"  # `abc
    "00387c44447f7f0000387c54545c580000087e7f090302000098bca4a4fc7c00"  # defg
    "007f7f04047c78000000007d7d0000000040c08080fd7d00007f7f30386c4400"  # hijk
    "0000417f7f400000007c7c1830187c7c007c7c04047c780000387c44447c3800"  # lmno
    "00fcfc24243c180000183c2424fcfc00007c7c04040c080000485c5454742000"  # pqrs
    "04043f7f44642000003c7c40407c3c00001c3c60603c1c00001c7c3018307c1c"  # tuvw
    "00446c38386c4400009cbca0a0fc7c00004464745c4c44000008083e77414100"  # xyz{
    "000000ffff000000004141773e0808000002030103020301aa55aa55aa55aa55"  # |}~DEL
)


class FrameBuffer:
    def __init__(self, buf, width, height, format, stride=None):
        if format != MONO_VLSB:
            raise ValueError("framebuf_shim supports MONO_VLSB only, not format %r" % (format,))
        if stride is None:
            stride = width
        if len(buf) < ((height + 7) >> 3) * stride:
            raise ValueError("buffer of %d bytes too small for %dx%d" % (len(buf), width,
                                                                          height))
        self.buf = buf
        self.width = width
        self.height = height
        self.stride = stride

    def _set(self, x, y, c):
        i = (y >> 3) * self.stride + x
        bit = 1 << (y & 7)
        if c:
            self.buf[i] |= bit
        else:
            self.buf[i] &= ~bit & 0xFF

    def fill_rect(self, x, y, w, h, c):
        # Clipping as modframebuf.c's fill_rect().
        if h < 1 or w < 1 or x + w <= 0 or y + h <= 0 or y >= self.height or x >= self.width:
            return
        xend, yend = min(self.width, x + w), min(self.height, y + h)
        x, y = max(x, 0), max(y, 0)
        # A page (8 rows) at a time: one byte per column holds all 8 of its pixels.
        buf, stride = self.buf, self.stride
        for page in range(y >> 3, ((yend - 1) >> 3) + 1):
            top = page << 3
            lo, hi = max(y, top) - top, min(yend, top + 8) - top
            mask = ((1 << hi) - 1) & ~((1 << lo) - 1)
            a, b = page * stride + x, page * stride + xend
            if mask == 0xFF:
                buf[a:b] = (b"\xff" if c else b"\x00") * (b - a)
            elif c:
                for i in range(a, b):
                    buf[i] |= mask
            else:
                for i in range(a, b):
                    buf[i] &= ~mask & 0xFF

    def fill(self, c):
        self.fill_rect(0, 0, self.width, self.height, c)

    def pixel(self, x, y, c=None):
        if 0 <= x < self.width and 0 <= y < self.height:
            if c is None:
                return (self.buf[(y >> 3) * self.stride + x] >> (y & 7)) & 1
            self._set(x, y, c)
        return None

    def hline(self, x, y, w, c):
        self.fill_rect(x, y, w, 1, c)

    def vline(self, x, y, h, c):
        self.fill_rect(x, y, 1, h, c)

    def rect(self, x, y, w, h, c, f=False):
        if f:
            self.fill_rect(x, y, w, h, c)
            return
        self.fill_rect(x, y, w, 1, c)
        self.fill_rect(x, y + h - 1, w, 1, c)
        self.fill_rect(x, y, 1, h, c)
        self.fill_rect(x + w - 1, y, 1, h, c)

    def line(self, x1, y1, x2, y2, c):
        # Bresenham exactly as modframebuf.c's line(), so diagonals match pixel for pixel.
        dx, sx = (x2 - x1, 1) if x2 - x1 > 0 else (x1 - x2, -1)
        dy, sy = (y2 - y1, 1) if y2 - y1 > 0 else (y1 - y2, -1)
        steep = dy > dx
        if steep:
            x1, y1, dx, dy, sx, sy = y1, x1, dy, dx, sy, sx
        e = 2 * dy - dx
        for _ in range(dx):
            px, py = (y1, x1) if steep else (x1, y1)
            if 0 <= px < self.width and 0 <= py < self.height:
                self._set(px, py, c)
            while e >= 0:
                y1 += sy
                e -= 2 * dx
            x1 += sx
            e += 2 * dy
        if 0 <= x2 < self.width and 0 <= y2 < self.height:
            self._set(x2, y2, c)

    def text(self, s, x, y, c=1):
        # Like the C version: one glyph per UTF-8 byte, anything outside 32..127 drawn as
        # glyph 127, only set pixels drawn (the background shows through). A glyph column
        # is one font byte, so it is ORed (or cleared) into the one or two display bytes
        # it straddles rather than pixel by pixel: the host's reference tables redraw
        # thousands of times per test run.
        buf, stride, width, height = self.buf, self.stride, self.width, self.height
        shift = y & 7
        p0 = y >> 3  # floor, also for y < 0
        masks = []
        for p in (p0, p0 + 1):
            rows = height - (p << 3)  # rows of page p that exist
            masks.append(0 if p < 0 or rows <= 0 else 0xFF if rows >= 8
                         else (1 << rows) - 1)
        for ch in s.encode():
            if ch < 32 or ch > 127:
                ch = 127
            base = (ch - 32) * 8
            for j in range(8):
                if 0 <= x < width:
                    col = FONT[base + j]
                    for k, bits in enumerate(((col << shift) & 0xFF, col >> (8 - shift))):
                        bits &= masks[k]
                        if bits:
                            i = (p0 + k) * stride + x
                            if c:
                                buf[i] |= bits
                            else:
                                buf[i] &= ~bits & 0xFF
                x += 1


def install():
    """Make `import framebuf` find this module (CPython has no built-in one), so firmware
    modules import framebuf exactly as on the board. Idempotent."""
    sys.modules.setdefault("framebuf", sys.modules[__name__])
