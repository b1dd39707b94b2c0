"""pitboss.store.ringjournal on a flash region: the format, the ring, and power cuts at every byte
of every page program and at every step of every sector erase (tests/support/nor_flash.py), on
the raw-region driver (pitboss.store.region.FlashRegion over the NOR model) and the file-backed
one (pitboss.store.region.FileRegion)."""
import binascii
import os
import struct

import pytest

from tests.support.nor_flash import NorFlash
from pitboss.store import record as R
from pitboss.store.record import JournalCorrupt, JournalFull
from pitboss.store.osfs import OsFS
from pitboss.store.region import FileRegion, FlashRegion
from pitboss.store.ringjournal import RegionJournal
from tests.support.powercut_fs import MemFS, PowerCut
from tests.host.test_journal import encode_record

D = "/journal"
SMALL = dict(segment_sectors=1, max_payload=300)


class Table:
    """The table engine's stand-in: its state is the number of events applied
    (write-ahead: journalled, then applied)."""

    def __init__(self):
        self.n = 0

    def snapshot(self, seq):
        return "snap %d" % self.n


def ev(i):
    # Sizes that put records across page boundaries, and some over a page.
    return "ev %d %s" % (i, "x" * ((i * 37) % 280))


def make(region, fs=None, table=None, **kw):
    opts = dict(SMALL)
    opts.update(kw)
    table = table or Table()
    j = RegionJournal(region, D, snapshot=table.snapshot, fs=fs or MemFS(), **opts)
    return j, table


def recover(region, fs=None, **kw):
    """Boot: open lazily, check the rest as the idle passes do, replay from the newest
    snapshot. Returns (state, events kept, journal)."""
    j, _ = make(region, fs, **kw)
    j.open(lazy=True)
    while j.verify(3):
        pass
    state = None
    for seq, kind, payload in j.replay():
        if kind == R.KIND_SNAPSHOT:
            state = int(payload.split()[1])
        else:
            assert state is not None
            assert payload == ev(state).encode(), (payload[:20], state)
            state += 1
    events = [p.decode() for s, k, p in j.records() if k == R.KIND_RECORD]
    seqs = [s for s, k, p in j.records()]
    assert seqs == list(range(j.first_seq, j.next_seq)), seqs
    return state or 0, events, j


def put(j, t, n):
    """n more events, journalled then applied."""
    for _ in range(n):
        j.append(ev(t.n))
        t.n += 1


def check_events(events, state):
    """What is kept is a run of consecutive events ending with the last one applied."""
    want = [ev(i) for i in range(state - len(events), state)]
    assert events == want, ([e[:12] for e in events[-3:]], state)


def test_format_is_the_journals_records_after_a_segment_header():
    nor = NorFlash(4)
    j, t = make(FlashRegion(nor))
    j.open()
    assert j.append('{"ev":"card","c":"As"}') == 2
    h = b"PBJ0" + struct.pack("<II", 1, 1)
    want = h + struct.pack("<I", binascii.crc32(h)) + encode_record(0x53, 1, b"snap 0") + \
        encode_record(0x52, 2, b'{"ev":"card","c":"As"}')
    assert bytes(nor.mem[:len(want)]) == want
    assert nor.mem[len(want):4096] == b"\xff" * (4096 - len(want))
    # docs/journal.md's segment header is these bytes.
    doc = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "journal.md")).read()
    assert want[:16].hex() in doc.replace(" ", "").replace("\n", "")


def test_append_replay_ring_wrap_and_wear_spread():
    nor = NorFlash(6)
    j, t = make(FlashRegion(nor))
    j.open()
    for i in range(400):
        j.append(ev(i))
        t.n += 1
        if i % 7 == 0:
            j.prepare()
    assert len(j.segments) >= 5
    state, events, j2 = recover(FlashRegion(nor))
    assert state == 400
    check_events(events, 400)
    # Every sector erased, none more than once beyond the others: the ring spreads wear.
    assert min(nor.wear) >= 2 and max(nor.wear) - min(nor.wear) <= 1, nor.wear
    assert j2.last(2) == [(j2.last_seq - 1, R.KIND_RECORD, ev(398).encode()),
                          (j2.last_seq, R.KIND_RECORD, ev(399).encode())]


def test_records_are_packed_and_a_page_is_programmed_once_a_record():
    nor = NorFlash(4)
    j, t = make(FlashRegion(nor), max_payload=64)
    j.open()
    j.append("card 00")  # starts the segment (its snapshot, then its header)
    pages = nor.pages
    for i in range(20):
        j.append("card %02d" % i)  # 21-byte records
    # 20 records of 21 bytes: one program each, a second when one crosses a page.
    assert 20 <= nor.pages - pages <= 22
    assert nor.erases == 0  # the first segment was erased already


def scenario(j, t, log, n=40):
    """Appends (across pages and segments, round the ring), checkpoints and erases
    ahead. log[0]: appends acknowledged; log[1]: the index in flight."""
    for i in range(t.n, n):
        log[1] = i
        j.append(ev(i))
        t.n += 1
        log[0] = t.n
        if i % 5 == 4:
            j.checkpoint()
        if i % 3 == 2:
            j.prepare()


def run_cut(base, k, start, n):
    nor = base.clone()
    fs = MemFS()
    j, t = make(FlashRegion(nor), fs)
    j.open(lazy=True)
    t.n = start
    log = [start, start]
    nor.cut_after(k)
    try:
        scenario(j, t, log, n)
    except PowerCut:
        pass
    else:
        return False
    nor.reboot()
    state, events, j2 = recover(FlashRegion(nor), fs)
    # Nothing acknowledged lost, nothing doubled: the state is the appends that returned,
    # or one more (the cut came after its last page was programmed).
    assert state in (log[0], log[0] + 1), (k, state, log)
    check_events(events, state)
    # The journal goes on after the cut, and a second boot agrees.
    j2, t2 = make(FlashRegion(nor), fs)
    t2.n = state
    j2.open(lazy=True)
    scenario(j2, t2, [0, 0], state + 4)
    state2, events2, _ = recover(FlashRegion(nor), fs)
    assert state2 == state + 4
    check_events(events2, state2)
    return True


def sweep(start, stride, n=24):
    """Cut the power at every `stride`-th unit (a byte programmed, a step of an erase) of
    `n` appends after `start` ones, on a region of 4 one-sector segments: the appends
    cross pages and segments, and with start > 0 the ring has wrapped, so the cuts fall
    in checkpoints, in erases ahead (prepare()) and on a rotation's path, and in
    retirements of the oldest segment. The region starts as junk (flash used before), so
    the first rotations erase too."""
    nor = NorFlash(4, seed=start + 1, junk=True)
    j, t = make(FlashRegion(nor))
    j.open()
    scenario(j, t, [0, 0], start)
    total = units_of(nor, start, start + n)
    assert total > 4000
    erases = nor.erases
    cuts = 0
    for k in range(0, total, stride):
        cuts += run_cut(nor, k, start, start + n)
    assert cuts == len(range(0, total, stride))
    return nor.erases - erases


def units_of(base, start, n):
    nor = base.clone()
    j, t = make(FlashRegion(nor))
    j.open(lazy=True)
    t.n = start
    u = nor.units
    e = nor.erases
    scenario(j, t, [0, 0], n)
    assert nor.erases > e, "the scenario erases nothing: widen it"
    return nor.units - u


@pytest.mark.parametrize("start", [0, 90])
def test_power_cut_at_every_7th_byte_of_programs_and_steps_of_erases(start):
    sweep(start, 7)


@pytest.mark.slow  # the rest of the module is host (tests/support/tiers.py)
@pytest.mark.parametrize("start", [0, 90])
def test_power_cut_at_every_byte_of_every_program_and_every_step_of_every_erase(start):
    # 12 appends, not 24: every byte of them still takes in an erase ahead, a rotation
    # and (from 90, the ring wrapped) a retirement, at a quarter of the cost (each cut
    # replays the appends before it); the every-7th sweep above covers the 24.
    sweep(start, 1, n=12)


def test_a_torn_append_is_cut_off_and_the_next_append_starts_a_segment():
    nor = NorFlash(4)
    j, t = make(FlashRegion(nor))
    j.open()
    put(j, t, 3)
    nor.cut_after(j.segments[-1][3] % 256 + 20)  # 20 bytes into the record
    with pytest.raises(PowerCut):
        j.append("y" * 290)
    nor.reboot()
    j2, t2 = make(FlashRegion(nor))
    rep = j2.open()
    assert rep["torn"] > 0
    assert [p for s, k, p in j2.records() if k == R.KIND_RECORD] == \
        [ev(i).encode() for i in range(3)]
    t2.n = 3
    before = len(j2.segments)
    j2.append(ev(3))
    assert len(j2.segments) == before + 1  # a torn page is never programmed over


def test_damage_is_corrupt_not_a_torn_append():
    nor = NorFlash(4)
    j, t = make(FlashRegion(nor))
    j.open()
    put(j, t, 30)
    seg0 = 0
    # A flipped bit in a sealed segment: found by verify().
    nor.mem[seg0 + 300] ^= 0x04
    j2, _ = make(FlashRegion(nor))
    j2.open(lazy=True)
    with pytest.raises(JournalCorrupt):
        while j2.verify(4):
            pass
    assert j2.state == "corrupt"
    nor.mem[seg0 + 300] ^= 0x04
    # A record in the middle of the newest segment damaged: not a torn tail.
    last = j.segments[-1]
    pos = (last[0] - 1) % 4
    nor.mem[pos * 4096 + 60] ^= 0x10
    with pytest.raises(JournalCorrupt):
        make(FlashRegion(nor))[0].open()


def test_retain_refuses_rather_than_erase_what_is_not_acknowledged():
    nor = NorFlash(4)
    j, t = make(FlashRegion(nor), fs=MemFS(), commit=True, retain=True)
    j.open()
    with pytest.raises(JournalFull):
        for i in range(200):
            j.append(ev(i))
            t.n += 1
            j.prepare()
    assert j.full
    kept = j.last_seq
    j.acknowledge(j.segments[1][2])
    assert not j.full
    assert j.prepare()
    j.append(ev(t.n))
    assert j.last_seq == kept + 2  # a new segment: its snapshot and the record


def test_quarantine_starts_a_journal_the_old_one_is_never_read_again():
    nor = NorFlash(6)
    fs = MemFS()
    j, t = make(FlashRegion(nor), fs, commit=True)
    j.open()
    put(j, t, 60)
    high = j.last_seq
    nor.mem[100] ^= 1
    nor.mem[(j.segments[-1][0] - 1) % 6 * 4096 + 40] ^= 1
    j2, t2 = make(FlashRegion(nor), fs, commit=True)
    with pytest.raises(JournalCorrupt):
        j2.open()
    t2.n = 1000
    assert j2.quarantine(5) == high + 1
    j2.append(ev(1000))
    j3, _ = make(FlashRegion(nor), fs, commit=True)
    j3.open()
    assert [s for s, k, p in j3.records()] == [high + 1, high + 2]


def test_file_region_holds_the_same_bytes_as_flash(tmp_path):
    nor = NorFlash(4)
    fr = FileRegion(str(tmp_path / "region"), 4, fs=OsFS(durable=False))
    ja, ta = make(FlashRegion(nor))
    jb, tb = make(fr)
    ja.open()
    jb.open()
    for i in range(70):
        for jj, tt in ((ja, ta), (jb, tb)):
            jj.append(ev(i))
            tt.n += 1
            if i % 9 == 8:
                jj.prepare()
    buf = bytearray(4096)
    for s in range(4):
        fr.read(s * 4096, buf)
        assert bytes(buf) == bytes(nor.mem[s * 4096:(s + 1) * 4096]), s
    fr.close()
    state, events, _ = recover(FileRegion(str(tmp_path / "region"), 4,
                                          fs=OsFS(durable=False)))
    assert state == 70
    check_events(events, 70)


# ---- a table on the region journal (the controller, through the app) ------------------
PG = "pr-pai-gow"


def RegionTarget(root, kind, nor=None, sectors=64):
    """host_tools.table.targets.LocalTarget whose board has a journal region: `kind` "nor"
    (the raw driver over the NOR model, what the pitboss image has) or "file" (sector
    files in the target's folder, what a stock image has)."""
    from host_tools.table.targets import LocalTarget

    if kind == "nor":
        nor = nor or NorFlash(sectors)
        t = LocalTarget(root, durable=False, region=lambda root, fs: FlashRegion(nor))
    else:
        t = LocalTarget(root, durable=False, region=lambda root, fs: FileRegion(
            root + "/journal/region", sectors, fs))
    t.nor = nor
    return t


def region_table(tmp_path, kind, seats=6, **kw):
    from host_tools.table.configurator import Configurator
    from host_tools.table.auth import KeyStore

    t = RegionTarget(str(tmp_path / "flash"), kind, **kw)
    conf = Configurator(t, "r1", KeyStore(str(tmp_path / "keys")))
    conf.provision()
    assert conf.configure(PG, seats)["ok"]
    return t, conf


@pytest.mark.parametrize("kind", ["nor", "file"])
def test_a_table_on_a_region_settles_recalls_exports_and_survives_reboots(tmp_path, kind):
    from host_tools.table import export as ex
    from host_tools.table.configurator import Configurator
    from host_tools.table.rounds import play_rounds
    from host_tools.table.targets import LocalTarget
    from host_tools.table.auth import KeyStore
    from pitboss.store.ringjournal import RegionJournal

    # The reference: the same rounds on the segment-file journal.
    ref = LocalTarget(str(tmp_path / "ref"), durable=False)
    rc = Configurator(ref, "ref", KeyStore(str(tmp_path / "rkeys")))
    rc.provision()
    assert rc.configure(PG, 6)["ok"]
    want = [r for r in play_rounds(ref, PG, 6, 30, seed=3)]

    t, conf = region_table(tmp_path, kind)
    assert isinstance(t.app.ctl.journal, RegionJournal)
    got = []
    store = str(tmp_path / "store")
    for i in range(3):
        got += [r for r in play_rounds(t, PG, 6, 10, seed=3 + 10 * i)]
        for _ in range(40):
            t.app.ctl.idle()  # idle passes: the next segment erased ahead
        ex.export(t, conf.keys, "r1", store)
        t = RegionTarget(t.root, kind, nor=t.nor)  # a power cycle
        conf.target = t
    strip = lambda r: {k: v for k, v in r.items() if k not in ("seq", "t")}  # noqa: E731
    assert [strip(r) for r in got] == [strip(r) for r in want]
    j = t.app.ctl.journal
    assert len(j.segments) >= 3 and j.acked == j.last_seq - 1
    assert strip(t.commands(["meters"])[0]["totals"]) == \
        strip(ref.commands(["meters"])[0]["totals"])
    rec = t.commands(["recall 10"])[0]["rounds"]
    assert [r["result"] for r in rec] == [r["result"] for r in ref.commands(["recall 10"])[0]
                                          ["rounds"]]
    seqs = [x["seq"] for x in ex.read_store(ex.store_path(store, "r1"))]
    assert seqs == list(range(1, seqs[-1] + 1))


def test_a_full_region_tilts_journal_full_and_an_export_frees_it(tmp_path):
    from host_tools.table import export as ex
    from host_tools.table.rounds import play_rounds

    t, conf = region_table(tmp_path, "nor", sectors=24)  # 3 segments of 32 KB
    ctl = t.app.ctl
    i = 0
    while not ctl.halted():  # wagers and newrounds: no cards lost when it halts
        i += 1
        for ln in ("wager 1 wager=%d" % i, "wager 2 wager=5", "newround"):
            assert t.commands([ln])[0]["ok"] or ctl.halted()
        ctl.idle()
        assert i < 3000
    assert [a["code"] for a in ctl.active_tilts()] == ["journal_full"] and ctl.journal.full
    assert ctl.journal.first_seq == 1  # nothing erased that was not exported
    ex.export(t, conf.keys, "r1", str(tmp_path / "store"))
    assert ctl.active_tilts() == [] and not ctl.journal.full
    for r in play_rounds(t, PG, 6, 6, seed=100):
        assert r["ok"]
        ctl.idle()
    assert ctl.journal.first_seq > 1  # exported segments erased to make room
