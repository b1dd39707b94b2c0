"""Issue 29 item 9, on the emulated Pico (the board of record): a 1 MB junk line.
Byte by byte through select.poll and readinto it took 65.5 s of chip time (~62 us a
byte, docs/bench.md); the loop now drops a refused line's rest where it lies in
MicroPython's USB input ring buffer (find() its end, move the read index: boards/pico.py
stdin()), a pass waiting for the next USB packet inside it: 11.0 s of chip time,
measured 2026-12-03.

The issue's target, under 2 s, is NOT met, and cannot be on the stock RPI_PICO image:
every byte still passes through MicroPython's USB CDC receive path in C
(tud_cdc_rx_cb reads the TinyUSB FIFO a char at a time into the ring). A Python loop
that does nothing per byte but move the ring's read index (no firmware, the stock
image's REPL) takes 6.2 s of chip time for the same megabyte: that is the floor below
which only a change under MicroPython's stdin goes. The bound here (13 s) holds the
6x gain; docs/bench.md has both figures.
Chip time is the emulator's cycle count (instructions executed, at 125 MHz): the wall
time the host takes to push a megabyte through the pty is not the chip's."""
from tests.pico_survive import REPLY_S, Session

MB = 1 << 20
CLOCK_HZ = 125_000_000


def test_a_megabyte_junk_line_is_dropped_in_bulk_on_the_chip(tmp_path, capsys):
    s = Session(tmp_path)
    s.flash_and_provision()
    s.power_up()
    try:
        assert s.request("status")["ok"]
        c0 = s.ctl("cycles")
        s.link.write(b"\xffJ" * (MB // 2) + b"\n")
        r = s.link.reply(REPLY_S)
        c1 = s.ctl("cycles")
        assert r["ok"] is False and r["error"]["code"] == "bad_format", r
        st = s.request("status")
        assert st["ok"] and st["tilts"] == [], st
        chip_s = (c1["cycles"] - c0["cycles"]) / CLOCK_HZ
        ns_s = (c1["ns"] - c0["ns"]) / 1e9
        with capsys.disabled():
            print("\n1 MB junk line: %.3f s of chip time (%d cycles), %.3f s emulated "
                  "clock" % (chip_s, c1["cycles"] - c0["cycles"], ns_s))
        assert chip_s < 13.0  # 65.5 s byte by byte; the stock image's floor is 6.2 s
    finally:
        s.power_off()
