# Runs on MicroPython (the VM) and on CPython: the I/O modules on fixed inputs, results as
# one JSON line. tests/vm/test_io_vm.py runs it both ways and requires identical output, so
# the frame parser, the deck map file, the display pixels (framebuf vs framebuf_shim), the
# RFID driver and the RNG behave the same on the board's interpreter as in host tests.
#   argv[1]: a writable directory for the deck map file.
import hashlib
import json
import sys
from binascii import hexlify

try:
    import framebuf  # noqa: F401  (built into MicroPython)
except ImportError:  # CPython: the host's stand-in, installed as the host tools do
    from host_tools.emu import framebuf_shim

    framebuf_shim.install()

import fake_mfrc522 as F  # noqa: E402
from pitboss.store import deckmap  # noqa: E402
from pitboss.hw import display, serialshoe, shoe  # noqa: E402
from pitboss.hw.mfrc522 import MFRC522, RFIDError  # noqa: E402
from pitboss.sim.rng import XorShift32  # noqa: E402


def sha(buf):
    return hexlify(hashlib.sha256(bytes(buf)).digest()).decode()


def shoe_part():
    deck = XorShift32(2024).shuffle(list(range(53)))
    data = bytearray()
    for i, c in enumerate(deck[:20]):
        f = shoe.encode(c, (0xFFF8 + i) & 0xFFFF)
        if i == 3:
            continue  # dropped
        if i == 5:
            f = f[:4] + b"Z" + f[5:]  # malformed
        if i == 7:
            data += b"\x00noise!12"
        if i == 9:
            f = f[:2] + (b"0" if f[2:3] != b"0" else b"1") + f[3:]  # bad CRC
        data += f
        if i == 11:
            data += f  # repeated
    data += shoe.encode(63, 12, strict=False) + shoe.encode(deck[0], 13)
    events = []
    s = serialshoe.SerialShoe(serialshoe.ByteSource(bytes(data)),
                        lambda c, q, i: events.append([shoe.NAMES[c], q, i]), bufsize=16)
    cards = []
    while True:
        got = s.poll()
        if got is None:
            break
        cards.append(list(got))
    return {"deck": deck, "cards": cards, "events": events, "counts": s.counts}


def deckmap_part(tmpdir):
    dm = deckmap.DeckMap()
    uids = [bytes([4, 1, 0, i, 0x55, 0xAA, i ^ 0x5A]) for i in range(53)]
    out = {}
    reg = deckmap.Registration(dm, size=53)
    for u in uids[:5]:
        reg.add(u)
    try:
        reg.add(uids[2])
    except deckmap.DeckError as e:
        out["dup"] = [e.code, str(e)]
    for u in uids[5:]:
        reg.add(u)
    out["deck"] = reg.commit()
    path = tmpdir + "/deckmap.txt"
    dm.save(path)
    back = deckmap.DeckMap.load(path)
    out["file_sha"] = sha(back.dumps())
    out["lookup"] = [list(back.lookup(u)) for u in uids[::13]]
    try:
        back.lookup(b"\x01\x02\x03\x04")
    except deckmap.DeckError as e:
        out["unknown"] = [e.code, str(e)]
    data = bytearray(dm.dumps())
    data[60] ^= 1
    try:
        deckmap.DeckMap.loads(bytes(data), "deckmap.txt")
    except deckmap.DeckError as e:
        out["corrupt"] = [e.code, str(e)]
    return out


def display_part():
    fb, buf = display.framebuffer()
    d = display.TableDisplay(fb)
    out = []
    d.status("nj-5card", [1, 2, 3, 5], round_no=17, phase="dealing", notes=["SHOE OK"])
    out.append(sha(buf))
    d.result("pa-three-card-prime", ((0, "straight_flush", True), (
        (1, 30, "flush"), (2, -20, "one_pair"), (3, 0, "mini_royal"))), round_no=3)
    out.append(sha(buf))
    d.result("pr-pai-gow", ((1, "full_house", "AK"), (
        (2, 950, "KQ"), (3, 0, "J9"), (4, -100, None))), round_no=12)
    out.append(sha(buf))
    d.alarm("dropped", shoe.describe(shoe.EV_DROPPED, 17, 2) + " ~ \u00e9")
    out.append(sha(buf))
    fb.line(0, 0, 127, 63, 1)
    fb.line(120, 3, 2, 60, 0)
    fb.rect(-3, 50, 20, 20, 1)
    out.append(sha(buf))
    return out


def rfid_part():
    out = []
    for uid in (b"\xde\xad\xbe\xef", bytes(range(1, 8)), bytes(range(1, 11))):
        chip, spi, cs, rst = F.reader([F.Tag(uid)])
        r = MFRC522(spi, cs, rst, sleep_ms=lambda ms: None)
        out.append(hexlify(r.read_uid()).decode())
        out.append(r.read_uid())  # halted: None
    chip, spi, cs, rst = F.reader([F.Tag(b"\x01\x02\x03\x04"), F.Tag(b"\x01\x02\x03\x05")])
    r = MFRC522(spi, cs, rst, sleep_ms=lambda ms: None)
    try:
        r.read_uid()
    except RFIDError as e:
        out.append(e.kind)
    t = F.Tag(b"\x01\x02\x03\x04")
    t.bad_sak_crc = True
    chip.tags = [t]
    try:
        r.read_uid()
    except RFIDError as e:
        out.append([e.kind, str(e)])
    return out


def noalloc_decoder():
    """MicroPython only: FrameDecoder.push on clean frames allocates nothing."""
    import micropython

    data = b"".join(shoe.encode(c, c) for c in range(10))
    dec = shoe.FrameDecoder(None)
    ok = 0
    micropython.heap_lock()
    try:
        for b in data:
            if dec.push(b):
                ok += 1
    finally:
        micropython.heap_unlock()
    return ok


def main():
    r = XorShift32(1)
    result = {
        "rng": [r.next32() for _ in range(3)] + [r.randbelow(52)],
        "shoe": shoe_part(),
        "deckmap": deckmap_part(sys.argv[1]),
        "display": display_part(),
        "rfid": rfid_part(),
    }
    print(json.dumps(result))
    if sys.implementation.name == "micropython":
        print("noalloc", noalloc_decoder())
    print("IO-CHECK-OK")


main()
