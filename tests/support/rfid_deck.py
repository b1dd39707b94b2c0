"""RFID on the emulated Pico: the firmware's MFRC522 driver on SPI0 against the emulator's
reader model (host_tools/emu/pico/mfrc522.mjs). A deck registered tag by tag, a round dealt by
tag and settled, and the reader's faults. Used by tests/support/pico_tier.py (background job);
tests/pico/test_pico_board.py asserts on what it returns."""
import json

from host_tools.emu.shoe_sim import shuffled_deck
from host_tools.table.rounds import plan_round
from host_tools.table.targets import LocalTarget
from pitboss.store.deckmap import new_deck_order

GAME, SEATS, SEED = "nj-3card", 3, 4242


def uid_for(card):
    """4-byte UIDs for even cards, 7-byte for odd: both cascade paths are dealt."""
    if card % 2 == 0:
        return bytes([0x3A, card, 0x5C, 0x7E])
    return bytes([0x04, 0x01, card, 0xA0, 0xB1, 0xC2, 0xD3])


_POLL = ("import pitboss.hostapi as A, json\n"
         "for _ in range(%d):\n"
         "    for r in A.app().poll():\n"
         "        print(json.dumps(r))\n")

_DRIVER = ("import board, json\nfrom pitboss.hw.mfrc522 import MFRC522, RFIDError\n"
           "from binascii import hexlify\n"
           "try:\n    r = MFRC522(*board.rfid())\n"
           "except RFIDError as e:\n    r = None\n    print(json.dumps({'init': e.kind}))\n"
           "for _ in range(%d if r else 0):\n"
           "    try:\n        u = r.read_uid()\n"
           "        print(json.dumps({'uid': hexlify(u).decode() if u else None}))\n"
           "    except RFIDError as e:\n        print(json.dumps({'err': e.kind}))\n")


def register_and_deal(pico):
    b, ctl = pico.board, pico.ctl
    out = {}
    order = new_deck_order(52)
    ctl("rfid", deck=[{"uid": uid_for(c).hex()} for c in order], replace=True)
    out["register_start"] = pico.conf.signed("deck-register")
    out["registered"] = [json.loads(ln) for ln in b.exec(_POLL % 60).splitlines() if ln]
    out["deck"] = pico.target.commands(["deck"])[0]

    # One round dealt by tag, against the same firmware on CPython fed by the serial shoe.
    r = pico.conf.configure(GAME, SEATS)
    assert r["ok"], r
    before, frames, after = plan_round(GAME, SEATS, SEED)
    replies = pico.target.commands(before)
    n = len(replies[-1]["order"])
    ctl("rfid", deck=[{"uid": uid_for(c).hex()} for c in shuffled_deck(SEED)[:n]])
    dealt = [json.loads(ln) for ln in b.exec(_POLL % (n + 5)).splitlines() if ln]
    settled = pico.target.commands(after)[-1]
    ref = LocalTarget(durable=False)
    from host_tools.table.auth import KeyStore
    from host_tools.table.configurator import Configurator
    import tempfile
    rc = Configurator(ref, "ref", KeyStore(tempfile.mkdtemp()))
    rc.provision()
    assert rc.configure(GAME, SEATS)["ok"]
    want = ref.round(before, frames, after)[-1]
    out.update(dealt=dealt, cards=n, settled=settled, want=want)

    # The driver against injected faults, one entry per read.
    faults = [
        {"uid": "11223344"},
        {"uid": "04aabbccddeeff", "faults": {"bad_bcc": True}},
        {"uid": "04aabbccddee01", "faults": {"bad_sak_crc": True}},
        {"uid": ["04101112131415", "04101112131499"]},       # two tags at once
        {"uid": "55667788", "faults": {"parity": True}},
        {"uid": "04a1a2a3a4a5a6"},
        {"uid": "04b1b2b3b4b5b6b7b8b9"},                     # 10 bytes: three levels
        {"uid": "99887766", "faults": {"silent": True}},
    ]
    ctl("rfid", deck=faults, replace=True)
    out["faults"] = [json.loads(ln) for ln in b.exec(_DRIVER % (len(faults) + 1)).splitlines()
                     if ln]
    ctl("rfid", present=False)
    try:
        out["absent"] = [json.loads(ln) for ln in b.exec(_DRIVER % 1).splitlines() if ln]
    finally:
        ctl("rfid", present=True)
    return out
