"""Display screens, checked pixel by pixel: rows are read back by matching the font's
glyphs, and a PNG screenshot is written and decoded again."""
import zlib

import pytest

import boards
from host_tools.emu import framebuf_shim
from host_tools.emu import screenshot
from pitboss.hw import display
from pitboss.rules import profiles
from pitboss.hw.ssd1306 import SSD1306

W, H = 128, 64
GLYPHS = {framebuf_shim.FONT[i * 8:i * 8 + 8]: chr(32 + i) for i in range(95)}


def read_row(buf, row):
    """The text on an 8-pixel row: normal rows (lit glyphs) or inverse ones (a lit bar
    with dark glyphs). Unknown cells read as '?'."""
    cells = [bytes(buf[row * W + x:row * W + x + 8]) for x in range(0, W, 8)]
    plain = "".join(GLYPHS.get(c, "?") for c in cells)
    inverse = "".join(GLYPHS.get(bytes(~b & 0xFF for b in c), "?") for c in cells)
    if inverse.count("?") < plain.count("?"):
        return inverse.rstrip(), True
    return plain.rstrip(), False


def screen(buf):
    return [read_row(buf, r) for r in range(H // 8)]


@pytest.fixture
def tdisp():
    fb, buf = display.framebuffer(W, H)
    return display.TableDisplay(fb), buf


def test_status_screen(tdisp):
    d, buf = tdisp
    d.status("nj-5card", [1, 2, 3, 5], round_no=17, phase="dealing",
             notes=["SHOE OK SEQ 123", "LAST As", "third note", "fourth note", "cut off"])
    assert screen(buf) == [
        ("nj-5card", True), ("ROUND 17", False), ("SEATS 1 2 3 5", False),
        ("DEALING", False), ("SHOE OK SEQ 123", False), ("LAST As", False),
        ("third note", False), ("fourth note", False)]
    # the header bar runs the whole width, past the text; the row below it is dark
    assert all(d.fb.pixel(x, y) for x in range(64, W) for y in range(8))
    assert not any(d.fb.pixel(x, 8) for x in range(64, W))
    d.status("pr-pai-gow-a5-low", list(range(1, 8)))
    assert screen(buf)[:4] == [("pr-pai-gow-a5-lo", True), ("ROUND -", False),
                               ("SEATS 7", False), ("", False)]


def test_result_screen(tdisp):
    # the pay screen (test_payscreen.py has each game's): more seats than rows end with
    # "+N MORE"; the dealer's category is cut to fit beside the round and QUAL / NQ
    d, buf = tdisp
    seats = ((1, 30, "flush"), (2, -20, "one_pair"), (3, 0, "straight_flush"),
             (4, 1000, "mini_royal"), (5, 5, "six_card_royal_flush"), (6, -10, "high_card"),
             (7, 40, "two_pair"), (8, -5, "three_of_a_kind"))
    d.result("pa-three-card-prime", ((0, "straight_flush", True), seats), round_no=3)
    assert screen(buf) == [
        ("R3 D STR FL QUAL", True),
        ("1   +30 FLUSH", False), ("2   -20 PAIR", False),
        ("3     0 STR FLSH", False), ("4 +1000 MINI RYL", False),
        ("5    +5 6C ROYAL", False), ("6   -10 HIGH", False), ("+2 MORE", False)]
    d.result("nj-3card", ((0, "straight_flush", False), seats[:7]))
    assert screen(buf)[0] == ("D STR FLSH NQ", True)
    assert screen(buf)[7] == ("7   +40 2 PAIR", False)


def test_every_category_has_a_label_that_fits():
    for gid in profiles.GAMES:
        for cat in profiles.get(gid).categories:
            label = display.short_category(cat)
            assert 0 < len(label) <= 8, (gid, cat, label)
    assert display.short_category("wild_five_of_a_kind") == "WILD FIV"


def test_alarm_screen(tdisp):
    d, buf = tdisp
    d.alarm("dropped", "dropped: 2 frame(s) missing before seq 17. Void the round.")
    assert screen(buf) == [
        ("! DROPPED", True), ("dropped: 2", True), ("frame(s) missing", True),
        ("before seq 17.", True), ("Void the round.", True), ("", True), ("", True),
        ("", True)]


def test_wrap_cuts_long_words():
    assert display.wrap("a " + "x" * 20 + " b", 8) == ["a", "xxxxxxxx", "xxxxxxxx", "xxxx b"]
    assert display.wrap("", 8) == []


def test_drawing_on_the_ssd1306_reaches_the_panel():
    v = boards.load("virtual")
    bus = v.SimI2C()
    panel = SSD1306(bus, 0x3C, W, H)
    d = display.TableDisplay(panel)
    d.result("nj-5card", (None, ((1, 30, "flush"),)), round_no=1)
    dev = bus.devices[0x3C]
    assert dev.on and dev.frames == 2  # init frame + ours, pushed by show()
    assert bytes(dev.ram) == bytes(panel.buf)
    assert read_row(dev.ram, 1) == ("1   +30 FLUSH", False)


def test_png_screenshot_decodes_to_the_same_pixels(tdisp, tmp_path):
    d, buf = tdisp
    d.result("nj-5card", (None, ((1, 30, "flush"), (2, -30, "one_pair"))), round_no=9)
    png = screenshot.png_from_fb(buf, W, H, scale=4)
    out = tmp_path / "result.png"
    assert screenshot.save(str(out), buf, W, H, 4) == len(png)
    assert out.read_bytes() == png and png[:8] == b"\x89PNG\r\n\x1a\n"
    pw, ph, rows = screenshot.decode_png(png)
    assert (pw, ph) == (W * 4, H * 4)
    lit = 0
    for y in range(H):
        for x in range(W):
            p = d.fb.pixel(x, y)
            lit += p
            assert rows[y * 4 + 3][x * 4 + 1] == p
    assert 300 < lit < W * 8 + 300  # the header bar plus two rows of text
    # the raw IDAT really is 1-bit rows with a filter byte: (512 / 8 + 1) * 256
    idat = png[png.index(b"IDAT") + 4:png.index(b"IEND") - 8]
    assert len(zlib.decompress(idat)) == (W * 4 // 8 + 1) * H * 4
    inv = screenshot.decode_png(screenshot.png_from_fb(buf, W, H, 1, invert=True))[2]
    assert inv[0][0] == 1 - d.fb.pixel(0, 0)


def test_screenshot_cli_and_bad_input(tmp_path, capsys):
    fb, buf = display.framebuffer()
    (tmp_path / "frame.bin").write_bytes(bytes(buf))
    assert screenshot.main([str(tmp_path / "frame.bin"), str(tmp_path / "f.png")]) == 0
    assert screenshot.decode_png((tmp_path / "f.png").read_bytes())[:2] == (512, 256)
    (tmp_path / "short.bin").write_bytes(b"\x00" * 100)
    assert screenshot.main([str(tmp_path / "short.bin"), str(tmp_path / "g.png")]) == 2
    assert "needs 1024 bytes, got 100" in capsys.readouterr().err
    with pytest.raises(ValueError, match="scale"):
        screenshot.png_from_fb(buf, W, H, scale=0)


def test_framebuf_shim_clips_like_the_c_module():
    fb, buf = display.framebuffer(16, 8)
    fb.fill_rect(-4, -4, 8, 8, 1)  # only the visible 4x4 corner
    assert sum(bin(b).count("1") for b in buf) == 16
    fb.fill(0)
    fb.text("AB", 12, -1)  # clipped right and top
    assert all(fb.pixel(x, y) == 0 for x in range(12) for y in range(8))
    assert fb.pixel(99, 0) is None and fb.pixel(-1, 0) is None
    with pytest.raises(ValueError, match="MONO_VLSB only"):
        framebuf_shim.FrameBuffer(bytearray(16), 8, 8, 1)


def test_message_screen(tdisp):
    d, buf = tdisp
    d.message("REGISTER DECK 2", ["NEXT: 2s", "0 OF 52", "", "a", "b", "c", "d", "cut"])
    rows = screen(buf)
    assert rows[0] == ("REGISTER DECK 2", True)
    assert [r for r, _ in rows[1:4]] == ["NEXT: 2s", "0 OF 52", ""] and rows[7][0] == "d"


def test_framebuf_shim_text_equals_pixel_by_pixel_drawing():
    # text() ORs whole glyph columns into display bytes; this is the per-pixel
    # definition (modframebuf.c: set each lit pixel that is on screen), checked at
    # random positions, off every edge, both colours, on heights that end mid-page.
    import random
    rng = random.Random(5)
    F = framebuf_shim.FONT
    for _ in range(400):
        w, h = rng.choice(((128, 64), (21, 13), (8, 8), (40, 30)))
        s = "".join(chr(rng.randrange(20, 140)) for _ in range(rng.randrange(1, 6)))
        x, y, c = rng.randrange(-12, w + 4), rng.randrange(-12, h + 4), rng.randrange(2)
        init = bytes(rng.randrange(256) for _ in range(((h + 7) >> 3) * w))
        fb = framebuf_shim.FrameBuffer(bytearray(init), w, h, framebuf_shim.MONO_VLSB)
        ref = framebuf_shim.FrameBuffer(bytearray(init), w, h, framebuf_shim.MONO_VLSB)
        fb.text(s, x, y, c)
        xx = x
        for ch in s.encode():
            ch = 127 if ch < 32 or ch > 127 else ch
            for j in range(8):
                col = F[(ch - 32) * 8 + j]
                for r in range(8):
                    if col >> r & 1:
                        ref.pixel(xx, y + r, c)
                xx += 1
        assert fb.buf == ref.buf, (w, h, s, x, y, c)


def test_show_sends_only_the_pages_that_changed():
    # Issue 27: a dealt card's redraw changes a line, not the 1 KB frame.
    panel, bus, sent = _panel()  # (sent: the pages of each frame written)
    panel.show()
    assert sent == []  # nothing changed since init_display's show
    panel.text("CARDS 7/49", 0, 24, 1)  # page 3 only
    panel.show()
    panel.fill_rect(0, 0, 4, 64, 1)  # every page
    panel.show()
    panel.pixel(1, 63, 0)  # page 7
    panel.show()
    assert sent == [1, 8, 1]
    assert bytes(bus.devices[0x3C].ram) == bytes(panel.buf)


def _panel():
    v = boards.load("virtual")
    bus = v.SimI2C()
    panel = SSD1306(bus, 0x3C, W, H)
    sent = []
    real = bus.writeto

    def writeto(addr, buf, stop=True):
        if buf[0] != 0x40:  # a command
            return real(addr, buf)
        if sent and sent[-1] == "fail":
            sent[-1] = "failed"
            raise OSError(5)
        assert (len(buf) - 1) % W == 0
        sent.append((len(buf) - 1) // W)  # pages
        return real(addr, buf)

    bus.writeto = writeto
    return panel, bus, sent


SCREENS = (
    ("status", ("nj-5card", [1], 3, "wagers")),
    ("status", ("nj-5card", [1, 2], 3, "wagers")),  # row 2 only
    ("status", ("nj-5card", [1, 2], 3, "dealing", ("CARDS 7/14",))),  # rows 3, 4
    ("status", ("nj-5card", [1, 2], 3, "dealing", ("CARDS 7/14",))),  # nothing
    ("alarm", ("duplicate_card", "card 9 of the deal was already dealt")),  # every row
    ("result", ("nj-5card", (("", "flush", True), ((1, 30, "flush"), (2, -20, "high_card"))),
                4)),
    ("message", ("PITBOSS", ["READY"])),
    ("result", ("pr-pai-gow", ((True, "full_house", "AK"), ((1, 950, "KQ"), (2, 0, None))),
                5)),
)


def test_a_redraw_sends_only_the_rows_that_changed_and_draws_what_a_fresh_screen_would():
    # Issue 27: TableDisplay keeps each row's text and sends the changed ones, with no
    # checksum of the frame; the pixels are those of the screen drawn from blank.
    panel, bus, sent = _panel()
    d = display.TableDisplay(panel)
    pages = []
    for name, args in SCREENS:
        del sent[:]
        getattr(d, name)(*args)
        pages.append(sum(sent))
        fresh, buf = display.framebuffer(W, H)
        getattr(display.TableDisplay(fresh), name)(*args)
        assert bytes(panel.buf) == bytes(buf), name
        assert bytes(bus.devices[0x3C].ram) == bytes(buf), name
    assert pages[:5] == [8, 1, 2, 0, 8], pages  # the first screen: every page
    assert bus.devices[0x3C].on


def test_after_a_failed_show_the_next_redraw_sends_every_page():
    panel, bus, sent = _panel()
    d = display.TableDisplay(panel)
    d.status("nj-3card", [1], 1, "wagers")
    sent.append("fail")
    with pytest.raises(OSError):
        d.status("nj-3card", [1, 2], 1, "wagers")
    del sent[:]
    d.status("nj-3card", [1, 2, 3], 1, "wagers")  # one row changed, but the panel's RAM
    assert sent == [8]                           # is unknown since the failure
    assert bytes(bus.devices[0x3C].ram) == bytes(panel.buf)
