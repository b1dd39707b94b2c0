"""A record's bytes as the card path writes them (issue 27: a dealt card allocates
(almost) nothing): the card record's encoder (pitboss.store.cardrec) against json.dumps,
long-int times included, and the native header and CRC writer (pitboss/store/recnative.py,
@micropython.viper) against record.frame's struct and binascii bytes. CPython has no
viper: its source runs here with the viper built-ins as plain Python (ptr8/ptr32 as the
buffers themselves, uint as 32-bit), which checks its arithmetic and byte layout; the
emulated Pico runs the compiled code (docs/bench.md)."""
import json
import random
import sys
import types
from pathlib import Path

import pytest

from pitboss.store import record
from pitboss.store.cardrec import CardRecord
from host_tools.deploy import mpy_build

SRC = Path(record.__file__).with_name("recnative.py")


def _want(c, s, t):
    ev = {"ev": "card", "c": c}
    if s is not None:
        ev["s"] = s
    ev["t"] = t
    return json.dumps(ev, separators=(",", ":")).encode()


@pytest.mark.parametrize("t", [0, 7, 10, 2**30 - 1, 2**30, 2**30 + 1, 1764000000,
                               1764009999, 1764010000, 1000000000, 2**31, 2**32 - 1,
                               2**32, 2**40])
def test_card_record_bytes_are_json_dumps(t):
    r = CardRecord()
    for c in (0, 9, 52):
        for s in (None, 0, 1, 12345, 2**31):
            assert bytes(r.encode(c, s, t)) == _want(c, s, t)


def test_card_record_times_in_the_long_int_range():
    r = CardRecord()
    rng = random.Random(27)
    for _ in range(5000):
        t = rng.randrange(2**30, 2**32)
        assert bytes(r.encode(17, 3, t)) == _want(17, 3, t)


def _recnative(monkeypatch):
    mp = types.ModuleType("micropython")
    mp.viper = lambda f: f
    monkeypatch.setitem(sys.modules, "micropython", mp)
    mod = types.ModuleType("recnative_under_cpython")
    mod.__dict__.update(ptr8=lambda b: b, ptr32=lambda a: a,
                        uint=lambda x: x & 0xFFFFFFFF)
    exec(compile(SRC.read_text(), str(SRC), "exec"), mod.__dict__)
    return mod


def test_native_frame_writes_frames_bytes(monkeypatch):
    nat = _recnative(monkeypatch)
    rng = random.Random(5)
    for n in list(range(0, 80)) + [255, 256, 1000, 1024]:
        data = bytes(rng.randrange(256) for _ in range(n))
        for kind in (record.KIND_RECORD, record.KIND_SNAPSHOT):
            for seq in (0, 1, 65535, 2**29 + 3, 2**30 - 1):
                want = bytearray(record.OVERHEAD)
                mv = memoryview(want)
                record.frame(want, mv[:8], mv[:record.HDR], kind, seq, data)
                got = bytearray(record.OVERHEAD)
                nat.frame(got, data, len(data), kind, seq)
                assert got == want, (n, kind, seq)


def test_native_put_writes_the_record_frame_frames_whole(monkeypatch):
    # The journal's page buffer gets header, payload and CRC-32 in one call (ringjournal
    # _put_record): the bytes record.frame() and the payload give, written at `at`, and
    # nothing else in the buffer touched.
    nat = _recnative(monkeypatch)
    rng = random.Random(6)
    for n in list(range(0, 70)) + [255, 400]:
        data = bytes(rng.randrange(256) for _ in range(n))
        for at in (0, 1, 200, 255):
            for seq in (0, 7, 2**30 - 1):
                head = bytearray(record.OVERHEAD)
                mv = memoryview(head)
                record.frame(head, mv[:8], mv[:record.HDR], record.KIND_RECORD, seq, data)
                want = bytearray(b"\xee" * 1024)
                want[at:at + record.OVERHEAD + n] = (bytes(head[:record.HDR]) + data
                                                     + bytes(head[record.HDR:]))
                got = bytearray(b"\xee" * 1024)
                nat.put(got, at, memoryview(data), n, record.KIND_RECORD, seq)
                assert got == want, (n, at, seq)


def test_the_native_writer_is_built_for_the_boards_with_native_code():
    # pitboss flash compiles it for the board's arch (and leaves it off the VM board).
    assert mpy_build.NATIVE.search(SRC.read_text())


def test_frame_on_cpython_uses_no_native_code():
    assert record.native() is False


def test_native_card_numbers_are_json_dumps(monkeypatch):
    nat = _recnative(monkeypatch)
    from pitboss.store.cardrec import _HEAD
    rng = random.Random(9)
    times = [0, 9, 10, 9999, 10000, 65535, 65536, 2**30 - 1, 2**30, 1764000000,
             1764009999, 1764010000, 2**31, 2**32 - 1] + [rng.randrange(2**32)
                                                          for _ in range(3000)]
    for k, t in enumerate(times):
        c = k % 53
        s = (None, 0, 1, 9, 10, 99999, 2**30 - 1, rng.randrange(2**30))[k % 8]
        buf = bytearray(72)
        buf[:len(_HEAD)] = _HEAD
        n = nat.card(buf, len(_HEAD), c, -1 if s is None else s, t)
        assert bytes(buf[:n]) == _want(c, s, t), (c, s, t)
