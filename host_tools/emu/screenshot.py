"""Screenshots of the table display: a raw MONO_VLSB frame (the SSD1306's GDDRAM, 1024
bytes for 128x64) to a PNG, in pure Python (zlib + struct, no Pillow).

    python -m host_tools.emu.screenshot FRAME.bin OUT.png [--width 128 --height 64 --scale 4]

MONO_VLSB: byte (y // 8) * width + x holds column x of rows 8*(y//8) .. +7, bit 0 on top.
The PNG is 1-bit greyscale; lit pixels are white, as on the OLED.
"""
import argparse
import struct
import sys
import zlib


def pixels(buf, w, h):
    """Rows of 0/1 from a MONO_VLSB buffer."""
    need = ((h + 7) // 8) * w
    if len(buf) < need:
        raise ValueError(f"MONO_VLSB {w}x{h} needs {need} bytes, got {len(buf)}")
    return [[(buf[(y >> 3) * w + x] >> (y & 7)) & 1 for x in range(w)] for y in range(h)]


def _chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png_from_fb(buf, w, h, scale=4, invert=False):
    """PNG bytes of the frame, each pixel a scale x scale square."""
    if not isinstance(scale, int) or scale < 1:
        raise ValueError(f"scale must be a positive int, not {scale!r}")
    W, H = w * scale, h * scale
    raw = bytearray()
    for row in pixels(buf, w, h):
        bits = 0
        line = bytearray([0])  # filter type 0 (none) for every scanline
        n = 0
        for v in row:
            v ^= invert
            for _ in range(scale):
                bits = (bits << 1) | v
                n += 1
                if n == 8:
                    line.append(bits)
                    bits = n = 0
        if n:
            line.append(bits << (8 - n))
        raw += bytes(line) * scale
    ihdr = struct.pack(">IIBBBBB", W, H, 1, 0, 0, 0, 0)  # 1-bit greyscale, no interlace
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr)
            + _chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + _chunk(b"IEND", b""))


def decode_png(data):
    """(width, height, rows of 0/1) of a PNG written by png_from_fb; for tests and tools."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, size = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        if zlib.crc32(kind + body) != crc:
            raise ValueError(f"PNG chunk {kind!r}: bad CRC")
        if kind == b"IHDR":
            size = struct.unpack(">IIBBBBB", body)
            if size[2:] != (1, 0, 0, 0, 0):
                raise ValueError(f"only 1-bit greyscale PNGs are read, got {size[2:]}")
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if size is None:
        raise ValueError("PNG without IHDR")
    W, H = size[0], size[1]
    raw = zlib.decompress(idat)
    stride = (W + 7) // 8 + 1
    rows = []
    for y in range(H):
        line = raw[y * stride:(y + 1) * stride]
        if line[0] != 0:
            raise ValueError(f"row {y}: filter {line[0]} (only 0 is written)")
        rows.append([(line[1 + (x >> 3)] >> (7 - (x & 7))) & 1 for x in range(W)])
    return W, H, rows


def text(buf, w=128, h=64):
    """The text a MONO_VLSB frame shows, row by row (8x8 cells of framebuf's font, as
    pitboss.hw.display draws it): what `pitboss demo` prints of the display. An inverse cell
    (a lit row with dark text) reads as its text; a cell matching no glyph reads '?'."""
    from host_tools.emu.framebuf_shim import FONT
    glyphs = {}
    for ch in range(32, 127):
        glyphs[bytes(FONT[(ch - 32) * 8:(ch - 32) * 8 + 8])] = chr(ch)
    rows = []
    for page in range(h // 8):
        line = ""
        for col in range(w // 8):
            cell = bytes(buf[page * w + col * 8:page * w + col * 8 + 8])
            ch = glyphs.get(cell)
            if ch is None:
                ch = glyphs.get(bytes(b ^ 0xFF for b in cell), "?")
            line += ch
        rows.append(line.rstrip())
    return rows


def save(path, buf, w=128, h=64, scale=4, invert=False):
    data = png_from_fb(buf, w, h, scale, invert)
    with open(path, "wb") as f:
        f.write(data)
    return len(data)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.emu.screenshot", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("frame", help="raw MONO_VLSB frame (e.g. 1024 bytes for 128x64)")
    ap.add_argument("png")
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--height", type=int, default=64)
    ap.add_argument("--scale", type=int, default=4)
    ap.add_argument("--invert", action="store_true", help="dark pixels on white")
    a = ap.parse_args(argv)
    try:
        with open(a.frame, "rb") as f:
            buf = f.read()
        save(a.png, buf, a.width, a.height, a.scale, a.invert)
    except (OSError, ValueError) as e:
        print(f"screenshot: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
