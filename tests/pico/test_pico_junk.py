"""Issue 29 item 9, on the emulated Pico (the board of record): a 1 MB junk line.
Byte by byte through select.poll and readinto it took 65.5 s of chip time (~62 us a
byte, docs/bench.md). Dropped from MicroPython's USB input ring found by scanning RAM
(boards/pico.py stdin(), the stock image's only way in), 11.0 s: a Python pass, two
find()s over the ring and a share of a collection per 64-byte USB packet, and
MicroPython's receive loop a char at a time. The pitboss image does it in C
(boards/rp2/PITBOSS_PICO/cdc_rx: the USB receive callback copies runs in bulk and
drops a refused line's rest as it arrives, up to its end): 0.68 s, measured 2026-12-03,
under the issue's 2 s.
Chip time is the emulator's cycle count (instructions executed, at 125 MHz); the cycles
the chip ran waiting for the host's next bytes (the pty delivers a burst in pieces) are
counted apart and printed, not subtracted."""
from tests.support.pico_survive import REPLY_S, Session

MB = 1 << 20
CLOCK_HZ = 125_000_000


def test_a_megabyte_junk_line_is_dropped_in_bulk_on_the_chip(tmp_path, capsys):
    s = Session(tmp_path)
    s.flash_and_provision()
    s.power_up()
    try:
        assert s.request("status")["ok"]
        c0 = s.ctl("cycles")
        # The line's end and the next line come in the same write (one USB packet):
        # what follows the end is kept, not dropped with the junk.
        s.link.write(b"\xffJ" * (MB // 2) + b"\r\nversion\n")
        r = s.link.reply(REPLY_S)
        c1 = s.ctl("cycles")
        assert r["ok"] is False and r["error"]["code"] == "bad_format", r
        v = s.link.reply(REPLY_S)
        assert v["ok"] and "version" in v, v
        st = s.request("status")
        assert st["ok"] and st["tilts"] == [], st
        chip_s = (c1["cycles"] - c0["cycles"]) / CLOCK_HZ
        ns_s = (c1["ns"] - c0["ns"]) / 1e9
        starved_s = (c1["usb_starved"] - c0["usb_starved"]) / CLOCK_HZ
        with capsys.disabled():
            print("\n1 MB junk line: %.3f s of chip time (%d cycles), %.3f s emulated "
                  "clock, %.3f s of it waiting for the host's bytes"
                  % (chip_s, c1["cycles"] - c0["cycles"], ns_s, starved_s))
        assert chip_s < 2.0  # issue 29: 65.5 s byte by byte, 11.0 s from Python
    finally:
        s.power_off()
