"""pitboss.store.tilt: tilts persist across power cycles until an operator clears them."""
import pytest

from pitboss.store import tilt as T
from pitboss.store.osfs import OsFS
from pitboss.store.slots import SlotCorrupt, Slots
from pitboss.store.tilt import Tilt
from tests.support.powercut_fs import MemFS, PowerCut

P = "/state/tilt"


class Clock:
    def __init__(self, t=1_000_000):
        self.t = t

    def __call__(self):
        self.t += 7
        return self.t


def make(fs, clock=None, **kw):
    return Tilt(P, fs, clock or Clock(), **kw).load()


def test_raise_survives_power_cycles_until_cleared():
    fs = MemFS()
    t = make(fs)
    assert not t.tilted and t.active() == [] and t.log() == []
    e = t.raise_tilt("duplicate_card", "Ah twice in seat 3", jseq=41)
    assert e == {"n": 1, "code": "duplicate_card", "detail": "Ah twice in seat 3",
                 "time": 1_000_007, "jseq": 41}
    for _ in range(3):  # power cycles
        t = make(fs)
        assert t.tilted and t.active() == [e]
    assert t.clear("op-17") == ["duplicate_card"]
    assert not t.tilted
    t = make(fs, Clock(5))
    assert not t.tilted
    assert t.log() == [
        {"n": 1, "ev": "raise", "code": "duplicate_card", "detail": "Ah twice in seat 3",
         "time": 1_000_007, "op": ""},
        {"n": 2, "ev": "clear", "code": "duplicate_card", "detail": "Ah twice in seat 3",
         "time": 1_000_007, "op": "op-17"}]  # the clock of the last power cycle


def test_several_tilts_clear_one_or_all():
    fs = MemFS()
    t = make(fs)
    t.raise_tilt("unknown_rfid_tag", "04a1b2c3")
    again = t.raise_tilt("unknown_rfid_tag", "04ffffff")  # already active: not doubled
    assert again["detail"] == "04a1b2c3" and len(t.log()) == 1
    t.raise_tilt("wrong_card_count", "seat 2 has 4 cards")
    assert [a["code"] for a in t.active()] == ["unknown_rfid_tag", "wrong_card_count"]
    assert t.clear("boss", "wrong_card_count") == ["wrong_card_count"]
    assert [a["code"] for a in make(fs).active()] == ["unknown_rfid_tag"]
    assert t.clear("boss", "journal_corrupt") == []
    assert t.clear("boss") == ["unknown_rfid_tag"]
    assert t.clear("boss") == []
    assert [e["ev"] for e in t.log()] == ["raise", "raise", "clear", "clear"]
    assert [e["n"] for e in t.log()] == [1, 2, 3, 4]


def test_log_is_bounded():
    fs = MemFS()
    t = make(fs, log_max=5)
    for i in range(6):
        t.raise_tilt("shoe_fault", "fault %d" % i)
        t.clear("op")
    log = make(fs, log_max=5).log()
    assert len(log) == 5 and log[-1] == {"n": 12, "ev": "clear", "code": "shoe_fault",
                                         "detail": "fault 5", "time": log[-1]["time"],
                                         "op": "op"}


@pytest.mark.parametrize("call", [
    lambda t: t.raise_tilt("no_such_code"),
    lambda t: t.raise_tilt("bad_mac", 5),
    lambda t: t.raise_tilt("bad_mac", "x", jseq=-1),
    lambda t: t.clear(""),
    lambda t: t.clear("a b"),
    lambda t: t.clear("x" * 33),
    lambda t: t.clear(7),
    lambda t: t.clear("op", "no_such_code"),
])
def test_bad_input_is_refused_and_changes_nothing(call):
    fs = MemFS()
    t = make(fs)
    t.raise_tilt("bad_mac", "3 refusals")
    before = {k: bytes(v) for k, v in fs.files.items()}
    with pytest.raises((ValueError, TypeError)):
        call(t)
    assert {k: bytes(v) for k, v in fs.files.items()} == before
    assert [a["code"] for a in t.active()] == ["bad_mac"]


def test_detail_is_cut_and_codes_are_documented():
    t = make(MemFS())
    assert len(t.raise_tilt("storage_error", "x" * 500)["detail"]) == 80
    doc = open(__file__.replace("tests/host/test_tilt.py", "docs/journal.md")).read()
    for code in T.CODES:
        assert "`%s`" % code in doc, code
    for code in ("journal_corrupt", "duplicate_card", "wrong_card_count", "unknown_rfid_tag",
                 "firmware_mismatch", "bad_mac"):
        assert code in T.CODES


def test_fail_safe_when_flash_writes_fail():
    fs = MemFS()
    t = make(fs)
    real = fs.open

    def failing(p, mode):
        if "w" in mode:
            raise OSError(5, "EIO")
        return real(p, mode)

    fs.open = failing
    with pytest.raises(OSError):
        t.raise_tilt("journal_corrupt", "bad_record")
    assert t.tilted  # halted in RAM all the same
    fs.open = real
    t.raise_tilt("storage_error")
    fs.open = failing
    with pytest.raises(OSError):
        t.clear("op")
    assert t.tilted  # a clear that is not durable does not count
    fs.open = real
    assert [a["code"] for a in make(fs).active()] == ["journal_corrupt", "storage_error"]


def test_unreadable_store_is_itself_a_tilt():
    fs = MemFS()
    t = make(fs)
    t.raise_tilt("bad_mac")
    t.clear("op")
    for p in (P + ".a", P + ".b"):
        fs.files[p][14] ^= 0x55
    t = make(fs)
    assert [a["code"] for a in t.active()] == ["tilt_store_corrupt"]
    assert "no valid copy" in t.active()[0]["detail"]
    t = make(fs)  # it was written: it persists
    assert [a["code"] for a in t.active()] == ["tilt_store_corrupt"]
    t.clear("tech")
    assert not make(fs).tilted
    # A good CRC around contents that are not a tilt record.
    fs2 = MemFS()
    Slots(P, fs2).save("[1, 2]")
    assert make(fs2).active()[0]["code"] == "tilt_store_corrupt"


@pytest.mark.parametrize("mode", ["prefix", "cow"])
def test_power_cut_at_every_step_of_raise_and_clear(mode):
    for action in ("raise", "clear"):
        base = MemFS(mode)
        t = make(base)
        t.raise_tilt("firmware_mismatch", "pitboss/games/table.py")
        if action == "raise":
            t.clear("op")
        k = 0
        while True:
            fs = base.clone()
            t = make(fs)
            fs.cut_after(k)
            try:
                if action == "raise":
                    t.raise_tilt("duplicate_card", "Ks")
                else:
                    t.clear("op")
                done = True
            except PowerCut:
                done = False
            fs.reboot()
            t = make(fs)
            if action == "raise":
                assert t.tilted or not done
                assert [a["code"] for a in t.active()] in ([], ["duplicate_card"])
            else:
                assert not t.tilted or not done
                assert [a["code"] for a in t.active()] in ([], ["firmware_mismatch"])
            if done:
                break
            k += 1
        assert k > 50


def slot_blob(gen, data):
    import binascii
    import struct
    head = b"PBS1" + struct.pack("<II", gen, len(data)) + data
    return head + struct.pack("<I", binascii.crc32(head))


def test_slots_rules():
    fs = MemFS()
    fs.dirs.add("/s")
    s = Slots("/s/x", fs)
    assert s.load() is None
    # A torn very first save was never acknowledged: as if nothing was saved.
    fs.files["/s/x.b"] = bytearray(b"PBS1\x01\x00")
    assert Slots("/s/x", fs).load() is None
    fs.files["/s/x.b"] = bytearray(b"PB")
    assert Slots("/s/x", fs).load() is None
    del fs.files["/s/x.b"]
    s = Slots("/s/x", fs)
    s.save("one")
    s.save("two")
    assert Slots("/s/x", fs).load() == b"two"
    # Two different copies claiming the same generation: refuse to choose.
    fs.files["/s/x.a"] = bytearray(slot_blob(2, b"TWO"))
    fs.files["/s/x.b"] = bytearray(slot_blob(2, b"two"))
    with pytest.raises(SlotCorrupt):
        Slots("/s/x", fs).load()
    fs.files["/s/x.a"] = bytearray(slot_blob(3, b"three"))
    assert Slots("/s/x", fs).load() == b"three"
    with pytest.raises(ValueError):
        Slots("/s/x", fs, max_size=4).save("12345")


def test_real_directory(tmp_path):
    p = str(tmp_path / "state" / "tilt")
    t = Tilt(p, OsFS(), Clock()).load()
    t.raise_tilt("journal_corrupt", "bad_record at 00000003.jnl@200")
    t2 = Tilt(p, OsFS(), Clock()).load()
    assert t2.active()[0]["detail"] == "bad_record at 00000003.jnl@200"
