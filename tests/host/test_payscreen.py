"""The dealer's display shows what to pay (issue 30, TableDisplay.result's pay screen, firmware/pitboss/hw/display.py): per
seat the net amount, the banker's hand and low hand at Pai Gow, the dealer's hand and
whether it qualifies at the dealer games; it fits the 128x64 panel (16 columns, 7 seats)
and the SSD1306 driver sends only the pages that changed."""
import tempfile

import pytest

import boards
from host_tools.table.auth import KeyStore
from host_tools.emu.screenshot import text
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import play_rounds
from host_tools.table.targets import LocalTarget
from pitboss.hw import display
from pitboss.hw.ssd1306 import SSD1306


def _round(game, seats, seed=3):
    t = LocalTarget()
    c = Configurator(t, "ps", KeyStore(tempfile.mkdtemp()))
    c.provision()
    assert c.configure(game, seats)["ok"]
    [r] = list(play_rounds(t, game, seats, 1, seed=seed))
    return t, r, text(t.screen())


def test_pai_gow_shows_banker_low_hand_and_amounts():
    t, r, rows = _round("pr-pai-gow", 6)
    b = r["banker"]
    assert rows[0] == "R%d PAI GOW" % r["round"]
    low = "".join(c.split("=")[-1][0] for c in b["low"])
    assert rows[1].startswith("B ") and rows[1].endswith(low)
    for i, s in enumerate(r["seats"]):
        row = rows[2 + i]
        amount = "%+d" % s["amount"] if s["amount"] else "0"
        assert row.split()[0] == str(s["seat"]) and row.split()[1] == amount, row
        word = {"win": "WIN", "push": "PUSH", "lose": "LOSE", "foul": "FOUL"}[s["outcome"]]
        assert row.split()[2] == word
    assert all(len(x) <= 16 for x in rows)


def test_three_card_prime_shows_qualification_and_every_seat():
    t, r, rows = _round("pa-three-card-prime", 7)
    d = r["dealer"]
    assert rows[0].startswith("R%d D " % r["round"])
    assert rows[0].endswith(" QUAL" if d["qualifies"] else " NQ")
    assert len(r["seats"]) == 7  # seven seats and the header: all eight rows, no paging
    for i, s in enumerate(r["seats"]):
        amount = "%+d" % s["amount"] if s["amount"] else "0"
        assert rows[1 + i].split()[:2] == [str(s["seat"]), amount]


def test_caribbean_and_showdown():
    t, r, rows = _round("qc-caribbean", 4)
    assert rows[0].endswith(" QUAL" if r["dealer"]["qualifies"] else " NQ")
    t, r, rows = _round("nj-5card", 3)
    assert rows[0] == "R%d POT" % r["round"]
    assert [x.split()[1] for x in rows[1:4]] == [
        "%+d" % s["amount"] if s["amount"] else "0" for s in r["seats"]]


def test_long_amounts_and_categories_fit_sixteen_columns():
    fb, buf = display.framebuffer()
    d = display.TableDisplay(fb)
    d.result("g", ((0, "six_card_royal_flush", True),
                   ((7, -9999999, "straight_flush"), (1, 123456, "mini_royal"))), 12345)
    rows = text(buf)
    assert rows[0] == "R12345 D 6C QUAL"  # the category cut to fit the row
    assert all(len(x) <= 16 for x in rows)
    d.result("g", ((1, "five_aces", "AA"), ((1, -100000, None),)), 1)
    assert text(buf)[:3] == ["R1 PAI GOW", "B 5 ACES   AA", "1-100000 FOUL"]


def test_the_driver_sends_only_the_pages_that_changed():
    v = boards.load("virtual")
    bus = v.SimI2C()
    panel = SSD1306(bus, 0x3C, 128, 64)
    sent = []
    real = bus.writeto
    # (frame data only: commands are 2-byte writes with control byte 0x80)
    bus.writeto = lambda addr, buf, stop=True: (buf[0] == 0x40 and sent.append(len(buf))) \
        or real(addr, buf, stop)
    d = display.TableDisplay(panel)
    pay = ((0, "one_pair", True), ((1, 30, "flush"), (2, -20, "high_card")))
    d.result("g", pay, 5)
    dev = bus.devices[0x3C]
    assert bytes(dev.ram) == bytes(panel.buf)
    first = sent[-1]
    d.result("g", pay, 5)  # the same screen again: no frame data goes on the bus
    assert sent[-1] == first and len(sent) == 1
    d.result("g", (pay[0], ((1, 30, "flush"), (2, -40, "high_card"))), 5)
    assert sent[-1] == 1 + 128  # one page (the row of seat 2), its control byte first
    assert bytes(dev.ram) == bytes(panel.buf)
    assert text(dev.ram)[2] == "2   -40 HIGH"


def test_an_unplugged_panel_fails_a_redraw_that_changes_nothing_and_gets_all_when_back():
    """The driver sends only changed pages, but every show() still talks to the panel:
    an unplugged display fails the redraw (the controller's display_fault tilt) even when
    the screen did not change; plugged back in (its RAM blank), it gets every page."""
    v = boards.load("virtual")
    bus = v.SimI2C()
    panel = SSD1306(bus, 0x3C, 128, 64)
    d = display.TableDisplay(panel)
    pay = ((0, "one_pair", True), ((1, 30, "flush"), (2, -20, "high_card")))
    d.result("g", pay, 5)
    dev = bus.devices.pop(0x3C)
    with pytest.raises(OSError):
        d.result("g", pay, 5)
    bus.devices[0x3C] = fresh = type(dev)()
    d.result("g", pay, 5)
    assert bytes(fresh.ram) == bytes(panel.buf)
