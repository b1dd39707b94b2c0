"""Heap allocated by a dealt card's path on the MicroPython 1.27 VM (host_tools/bench/bench_card.py):
the journal's append of a card's record on a flash region allocates only the CRC-32 values
binascii returns (ints above MicroPython's small-int range are heap objects, ~100 B a
record), and the whole path, shoe card to reply, allocates far less than on segment files
(issue 27). The VM has no native emitter: on a Pico the record's numbers and CRC are native
code (pitboss/store/recnative.py) and allocate nothing. With a Unix time for a clock (a long
int) the path was 424 B a card before the card's time was encoded in small ints
(2026-12-05), 328 B after. The figures are printed (pytest -s) for docs/bench.md."""
import os

from host_tools.emu.vm import run_script

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_card_on_a_region_allocates_only_its_crcs_in_the_journal():
    r = run_script(os.path.join(HERE, "..", "host_tools", "bench", "bench_card.py"),
                   mounts={os.path.join(HERE, "..", "firmware"): "/"}, timeout=300)
    assert "ALLOC-DONE" in r.stdout, r.stdout + r.stderr
    got = {ln.split()[1]: int(ln.split()[2]) for ln in r.stdout.splitlines()
           if ln.startswith("ALLOC ")}
    print(got)
    assert got["journal-append-region"] <= 128  # three CRC-32 ints at most
    assert got["card-path-region"] * 2 < got["card-path-segment-files"]
    # The card's time (a long int) costs no long-int arithmetic in its record: 424 B
    # before, 328 B after (Python frames past 11 words are heap too: most of the rest).
    assert got["card-path-region"] <= 352
