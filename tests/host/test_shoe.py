"""Shoe frames (docs/shoe-protocol.md): codec, the streaming decoder's error handling,
the shared RNG and the host-side shoe simulator."""
import binascii
import re

import pytest
from hypothesis import given, settings, strategies as st

import boards
from host_tools.emu import shoe_sim
from pitboss.hw import serialshoe, shoe
from pitboss.sim.rng import Rng, XorShift32


class Recorder:
    def __init__(self):
        self.events = []

    def __call__(self, code, seq, info):
        self.events.append((shoe.NAMES[code], seq, info))

    def names(self):
        return [e[0] for e in self.events]


def drain(s):
    out = []
    while True:
        got = s.poll()
        if got is None:
            return out
        out.append(got)


def decode(data):
    rec = Recorder()
    s = serialshoe.simulated(data, rec)
    cards = drain(s)
    s.decoder.flush()
    assert sum(s.counts) == len(rec.events)  # every event counted, and only once
    return cards, rec


# --- the codec ---

def test_crc_is_ccitt_false():
    assert shoe.crc16(b"123456789") == 0x29B1  # the catalogue check value
    assert shoe.crc16(b"\x30\x00\x01") == 0x1918


def test_worked_example_from_the_doc():
    f = shoe.encode(48, 1)  # As, seq 1
    assert f == b"!3000011918\n"
    assert f.hex(" ").upper() == "21 33 30 30 30 30 31 31 39 31 38 0A"
    assert shoe.encode(0, 0) == b"!000000CC9C\n"
    assert shoe.encode(13, 2) == b"!0D0002AE8F\n"
    assert shoe.encode(52, 0xFFFF) == b"!34FFFFC8F6\n"
    assert len(f) == shoe.FRAME_LEN


@given(st.binary(max_size=16))
def test_crc_matches_binascii_crc_hqx(data):
    assert shoe.crc16(data) == binascii.crc_hqx(data, 0xFFFF)


@pytest.mark.parametrize("card, seq, what", [
    (53, 0, "card id 53"), (-1, 0, "card id -1"), ("As", 0, "card id 'As'"),
    (0, 65536, "sequence number 65536"), (0, -1, "sequence number -1")])
def test_encode_rejects_bad_input_by_name(card, seq, what):
    with pytest.raises(ValueError, match=re.escape(what)):
        shoe.encode(card, seq)


def test_round_trip_of_a_whole_shuffled_deck():
    data, cards = shoe_sim.deal(seed=2024, size=53)
    got, rec = decode(data)
    assert got == [(c, i) for i, c in enumerate(cards)]
    assert sorted(cards) == list(range(53))
    assert rec.events == []


def test_lowercase_hex_and_cr_terminators_are_accepted():
    f = shoe.encode(0x2A, 0xBEEF).decode().lower().replace("\n", "\r\n").encode()
    got, rec = decode(b"  \r\n" + f)
    assert got == [(0x2A, 0xBEEF)] and rec.events == []


# --- partial frames and reads ---

def test_frames_split_across_reads_byte_by_byte():
    data, cards = shoe_sim.deal(seed=5, count=6)
    src = serialshoe.ByteSource()
    s = serialshoe.SerialShoe(src, Recorder())
    got = []
    for b in data:
        src.feed(bytes([b]))
        r = s.poll()
        if r is not None:
            got.append(r)
        assert s.poll() is None  # nothing more until the next byte
    assert got == [(c, i) for i, c in enumerate(cards)]


class ChunkyUART:
    """A UART whose any() says 1 while more is waiting (machine.UART may do that) and
    that counts what it was asked for."""

    def __init__(self, data):
        self.data = bytearray(data)
        self.asked = []

    def any(self):
        return 1 if self.data else 0

    def readinto(self, buf, n):
        self.asked.append(n)
        n = min(n, len(self.data), len(buf))
        buf[:n] = self.data[:n]
        del self.data[:n]
        return n


def test_never_asks_for_more_than_any_promised():
    data, cards = shoe_sim.deal(seed=9, count=3)
    u = ChunkyUART(data)
    s = serialshoe.SerialShoe(u)
    assert drain(s) == [(c, i) for i, c in enumerate(cards)]
    assert set(u.asked) == {1}


def test_burst_in_one_read_is_dealt_one_card_per_poll():
    data, cards = shoe_sim.deal(seed=1, count=8)
    s = serialshoe.simulated(data)  # reads into a 64-byte buffer
    assert s.poll() == (cards[0], 0)
    assert s.uart.any() == len(data) - 64  # one read; the rest waits in the "UART"
    assert drain(s) == [(c, i) for i, c in enumerate(cards)][1:]


def test_reads_the_virtual_boards_uart():
    v = boards.load("virtual")
    u = v.BufferUART()
    data, cards = shoe_sim.deal(seed=3, count=10)
    u.feed(data)
    assert drain(serialshoe.SerialShoe(u)) == [(c, i) for i, c in enumerate(cards)]


# --- dropped, repeated, corrupted ---

def test_dropped_frames_are_reported_and_the_next_card_dealt():
    data, cards = shoe_sim.deal(seed=11, count=8, faults=[(2, "drop"), (5, "drop"),
                                                           (6, "drop")])
    got, rec = decode(data)
    assert got == [(cards[i], i) for i in (0, 1, 3, 4, 7)]
    assert rec.events == [("dropped", 3, 1), ("dropped", 7, 2)]
    assert all(shoe.is_alarm(shoe.EV_DROPPED) for _ in rec.events)


def test_repeated_frame_is_ignored_and_reported():
    data, cards = shoe_sim.deal(seed=11, count=4, faults=[(1, "repeat")])
    got, rec = decode(data)
    assert got == [(c, i) for i, c in enumerate(cards)]
    assert rec.events == [("repeat", 1, cards[1])]
    assert not shoe.is_alarm(shoe.EV_REPEAT)


def test_same_sequence_with_another_card_is_a_conflict():
    got, rec = decode(shoe.encode(1, 7) + shoe.encode(2, 7) + shoe.encode(3, 8))
    assert got == [(1, 7), (3, 8)]
    assert rec.events == [("conflict", 7, 2)]


def test_corrupted_frames_are_dropped_and_the_gap_reported():
    data, cards = shoe_sim.deal(seed=4, count=5, faults=[(2, "corrupt")])
    got, rec = decode(data)
    assert got == [(cards[i], i) for i in (0, 1, 3, 4)]
    assert rec.names() == ["bad_crc", "dropped"]
    assert rec.events[1] == ("dropped", 3, 1)


def test_bad_card_id_with_a_good_crc():
    data, cards = shoe_sim.deal(seed=4, count=3, faults=[(1, "bad_card")])
    got, rec = decode(data)
    assert got == [(cards[0], 0), (cards[2], 2)]
    assert rec.events == [("bad_card", 1, 0x3F)]  # its sequence number still counts


@pytest.mark.parametrize("junk, detail", [
    (b"!3000\n", "ended after 4"), (b"!30000119180\n", "longer than 10"),
    (b"!30000G1918\n", "byte 0x47"), (b"!3000", "cut after 4")])
def test_malformed_frames(junk, detail):
    got, rec = decode(shoe.encode(5, 0) + junk + shoe.encode(6, 1))
    assert got == [(5, 0), (6, 1)]
    assert rec.names() == ["malformed"] and detail in rec.events[0][2]


def test_resynchronises_after_garbage():
    noise = b"\x00\xff\x13hello!!x\xfe!12"
    data = noise + shoe.encode(9, 0) + b"\xaa\xbb" + shoe.encode(10, 1) + b"zz"
    got, rec = decode(data)
    assert got == [(9, 0), (10, 1)]
    assert rec.names() == ["garbage", "malformed", "malformed", "malformed", "garbage",
                           "garbage"]


def test_long_garbage_is_reported_in_chunks():
    got, rec = decode(b"x" * 150 + shoe.encode(1, 0))
    assert got == [(1, 0)]
    assert rec.events == [("garbage", -1, 64), ("garbage", -1, 64), ("garbage", -1, 22)]


def test_sequence_wraps_without_events():
    data, cards = shoe_sim.deal(seed=8, count=4, start_seq=0xFFFE)
    got, rec = decode(data)
    assert [s for _, s in got] == [0xFFFE, 0xFFFF, 0, 1] and rec.events == []


def test_stale_frames_are_ignored_and_a_restart_at_zero_accepted():
    data = shoe.encode(1, 10) + shoe.encode(2, 11) + shoe.encode(3, 4) + shoe.encode(4, 0)
    got, rec = decode(data)
    assert got == [(1, 10), (2, 11), (4, 0)]
    assert rec.events == [("stale", 4, 3), ("restart", 0, 11)]
    assert not shoe.is_alarm(shoe.EV_RESTART) and shoe.is_alarm(shoe.EV_STALE)


def test_a_card_dealt_twice_is_an_alarm_until_reset():
    rec = Recorder()
    s = serialshoe.simulated(shoe.encode(7, 0) + shoe.encode(7, 1), rec)
    assert drain(s) == [(7, 0)]
    assert rec.events == [("duplicate", 1, 7)]
    s.reset()  # new shuffle: card 7 may come again; the frame sequence runs on
    s.uart.feed(shoe.encode(7, 2))
    assert drain(s) == [(7, 2)]
    assert rec.events == [("duplicate", 1, 7)]  # seq 2 follows seq 1: in order
    assert s.counts[shoe.EV_DUPLICATE] == 1


def test_an_alarm_that_raises_loses_no_card():
    def boom(code, seq, info):
        raise RuntimeError(shoe.describe(code, seq, info))

    s = serialshoe.simulated(shoe.encode(1, 0) + shoe.encode(2, 5) + shoe.encode(3, 6), boom)
    assert s.poll() == (1, 0)
    with pytest.raises(RuntimeError, match="dropped: 4 frame"):
        s.poll()
    assert s.poll() == (2, 5)  # the card that revealed the gap was kept
    assert s.poll() == (3, 6)


def test_describe_reads_well():
    assert shoe.describe(shoe.EV_DROPPED, 17, 2) == "dropped: 2 frame(s) missing before seq 17"
    assert shoe.describe(shoe.EV_GARBAGE, -1, 5) == "garbage: 5 byte(s) skipped"
    assert shoe.describe(shoe.EV_BAD_CARD, 3, 60) == "bad_card: seq 3, 60"
    assert shoe.describe(shoe.EV_UNKNOWN_TAG, -1, "tag 04AB") == "unknown_tag: tag 04AB"


# --- fuzzing ---

_FRAME = re.compile(rb"!([0-9A-Fa-f]{10})[\r\n]")


def _intact_frames(data):
    """(card, seq) of every well-formed frame with a good CRC in data (a reference
    parser: '!' never occurs inside a frame, so frames cannot overlap)."""
    out = set()
    for m in _FRAME.finditer(data):
        v = bytes.fromhex(m.group(1).decode())
        card, seq, crc = v[0], v[1] << 8 | v[2], v[3] << 8 | v[4]
        if shoe.crc16(v[:3]) == crc and card <= 52:
            out.add((card, seq))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=40),
                          st.sampled_from([b"!", b"\n", b"!3000011918", b"0123456789ABCDEF"]),
                          st.builds(shoe.encode, st.integers(0, 52), st.integers(0, 0xFFFF))),
                max_size=30))
def test_fuzz_never_raises_and_never_deals_a_card_from_a_bad_frame(parts):
    data = b"".join(parts)
    got, rec = decode(data)
    assert set(got) <= _intact_frames(data)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=20), min_size=1, max_size=20), st.integers(0, 0xFFFF))
def test_fuzz_every_intact_frame_after_any_noise_is_dealt(chunks, seq0):
    # Whatever precedes it, a frame's '!' restarts the parser: each intact frame counts.
    # A random chunk of noise forming a valid frame by chance is negligible (CRC + shape).
    data, want = bytearray(), []
    for i, noise in enumerate(chunks):
        card, seq = i, (seq0 + i) & 0xFFFF
        data += noise
        want.append((card, seq))
        data += shoe.encode(card, seq)
    got, rec = decode(bytes(data))
    assert got == want
    assert set(rec.names()) <= {"garbage", "malformed"}


class _NeverSeen:
    """A shoe's record of the cards dealt that never holds one."""

    def __getitem__(self, card):
        return 0

    def __setitem__(self, card, v):
        pass


def _push_only(data):
    """What FrameDecoder.push() alone makes of data, a byte at a time: the reference for
    SerialShoe.poll(), which reads the UART in chunks."""
    rec = Recorder()
    dec = shoe.FrameDecoder(rec)
    cards = []
    for b in data:
        if dec.push(b):
            cards.append(dec.take())
    dec.flush()
    return cards, rec.events


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=12),
                          st.sampled_from([b"!", b"\n", b"\r", b"!30", b"0123456789abcdef",
                                           b"!3000011918", b"!300001191\n", b"!3000011G18\n"]),
                          st.builds(shoe.encode, st.integers(0, 60), st.integers(0, 40),
                                    st.just(False))),
                max_size=30),
       st.lists(st.integers(1, 16), min_size=1, max_size=8))
def test_reads_of_any_size_decode_as_byte_by_byte(parts, sizes):
    # The same bytes arriving in reads of any size: every card and every event as push()
    # gives them one byte at a time, in the same order (the shoe's own duplicate check
    # and acknowledgements aside: a ByteSource with no line back, a fresh card each).
    data = b"".join(parts)
    want_cards, want_events = _push_only(data)
    rec = Recorder()
    src = serialshoe.ByteSource()
    s = serialshoe.SerialShoe(src, rec)
    s._write = None  # (no acknowledgements: push() alone sends none)
    s._seen = _NeverSeen()  # (every card fresh: the duplicate check left out)
    got, at, i = [], 0, 0
    while at < len(data):
        n = sizes[i % len(sizes)]
        i += 1
        src.feed(data[at:at + n])
        at += n
        got += drain(s)
    s.decoder.flush()
    assert got == want_cards
    assert [e for e in rec.events if e[0] != "duplicate"] == want_events


class TimedUART:
    """Bytes that come at given microseconds of a clock that moves 10 us at each look
    (a shoe's line as poll() sees it while it waits)."""

    def __init__(self, timed):
        self.timed = list(timed)  # [(us, byte)], in order
        self.now = 0

    def us(self):
        self.now += 10
        return self.now

    def any(self):
        return sum(1 for t, _ in self.timed if t <= self.now)

    def readinto(self, buf, n):
        k = min(n, self.any(), len(buf))
        for i in range(k):
            buf[i] = self.timed.pop(0)[1]
        return k


def test_a_frames_last_bytes_are_waited_for_not_left_to_wake_the_loop():
    # A PL011 raises no interrupt for a byte alone in its FIFO until 32 bit periods later
    # (3.3 ms at 9600 baud): poll() waits for a frame's last two bytes itself, about as long
    # as they take on the line, and deals the card in the same call.
    frame = shoe.encode(17, 5)
    u = TimedUART([(0, b) for b in frame[:10]] + [(900, frame[10]), (1900, frame[11])])
    s = serialshoe.SerialShoe(u, ticks=lambda: 0, ticks_us=u.us)
    assert s.rest_ms() == 0
    assert s.poll() == (17, 5)
    assert 1900 <= u.now < 2000  # waited for the LF, no longer
    # rest_ms: a pass may sleep until only those two are left (rounded down).
    u = TimedUART([(0, frame[0])])
    s = serialshoe.SerialShoe(u, ticks=lambda: 0, ticks_us=u.us)
    assert s.poll() is None
    assert s.rest_ms() == (11 - 2) * 1041 // 1000


def test_a_torn_frame_is_waited_for_no_longer_than_its_bytes_take():
    frame = shoe.encode(17, 5)
    u = TimedUART([(0, b) for b in frame[:11]])  # the LF never comes
    s = serialshoe.SerialShoe(u, ticks=lambda: 0, ticks_us=u.us)
    assert s.poll() is None
    assert u.now <= 3 * 1041 // 2 + 20  # one byte's time and a half
    # ... once: a shoe that stopped mid-frame costs no wait at every pass after it
    was = u.now
    assert s.poll() is None and u.now == was
    u.timed.append((u.now + 100, frame[0]))  # a byte comes (a new frame): waits again
    u.now += 200
    assert s.poll() is None and not s._waited
    # Without a clock to wait by (CPython, a board's simulated time) nothing is waited.
    u = TimedUART([(0, b) for b in frame[:11]] + [(500, frame[11])])
    s = serialshoe.SerialShoe(u, ticks=lambda: 0)
    assert s.poll() is None and u.now == 0
    assert s.rest_ms() == 0


# --- rng and simulator ---

def test_rng_known_answers():
    r = XorShift32(1)
    assert [r.next32() for _ in range(3)] == [270369, 67634689, 2647435461]
    assert Rng(1).shuffle(list(range(10))) == Rng(1).shuffle(list(range(10)))
    assert Rng(0).state == 0x9E3779B9 and Rng(2**32).state == 0x9E3779B9
    r = Rng(42)
    assert all(0 <= r.randbelow(7) < 7 for _ in range(200))


def test_rng_agrees_with_the_table_simulator():
    from pitboss.sim import rounds as sim
    for seed in (0, 1, 99, 2**31 + 5):
        assert Rng(seed).shuffle(list(range(52))) == sim.shuffled(52, XorShift32(seed))


@pytest.mark.parametrize("bad", [0, -3, 1.5])
def test_rng_rejects_bad_bounds(bad):
    with pytest.raises(ValueError, match="positive int"):
        Rng(1).randbelow(bad)
    with pytest.raises(TypeError, match="seed"):
        Rng("seed")


def test_shoe_sim_cli(tmp_path, capsysbinary):
    assert shoe_sim.main(["--seed", "7", "--cards", "3"]) == 0
    frames = capsysbinary.readouterr().out
    assert frames == shoe_sim.deal(7, count=3)[0] and frames.count(b"\n") == 3
    assert shoe_sim.main(["--seed", "7", "--cards", "3", "--list"]) == 0
    names = capsysbinary.readouterr().out.decode().split()
    assert len(names) == 3 and all(len(n) == 2 for n in names)
    out = tmp_path / "deal.txt"
    assert shoe_sim.main(["--seed", "7", "--fault", "1:drop", "-o", str(out)]) == 0
    assert out.read_bytes().count(b"!") == 51
    assert shoe_sim.main(["--seed", "7", "--start-seq", "70000"]) == 2
    assert b"70000" in capsysbinary.readouterr().err
    with pytest.raises(ValueError, match="unknown fault 'melt'"):
        shoe_sim.frames([1], faults=[(0, "melt")])


def test_acknowledgements_are_right_whichever_was_made_ahead():
    # ack() makes the next frame's acknowledgement ahead, after writing its own: any seq
    # still gets its own bytes (a repeat's, an older one's, across the wrap at 0xFFFF).
    src = serialshoe.ByteSource()
    s = serialshoe.SerialShoe(src)
    seqs = [5, 6, 7, 3, 3, 4, 0xFFFF, 0, 1, 0x1FFFF, 9]
    for q in seqs:
        s.ack(q)
    assert bytes(src.tx) == b"".join(bytes(shoe.encode_ack(q & 0xFFFF)) for q in seqs)
