"""The RFID shoe end to end on CPython: the MFRC522 driver against the simulated chip
(tests/support/fake_mfrc522.py), an authenticated deck registration stored on flash, cards dealt
by tag, and the alarms: an unknown tag and a card seen twice in one deck halt the table."""
import types

import pytest

import boards.virtual as virtual
from tests.support import fake_mfrc522 as F
from host_tools.table.auth import KeyStore
from host_tools.table.configurator import Configurator
from pitboss import app as app_mod
from pitboss.store.deckmap import new_deck_order


def uid_for(card, deck=1):
    return bytes([0x04, deck, card, 0xA0, 0xB1, 0xC2, 0xD3])  # 7-byte UIDs


class RFIDBoard:
    """The virtual board's peripherals plus a reader on a simulated SPI bus."""

    def __init__(self):
        self.chip, spi, cs, rst = F.reader([])
        self._rfid = (spi, cs, rst)
        virtual.reset()
        self.mod = types.SimpleNamespace(
            NAME="rfid-test", PERIPHERALS=("shoe", "rfid", "display"),
            DISPLAY_WIDTH=128, DISPLAY_HEIGHT=64, shoe_uart=virtual.shoe_uart,
            display_i2c=virtual.display_i2c, DISPLAY_ADDR=virtual.DISPLAY_ADDR,
            rfid=lambda: self._rfid)

    def present(self, uid):
        self.chip.tags = [F.Tag(uid)]


class Target:
    def __init__(self, board, root):
        self.board, self.root = board, root
        self.app = app_mod.App(board.mod, root=root, check_firmware=False)
        # a service-mode table (production refuses the default placeholder paytables
        # of Three Card Prime, issue 30; tests/host/test_paytables_posted.py checks that)
        self.app.ctl.production = False

    def commands(self, lines):
        return [self.app.ctl.command(ln) for ln in lines]

    def provision(self, key):
        from pitboss.store import auth
        auth.provision(key, self.root + "/auth")
        self.app.ctl.auth.load()

    def read(self, uid):
        self.board.present(uid)
        return list(self.app.poll())


@pytest.fixture
def table(tmp_path):
    t = Target(RFIDBoard(), str(tmp_path))
    conf = Configurator(t, "rf", KeyStore(str(tmp_path / "keys")))
    conf.provision()
    return t, conf


def register(t, conf):
    assert conf.signed("deck-register")["registering"]
    for card in new_deck_order(52):
        [r] = t.read(uid_for(card))
        assert r["ok"], r
    assert r["deck"] == 1


def test_deck_registration_needs_auth_and_is_stored(table):
    t, conf = table
    assert t.commands(["deck"])[0]["shoe"] == "serial"
    # sent bare, an authenticated verb is refused as one (issue 28's one verb table)
    assert t.commands(["deck-register"])[0]["error"]["code"] == "auth_required"
    assert conf.signed("deck-register")["next"] == "2s"
    [r] = t.read(uid_for(0))
    assert r["registered"] == "2s"
    [dup] = t.read(uid_for(0))  # the same tag again: refused, nothing changes
    assert dup["error"]["code"] == "duplicate_uid"
    assert t.commands(["deck"])[0]["read"] == 1
    for card in new_deck_order(52)[1:]:
        [r] = t.read(uid_for(card))
        assert r["ok"]
    assert r["deck"] == 1 and t.commands(["deck"])[0]["shoe"] == "rfid"
    # A power cycle: the map comes back from flash and the RFID shoe with it.
    t2 = Target(t.board, t.root)
    assert t2.commands(["deck"])[0] == {"registering": False, "decks": 1, "shoe": "rfid",
                                        "ok": True}


def test_cards_dealt_by_tag_and_alarms(table):
    t, conf = table
    register(t, conf)
    assert conf.configure("pa-three-card-prime", 1)["ok"]
    assert all(r["ok"] for r in t.commands(["wager 1 ante=10", "deal"]))
    [r] = t.read(uid_for(48))  # As
    assert r["ok"] and r["card"] == "As" and r["to"] == 1
    assert t.read(bytes.fromhex("04FFFFFFFFFFFF")) == []  # unknown tag: no card...
    st = t.commands(["status"])[0]
    assert [a["code"] for a in st["tilts"]] == ["unknown_rfid_tag"]  # ...a tilt
    assert st["hands"]["1"] == ["As"]
    # A card went by unread: clearing the tilt voids the round (issue 12), wagers back.
    r = conf.signed("tilt-clear dealer1")
    assert r["ok"] and r["voided"]["seats"] == [{"seat": 1, "wagers": {"ante": 10},
                                                 "amount": 0}]
    assert all(r["ok"] for r in t.commands(["wager 1 ante=10", "deal"]))
    t.read(uid_for(5))  # 3h
    t.read(uid_for(48))  # As, first time in this shuffle
    assert t.read(uid_for(5)) == []  # 3h again in the same deck
    assert [a["code"] for a in t.commands(["status"])[0]["tilts"]] == ["duplicate_card"]


def test_registration_refused_during_a_round(table):
    t, conf = table
    assert conf.configure("nj-3card", 2)["ok"]
    t.commands(["wager 1 ante=5", "deal"])
    r = conf.signed("deck-register")
    assert r["error"]["code"] == "wrong_phase"


def test_a_registration_keeps_the_loop_asking_the_reader(table):
    """While a deck is registered the main loop keeps its short pass (App.idle None): a
    tag in the field wakes no poll, and the serial shoe's own wait (up to 500 ms a pass)
    held each tag that long. Before and after, the shoe's wait."""
    t, conf = table
    t.app.ctl.idle = lambda: False  # (no idle work left: only the wait is asked)
    assert t.app.idle() == t.app.shoe.wait_ms() != None  # noqa: E711
    assert conf.signed("deck-register")["registering"]
    assert t.app.idle() is None
    for card in new_deck_order(52):
        [r] = t.read(uid_for(card))
        assert r["ok"], r
    assert r["deck"] == 1
    assert t.app.idle() == t.app.shoe.wait_ms()
