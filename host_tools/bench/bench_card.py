# A board script (MicroPython; CPython too): what a dealt card's path costs, as the
# controller takes it from the shoe (Controller.shoe_card), over the 49 cards of a
# six-seat Pai Gow round: heap bytes allocated (the collector off around the cards) and
# time (time.ticks_us: chip time on the emulated Pico), and the same for the journal's
# append of a card's record alone. The journal on a RAM model of a raw region (the
# block-device calls rp2.Flash answers, with no flash time: add the page programs), on
# sector files (pitboss.store.region.FileRegion on the board's filesystem), and on segment
# files (pitboss.store.journal), for comparison.
#   ALLOC <what> <bytes a card>   and   US <what> <microseconds a card>, then ALLOC-DONE
# tests/vm/test_card_alloc_vm.py runs it on the VM; on the emulated Pico:
#   pitboss board start --kind pico; pitboss flash --port pico ...; mpremote run it.
import gc
import os
import time

ROOT = [""]

from pitboss.store.cardrec import CardRecord
from pitboss.controller import Controller
from pitboss.store.region import FileRegion, FlashRegion
from pitboss.store.ringjournal import RegionJournal


class RamFlash:
    """rp2.Flash's block-device calls over RAM, a 4 KB bytearray a sector (a Pico's heap
    has no 48 KB in one piece beside the app). Programs overwrite: what the journal
    programs is the same either way. A program allocates nothing."""

    def __init__(self, sectors):
        self.secs = [bytearray(b"\xff" * 4096) for _ in range(sectors)]
        self.sectors = sectors

    def readblocks(self, block, buf, off=0):
        n = len(buf)
        done = 0
        mv = memoryview(buf)
        while done < n:
            b, o = block + (off + done) // 4096, (off + done) % 4096
            k = min(n - done, 4096 - o)
            mv[done:done + k] = memoryview(self.secs[b])[o:o + k]
            done += k

    def writeblocks(self, block, buf, off=0):
        self.secs[block][off:off + len(buf)] = buf

    def ioctl(self, op, arg):
        if op == 4:
            return self.sectors
        if op == 5:
            return 4096
        if op == 6:
            self.secs[arg][:] = b"\xff" * 4096
            return 0


_us = getattr(time, "ticks_us", None) or (lambda: int(time.perf_counter() * 1e6))


def alloc(fn, n):
    """(bytes allocated, microseconds) a call of fn(n), per unit: the collector off."""
    gc.collect()
    gc.disable()
    try:
        a = gc.mem_alloc()
        t = _us()
        fn(n)
        t = _us() - t
        return (gc.mem_alloc() - a) // n, t // n
    finally:
        gc.enable()


def journal_only():
    j = RegionJournal(FlashRegion(RamFlash(12)), ROOT[0] + "/ja", snapshot=lambda s: "snap",
                      segment_sectors=4, max_payload=1024)
    j.open()
    rec = CardRecord()
    j.append(rec.encode(1, 1, 5))  # the segment's start (its snapshot)

    def run(n):
        for i in range(n):
            j.append(rec.encode(i % 53, i, 17), True)
    run(60)  # every record length seen once: its view made
    return alloc(run, 200)


def boot_full():
    """A boot's journal work on a full region: open(lazy=True) (a header a segment, the
    newest segment's records) and the replay from its newest snapshot, in microseconds;
    the region's 3 segments of 16 KB filled with card records round the ring."""
    rec = CardRecord()
    j = RegionJournal(FlashRegion(RamFlash(12)), ROOT[0] + "/jb", segment_sectors=4,
                      snapshot=lambda s: "snap " + "x" * 600, max_payload=1024)
    j.open()
    i = 0
    # Round the ring, to the newest segment's last record: every segment full.
    while not (j.segments and j.segments[-1][0] >= 5 and j.segments[-1][3] > 16384 - 80):
        j.append(rec.encode(i % 53, i, 1764000000))
        i += 1
        if i % 35 == 0:  # the controller's: one once 2 KB were journalled
            j.checkpoint()
            j.prepare(4)
    t = _us()
    j2 = RegionJournal(j.region, ROOT[0] + "/jb", snapshot=lambda s: "snap", segment_sectors=4,
                       max_payload=1024)
    j2.open(lazy=True)
    n = 0
    for _ in j2.replay():
        n += 1
    return 0, _us() - t


def table(root, region):
    # 16 KB segments: the RAM region must fit a Pico's heap beside the app (48 KB).
    # A Unix time, as a board's clock gives (a long int on MicroPython: issue 27).
    ctl = Controller(root, clock=lambda: 1764000000, rng=lambda n: 0, region=region,
                     segment_sectors=4)
    ctl.boot()
    ctl.apply({"ev": "config", "cfg": {"game": "pr-pai-gow", "seats": 6}})
    cards = list(range(53))
    out = []
    for r in range(2):
        for s in range(1, 7):
            rep = ctl.command("wager %d wager=10" % s)
            assert rep["ok"], rep
        rep = ctl.command("deal 7")
        assert rep["ok"], rep
        k = (r * 7) % 53
        deck = cards[k:] + cards[:k]
        seq = [r * 100]

        def deal(n):
            for i in range(n):
                seq[0] += 1
                rep = ctl.shoe_card(deck[i], seq[0])
                assert rep.get("ok"), rep
        out.append(alloc(deal, 49))
        for s in range(1, 7):
            ctl.command("houseway %d" % s)
        rep = ctl.command("settle")
        if not rep["ok"]:  # (a heap too small for the settlement: the cards are counted)
            print("SETTLE", rep)
            break
    return out[-1]  # the second round: the first's one-time allocations are behind it


def report(what, r):
    print("ALLOC", what, r[0])
    print("US", what, r[1])


def _rmtree(path):
    # What an earlier run left (its commit records would not match a fresh RAM region).
    import os
    try:
        names = os.listdir(path)
    except OSError:
        return
    for n in names:
        p = path + "/" + n
        try:
            os.remove(p)
        except OSError:
            _rmtree(p)
    os.rmdir(path)


def main(root="/bench-card", files=True):
    _rmtree(root)
    os.mkdir(root)
    ROOT[0] = root
    report("journal-append-region", journal_only())
    report("boot-full-region", boot_full())
    gc.collect()
    report("card-path-region", table(root + "/tr", FlashRegion(RamFlash(12))))
    gc.collect()
    if files:
        report("card-path-sector-files", table(root + "/ts", FileRegion(
            root + "/ts/journal/region", 12)))
        gc.collect()
        report("card-path-segment-files", table(root + "/tf", None))
    print("ALLOC-DONE")


main()
