"""The acknowledged shoe link (docs/shoe-protocol.md, "Acknowledgement"), the table's
clock and the protocol's screen and version replies, on CPython with the firmware's own
App, shoe and journal."""
import json
import os

import pytest

from host_tools.proofs import shoe_link
from host_tools.emu import shoe_sim
from host_tools.table.auth import KeyStore
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round
from host_tools.table.targets import LocalTarget
from pitboss.hw import serialshoe, shoe
from pitboss.rules.cards import name


@pytest.fixture
def table(tmp_path):
    t = LocalTarget(str(tmp_path / "flash"))
    conf = Configurator(t, "t1", KeyStore(str(tmp_path / "keys")))
    conf.provision()
    assert conf.configure("nj-5card", 2)["ok"]
    return t


def test_ack_frame_worked_example_and_decoder():
    # seq 1: CRC-16/CCITT-FALSE of [0x00, 0x01] (the values, as for card frames)
    a = bytes(shoe.encode_ack(1))
    assert a == b"+%04X%04X\n" % (1, shoe.crc16(b"\x00\x01")) and len(a) == shoe.ACK_LEN
    assert bytes(shoe.encode_ack(0xBEEF)) == b"+BEEF%04X\n" % shoe.crc16(b"\xbe\xef")
    noisy = b"xx" + a + b"+00\n" + bytes(shoe.encode_ack(7)) + b"+0002FFFF\n"
    assert shoe_sim.decode_acks(noisy) == [1, 7]  # a torn one and a bad CRC are skipped


def test_a_card_is_acknowledged_only_once_the_app_has_it_and_repeats_are_acknowledged():
    src = serialshoe.ByteSource(shoe.encode(48, 5))
    s = serialshoe.SerialShoe(src)
    assert s.poll() == (48, 5)
    assert src.tx == b""  # not yet: the caller journals it first
    s.ack(5)
    assert shoe_sim.decode_acks(src.tx) == [5]
    src.feed(shoe.encode(48, 5))  # the shoe did not hear it and sends again
    assert s.poll() is None and s.counts[shoe.EV_REPEAT] == 1
    assert shoe_sim.decode_acks(src.tx) == [5, 5]  # acknowledged again, not dealt again
    src.feed(b"!30000" + shoe.encode(12, 6))  # a torn frame, then the next one whole
    assert s.poll() == (12, 6)
    assert shoe_sim.decode_acks(src.tx) == [5, 5]  # the torn one is never acknowledged


def _clocked(src):
    now = [0]
    events = []
    s = serialshoe.SerialShoe(src, alarm=lambda c, q, i: events.append(c), ticks=lambda: now[0])
    return s, now, events


def test_a_torn_frame_is_a_transport_error_repaired_by_the_resend():
    src = serialshoe.ByteSource(shoe.encode(48, 5))
    s, now, events = _clocked(src)
    assert s.poll() == (48, 5)
    s.ack(5)
    src.feed(shoe.encode(12, 6)[:7] + b"\n")  # frame 6 torn (bytes lost mid-frame)
    assert s.poll() is None and events == [shoe.EV_MALFORMED]
    assert not shoe.is_alarm(shoe.EV_MALFORMED) and not shoe.is_alarm(shoe.EV_BAD_CRC)
    now[0] = serialshoe.RESEND_MS - 1
    src.feed(shoe.encode(12, 6))  # the resend, before the timeout
    assert s.poll() == (12, 6)
    now[0] = 5 * serialshoe.RESEND_MS
    assert s.poll() is None and events == [shoe.EV_MALFORMED]  # nothing waits any more


def test_a_torn_frame_not_resent_in_time_is_an_alarm():
    src = serialshoe.ByteSource(shoe.encode(48, 5))
    s, now, events = _clocked(src)
    assert s.poll() == (48, 5)
    s.ack(5)
    now[0] = 60
    assert s.poll() is None  # the line quiet since the ack: what comes now is new
    src.feed(b"!0C0006" + b"\n")
    assert s.poll() is None
    now[0] = 600
    src.feed(b"!0C00\n")  # another torn copy: the shoe is still trying, the wait restarts
    assert s.poll() is None
    now[0] = 600 + serialshoe.RESEND_MS - 1
    assert s.poll() is None and shoe.EV_UNRESENT not in events
    now[0] = 600 + serialshoe.RESEND_MS
    assert s.poll() is None and events[-1] == shoe.EV_UNRESENT
    assert shoe.is_alarm(shoe.EV_UNRESENT)
    assert s.poll() is None and events.count(shoe.EV_UNRESENT) == 1  # reported once


def test_a_torn_copy_received_before_the_ack_needs_no_resend():
    # The shoe resent frame 5 while the controller was journalling it (its ack late), and
    # that copy was torn: it was on the line before the ack went out, so it can only be a
    # copy of frame 5 or earlier, never a new card; no wait, no alarm.
    src = serialshoe.ByteSource(shoe.encode(48, 5))
    s, now, events = _clocked(src)
    assert s.poll() == (48, 5)
    src.feed(shoe.encode(48, 5)[:6])  # arrived during the write, torn by it
    s.ack(5)
    src.feed(b"\n")
    assert s.poll() is None and events == [shoe.EV_MALFORMED]
    now[0] = 10 * serialshoe.RESEND_MS
    assert s.poll() is None and events == [shoe.EV_MALFORMED] and not s.streams


def test_a_torn_copy_still_on_the_wire_when_the_ack_went_out_needs_no_resend():
    # A resend of frame 5 the shoe had started before it heard the ack arrives just after
    # the ack, torn: within the grace (_GRACE bytes, _GRACE_MS) it is a copy, no wait.
    src = serialshoe.ByteSource(shoe.encode(48, 5))
    s, now, events = _clocked(src)
    assert s.poll() == (48, 5)
    s.ack(5)
    now[0] = 5
    src.feed(shoe.encode(48, 5)[:5] + b"\n")
    assert s.poll() is None and events == [shoe.EV_MALFORMED]
    now[0] = 10 * serialshoe.RESEND_MS
    assert s.poll() is None and events == [shoe.EV_MALFORMED] and not s.streams
    src.feed(shoe.encode(12, 6))  # and the next frame is a card, not a sign of streaming
    assert s.poll() == (12, 6) and not s.streams


def test_a_streaming_shoe_gets_the_wait_for_every_torn_frame():
    # A shoe that does not wait for acknowledgements puts new cards among the bytes
    # received before an ack; then a torn frame there may be a card, and it is timed.
    src = serialshoe.ByteSource(shoe.encode(48, 5) + shoe.encode(12, 6) + b"!0D0007\n")
    s, now, events = _clocked(src)
    assert s.poll() == (48, 5)
    s.ack(5)
    assert s.poll() == (12, 6) and s.streams
    s.ack(6)
    assert s.poll() is None and events == [shoe.EV_MALFORMED]
    now[0] = serialshoe.RESEND_MS
    assert s.poll() is None and events[-1] == shoe.EV_UNRESENT


def test_the_app_acknowledges_each_card_after_journalling_it(table):
    hw = table._hw
    before, frames, after = plan_round("nj-5card", 2, 4)
    for r in table.commands(before):
        assert r["ok"]
    uart = hw.shoe_uart()
    uart.tx[:] = b""
    uart.feed(frames)
    replies = table.app.poll()
    seqs = [int(frames[i + 3:i + 7], 16) for i in range(0, len(frames), 12)]
    assert shoe_sim.decode_acks(bytes(uart.tx)) == seqs
    assert [r["card"] for r in replies] == [
        name(int(frames[i + 1:i + 3], 16)) for i in range(0, len(frames), 12)]
    recs = [json.loads(p) for _, _, p in table.app.ctl.journal.last(50, lambda k, p: True)]
    cards = [r for r in recs if r.get("ev") == "card"]
    assert [c["s"] for c in cards] == seqs  # the frame's seq is journalled with its card


def test_a_frame_resent_after_a_power_cut_is_a_repeat_not_a_second_card(table):
    before, frames, after = plan_round("nj-5card", 2, 9)
    table.commands(before)
    first = frames[:12]
    table._hw.shoe_uart().feed(first)
    table.app.poll()
    # Power cut after the journal took the card, before the shoe heard the ack: the shoe
    # sends the same frame to the rebooted controller.
    t2 = LocalTarget(table.root)
    uart = t2._hw.shoe_uart()
    uart.feed(first)
    assert list(t2.app.poll()) == []
    assert t2.app.shoe.counts[shoe.EV_REPEAT] == 1
    assert shoe_sim.decode_acks(bytes(uart.tx)) == [int(first[3:7], 16)]
    uart.feed(frames[12:])
    t2.app.poll()
    r = t2.commands(after)[-1]
    assert r["ok"], r  # settles with every card once: no duplicate_card tilt
    assert t2.commands(["tilt"])[0]["active"] == []


def test_no_card_lost_or_doubled_when_flash_writes_drop_uart_bytes(tmp_path):
    # Worst-case erases (400 ms, interrupts off) on every flash commit: the UART drops
    # bytes, the shoe resends, the controller suppresses repeats. (`python -m
    # host_tools.proofs.shoe_link --cards 10000` is the long run; DEVELOPERS.md has its figures.)
    r = shoe_link.run(cards=400, erase_s=0.4, root=str(tmp_path / "f"))
    assert r["first_failure"] is None, r
    assert r["cards"] >= 400 and r["lost"] == 0 and r["doubled"] == 0
    assert r["bytes_dropped"] > 1000 and r["retransmits"] > 0
    assert r["repeats_suppressed"] > 0 and r["frames_damaged"] > 0


def test_without_acknowledgements_the_same_writes_lose_cards(tmp_path):
    r = shoe_link.run(cards=400, erase_s=0.045, ack=False, root=str(tmp_path / "f"))
    assert r["bytes_dropped"] > 0 and r["lost"] > 0
    assert r["first_failure"] is not None


def test_the_host_sets_the_clock_journalled_and_tilts_carry_it(table):
    c = table.app.ctl
    r = table.commands(["clock"])[0]
    assert r["ok"] and r["set"] is False
    for bad in ("clock soon", "clock 12", "clock 1 2", "clock 9999999999"):
        assert table.commands([bad])[0]["error"]["code"] == "bad_args"
    r = table.commands(["clock 1800000000"])[0]
    assert r["ok"] and r["set"] is True and 1800000000 <= r["time"] < 1800000000 + 5
    recs = [json.loads(p) for _, _, p in c.journal.last(5, lambda k, p: True)]
    clk = [x for x in recs if x.get("ev") == "clock"]
    assert clk and clk[-1]["t"] == 1800000000 and clk[-1]["was"] < 1800000000
    table.commands(["status"])
    c.raise_tilt("shoe_fault", "test")
    [t] = table.commands(["tilt"])[0]["active"]
    assert 1800000000 <= t["time"] < 1800000000 + 5
    c.tilt.clear("op")
    before, frames, after = plan_round("nj-5card", 2, 2)
    assert all(r["ok"] for r in table.commands(before))
    recs = [json.loads(p) for _, _, p in c.journal.last(len(before), lambda k, p: True)]
    assert [x["ev"] for x in recs] == ["wager", "wager", "deal"]
    assert all(1800000000 <= x["t"] < 1800000000 + 5 for x in recs)


def test_the_clock_survives_in_the_journal_and_a_lambda_clock_cannot_be_set(tmp_path):
    from pitboss.controller import Controller
    from pitboss.store.osfs import OsFS

    c = Controller(str(tmp_path), fs=OsFS(durable=False), clock=lambda: 5)
    c.boot()
    assert c.command("clock 1800000000")["error"]["code"] == "no_clock"
    assert c.command("clock")["time"] == 5


def test_screen_streams_the_display_ram_in_chunks(table):
    ram = bytes(table._hw.display_device().ram)
    first = table.commands(["screen"])[0]
    assert first["ok"] and first["chunk"] == 0 and first["width"] == 128
    got = b"".join(bytes.fromhex(table.commands(["screen %d" % i])[0]["hex"])
                   for i in range(first["of"]))
    assert got == ram and first["of"] == len(ram) // 128
    assert table.commands(["screen %d" % first["of"]])[0]["error"]["code"] == "bad_args"
    assert table.commands(["screen x"])[0]["error"]["code"] == "bad_args"


def test_version_says_the_mode(table):
    r = table.commands(["version"])[0]
    assert r["ok"] and r["mode"] in ("service", "production") and r["version"]


def test_shoe_replies_in_the_main_loop_are_marked(table):
    from pitboss import loop as A

    before, frames, after = plan_round("nj-5card", 2, 5)
    out = []
    reader = A.LineReader()
    A.pump(table.app, reader, ("\n".join(before) + "\n").encode(), out.append)
    table._hw.shoe_uart().feed(frames)
    A.pump(table.app, reader, b"status\n", out.append)
    # write() takes each reply as a dict (json_writer streams it to the port): the
    # same dicts the port would carry, through JSON as on the line.
    replies = [json.loads(json.dumps(x)) for x in out]
    shoe_lines = [r for r in replies if r.get("src") == "shoe"]
    assert len(shoe_lines) == len(frames) // 12
    assert all("src" not in r for r in replies if "phase" in r or "order" in r)
    assert os.path.isdir(table.root)
