"""Deck registration, the UID map on flash, and the RFID shoe built on it."""
import re

import pytest

from tests.support import fake_mfrc522 as F
from pitboss.store import deckmap
from pitboss.hw import rfidshoe, shoe
from pitboss.rules.cards import parse
from pitboss.store.deckmap import DeckError, DeckMap, Registration
from pitboss.hw.mfrc522 import MFRC522, RFIDError


def uids(deck, n=52, size=7):
    """Distinct fake UIDs; deck number in the first byte so decks never share one."""
    return [bytes([0x04, deck]) + i.to_bytes(size - 2, "big") for i in range(n)]


def registered(decks=1, size=52):
    dm = DeckMap()
    for d in range(1, decks + 1):
        assert deckmap.register(dm, uids(d, size), size=size) == d
    return dm


def test_new_deck_order_is_suit_by_suit():
    order = deckmap.new_deck_order()
    assert [order[i] for i in (0, 12, 13, 51)] == [parse(t) for t in ("2s", "As", "2h", "Ac")]
    assert sorted(order) == list(range(52))
    assert deckmap.new_deck_order(53)[-1] == 52
    with pytest.raises(DeckError, match="52 or 53 cards, not 54"):
        deckmap.new_deck_order(54)


def test_registration_maps_each_tag_to_its_card():
    dm = registered(decks=2, size=53)
    order = deckmap.new_deck_order(53)
    for d in (1, 2):
        for i, u in enumerate(uids(d, 53)):
            assert dm.lookup(u) == (order[i], d)
    assert dm.lookup(bytearray(uids(2, 53)[0])) == (order[0], 2)
    assert len(dm) == 2


def test_registration_in_a_given_order():
    order = "As Ks Qs Js Ts 9s 8s 7s 6s 5s 4s 3s 2s".split() + [
        r + s for s in "hdc" for r in "23456789TJQKA"]
    dm = DeckMap()
    deckmap.register(dm, uids(1), order=order)
    assert dm.lookup(uids(1)[0]) == (parse("As"), 1)
    with pytest.raises(DeckError, match="card As appears twice"):
        Registration(dm, order=["As", "As"])
    with pytest.raises(DeckError, match="lacks 51 card"):
        Registration(dm, order=["As"])


def test_unknown_uid_is_an_error_naming_it():
    dm = registered()
    with pytest.raises(DeckError, match="unknown RFID tag 04FF0000000007") as e:
        dm.lookup(bytes.fromhex("04FF0000000007"))
    assert e.value.code == "unknown_uid"


def test_a_tag_read_twice_is_refused_and_nothing_is_lost():
    dm = DeckMap()
    reg = Registration(dm)
    u = uids(1)
    assert reg.add(u[0]) == parse("2s") and reg.add(u[1]) == parse("3s")
    with pytest.raises(DeckError, match="tag 04010000000000 was already read as 2s; present 4s"):
        reg.add(u[0])
    assert reg.expected() == parse("4s")  # still waiting for the right card
    for x in u[2:]:
        reg.add(x)
    assert reg.done() and reg.commit() == 1


def test_a_tag_of_another_deck_cannot_be_registered_again():
    dm = registered()
    reg = Registration(dm)
    with pytest.raises(DeckError, match="tag 0401000000000E is already 3h of deck 1"):
        reg.add(uids(1)[14])  # registered as the 15th card of deck 1: 3h
    assert reg.expected() == parse("2s")
    with pytest.raises(DeckError, match="tag 04010000000000 is both 2s and 2s of deck 1") as e:
        dm.add_deck([(c, uids(1)[0]) for c in deckmap.new_deck_order()])
    assert e.value.code == "duplicate_uid" and len(dm) == 1


def test_undo_and_incomplete_commit():
    dm = DeckMap()
    reg = Registration(dm)
    reg.add(uids(1)[0])
    reg.add(uids(1)[1])
    assert reg.undo() == parse("3s") and reg.expected() == parse("3s")
    with pytest.raises(DeckError, match="incomplete: 1 of 52 cards read, next 3s") as e:
        reg.commit()
    assert e.value.code == "incomplete" and len(dm) == 0
    with pytest.raises(DeckError, match="5 bytes, not 4, 7 or 10"):
        reg.add(b"\x01\x02\x03\x04\x05")


def test_remove_deck_renumbers():
    dm = registered(decks=3)
    dm.remove_deck(1)
    assert len(dm) == 2 and dm.lookup(uids(3)[0]) == (0, 2)
    with pytest.raises(DeckError, match="unknown RFID tag"):
        dm.lookup(uids(1)[0])
    with pytest.raises(DeckError, match="no deck 7"):
        dm.deck(7)


# --- the file ---

def test_save_and_load_round_trip(tmp_path):
    dm = registered(decks=2)
    path = str(tmp_path / "deckmap.txt")
    dm.save(path)
    dm.save(path)  # over an existing file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deckmap.txt"]  # no .tmp left
    text = (tmp_path / "deckmap.txt").read_text()
    lines = text.splitlines()
    assert lines[0] == "pitboss-deckmap 1" and lines[1] == "deck 1 52"
    assert lines[2] == "2s 04010000000000" and lines[-1].startswith("crc32 ")
    back = DeckMap.load(path)
    assert back.dumps() == dm.dumps()
    assert back.lookup(uids(2)[51]) == (dm.lookup(uids(2)[51]))


def test_load_missing_is_empty_and_an_interrupted_save_is_recovered(tmp_path):
    path = str(tmp_path / "deckmap.txt")
    assert len(DeckMap.load(path)) == 0
    (tmp_path / "deckmap.txt.tmp").write_bytes(registered().dumps())
    assert len(DeckMap.load(path)) == 1


def test_save_where_rename_cannot_replace(tmp_path, monkeypatch):
    # FAT's rename fails onto an existing file: save removes the old one first.
    import os as real_os

    class FatOS:
        sync = None

        def __getattr__(self, name):
            return getattr(real_os, name)

        def rename(self, a, b):
            if real_os.path.exists(b):
                raise OSError(17, "EEXIST")
            real_os.rename(a, b)

    monkeypatch.setattr(deckmap, "os", FatOS())
    path = str(tmp_path / "deckmap.txt")
    registered(decks=1).save(path)
    registered(decks=2).save(path)
    assert len(DeckMap.load(path)) == 2
    assert not (tmp_path / "deckmap.txt.tmp").exists()


def _flip(data, i):
    b = bytearray(data)
    b[i] ^= 0x01
    return bytes(b)


def test_corrupted_files_are_refused_by_line_or_checksum(tmp_path):
    good = registered().dumps()
    with pytest.raises(DeckError, match="checksum .* does not match") as e:
        DeckMap.loads(_flip(good, 40), "deckmap.txt")
    assert e.value.code == "bad_file"
    with pytest.raises(DeckError, match="no crc32 line"):
        DeckMap.loads(good[:500])
    with pytest.raises(DeckError, match="malformed crc32 line"):
        DeckMap.loads(good[:-1] + b"0\n")

    def resealed(body):
        return body + b"crc32 %08X\n" % deckmap.crc32(body)

    body = good[:good.rfind(b"crc32 ")]
    with pytest.raises(DeckError, match="line 1: expected 'pitboss-deckmap 1'"):
        DeckMap.loads(resealed(body.replace(b"deckmap 1", b"deckmap 9")))
    with pytest.raises(DeckError, match="line 3: expected '<card> <uid hex>', got '2s 04XX"):
        DeckMap.loads(resealed(body.replace(b"2s 0401", b"2s 04XX")))
    with pytest.raises(DeckError, match="card 2s appears twice"):
        DeckMap.loads(resealed(body.replace(b"3s ", b"2s ")))
    with pytest.raises(DeckError, match=re.escape("line 2: expected 'deck 1 52|53'")):
        DeckMap.loads(resealed(body.replace(b"deck 1 52", b"deck 2 52")))
    with pytest.raises(DeckError, match="line 55: expected 'deck 2 52.53', got 'extra'"):
        DeckMap.loads(resealed(body + b"extra\n"))
    with pytest.raises(DeckError, match="line 55: unexpected ''"):
        DeckMap.loads(resealed(body + b"\nextra\n"))
    (tmp_path / "d.txt").write_bytes(_flip(good, 100))
    with pytest.raises(DeckError, match="d.txt: checksum"):
        DeckMap.load(str(tmp_path / "d.txt"))


# --- the RFID shoe ---

class ScriptedReader:
    """read_uid() answers from a script: bytes, None, or an exception to raise."""

    def __init__(self, script):
        self.script = list(script)

    def read_uid(self):
        x = self.script.pop(0) if self.script else None
        if isinstance(x, BaseException):
            raise x
        return x


def rfid_shoe(script, decks=2):
    events = []
    s = rfidshoe.RFIDShoe(ScriptedReader(script), registered(decks),
                      lambda c, q, i: events.append((shoe.NAMES[c], i)))
    return s, events


def deal_all(s, n):
    return [s.poll() for _ in range(n)]


def test_rfid_shoe_deals_cards_with_its_own_sequence():
    u = uids(1)
    s, events = rfid_shoe([u[12], None, u[0], u[51]])
    assert deal_all(s, 5) == [(parse("As"), 0), None, (parse("2s"), 1), (parse("Ac"), 2), None]
    assert events == []


def test_rfid_unknown_tag_duplicate_and_repeat():
    u = uids(1)
    stray = bytes.fromhex("04FFFFFFFFFF01")
    s, events = rfid_shoe([u[0], u[0], stray, u[1], u[0]])
    assert deal_all(s, 5) == [(0, 0), None, None, (parse("3s"), 1), None]
    assert events == [
        ("repeat", "04010000000000"),
        ("unknown_tag", "unknown RFID tag 04FFFFFFFFFF01 (in no registered deck)"),
        ("duplicate", "04010000000000 (2s) seen twice in this deck")]
    s.reset()
    s.reader.script = [u[0]]
    assert s.poll() == (0, 2)  # a new shuffle: 2s may come again; seq keeps counting


def test_rfid_tag_from_another_deck():
    s, events = rfid_shoe([uids(1)[0], uids(2)[1]])
    assert deal_all(s, 2) == [(0, 0), None]
    assert events == [("wrong_deck", "04020000000001 is deck 2, dealing deck 1")]


def test_rfid_reader_errors_become_events():
    s, events = rfid_shoe([RFIDError("collision", "x"), RFIDError("crc", "bad crc"),
                           RFIDError("timeout", "stuck"), OSError(5, "EIO"), uids(1)[3]])
    assert deal_all(s, 5) == [None, None, None, None, (parse("5s"), 0)]
    assert [e[0] for e in events] == ["collision", "read_error", "reader_fault",
                                      "reader_fault"]
    assert events[1][1] == "bad crc"


def test_rfid_shoe_end_to_end_through_the_driver():
    dm = DeckMap()
    tags = [F.Tag(u) for u in uids(1, size=4)] + [F.Tag(u) for u in uids(2, size=7)][:2]
    chip, spi, cs, rst = F.reader([])
    reader = MFRC522(spi, cs, rst, sleep_ms=lambda ms: None)
    reg = Registration(dm)
    for t in tags[:52]:  # the operator feeds a new deck through the reader
        chip.tags = [t]
        reg.add(reader.read_uid())
    reg.commit()
    events = []
    s = rfidshoe.RFIDShoe(reader, dm, lambda c, q, i: events.append(shoe.NAMES[c]))
    dealt = []
    for i in (12, 25, 25, 52, 38):
        chip.tags = [tags[i]]
        tags[i].state = F.IDLE  # it left the field and came back
        dealt.append(s.poll())
    chip.tags = [tags[0], tags[1]]  # two cards at once (both halted at registration)
    for t in chip.tags:
        t.state = F.IDLE
    dealt.append(s.poll())
    assert dealt == [(parse("As"), 0), (parse("Ah"), 1), None, None, (parse("Ad"), 2), None]
    assert events == ["repeat", "unknown_tag", "collision"]


def test_non_text_file_with_a_matching_crc():
    body = b"pitboss-deckmap 1\n\xff\xfe\n"
    with pytest.raises(DeckError, match="not text"):
        DeckMap.loads(body + b"crc32 %08X\n" % deckmap.crc32(body))


def test_rfid_shoe_does_not_file_a_bug_as_an_unknown_tag():
    class Broken:
        def lookup(self, uid):
            raise ValueError("bug")

    s = rfidshoe.RFIDShoe(ScriptedReader([b"\x01\x02\x03\x04"]), Broken())
    with pytest.raises(ValueError, match="bug"):
        s.poll()
