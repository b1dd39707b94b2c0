"""Simulated shoe: a deterministic shuffle dealt as pitboss shoe frames.

The shuffle is pitboss.sim.rng (xorshift32 + Fisher-Yates in plain ints), the same module
the firmware's round simulator uses, so a seed names the same deck on the host, in the
MicroPython VM and on a board. Frames come from pitboss.hw.shoe.encode, and the firmware
reads them with the same parser as a real shoe (pitboss.hw.serialshoe.simulated / SerialShoe).

    python -m host_tools.emu.shoe_sim --seed 7                  frames of a whole deck, stdout
    python -m host_tools.emu.shoe_sim --seed 7 --cards 10 --list    the cards, one per line
    python -m host_tools.emu.shoe_sim --seed 7 --fault 3:drop --fault 5:corrupt -o deal.txt

Faults (for tests and bench work), at a frame index: drop (never sent, its sequence
number is used up), repeat (sent twice), corrupt (a card digit changed: bad CRC),
garbage (noise before the frame), bad_card (card id 0x3F, CRC intact).
"""
import argparse
import sys

from pitboss.hw import shoe as shoeframe
from pitboss.rules.cards import name
from pitboss.sim.rng import Rng

FAULTS = ("drop", "repeat", "corrupt", "garbage", "bad_card")
NOISE = b"\x00\xff~~line noise~~\x7f"


def shuffled_deck(seed, size=52):
    """The deck in dealing order for a seed (card ids)."""
    if size not in (52, 53):
        raise ValueError(f"a deck has 52 or 53 cards, not {size!r}")
    return Rng(seed).shuffle(list(range(size)))


def frames(cards, start_seq=0, faults=()):
    """Shoe bytes for these cards; faults is [(index, kind)]. Sequence numbers count every
    card, including dropped ones, and wrap at 65536 as a shoe's do."""
    by_index = {}
    for index, kind in faults:
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r} (known: {', '.join(FAULTS)})")
        by_index.setdefault(index, []).append(kind)
    out = bytearray()
    for i, card in enumerate(cards):
        seq = (start_seq + i) & 0xFFFF
        kinds = by_index.get(i, ())
        if "drop" in kinds:
            continue
        if "garbage" in kinds:
            out += NOISE
        if "bad_card" in kinds:
            f = shoeframe.encode(0x3F, seq, strict=False)
        else:
            f = shoeframe.encode(card, seq)
        if "corrupt" in kinds:
            f = bytearray(f)
            f[2] = ord("0") if f[2] != ord("0") else ord("1")  # low card digit: CRC fails
            f = bytes(f)
        out += f
        if "repeat" in kinds:
            out += f
    return bytes(out)


def deal(seed, size=52, count=None, start_seq=0, faults=()):
    """(bytes, cards): the first `count` cards of the seed's deck as shoe frames."""
    cards = shuffled_deck(seed, size)[:count]
    return frames(cards, start_seq, faults), cards


def frame_list(cards, start_seq=0):
    """One 12-byte frame per card, for a shoe that sends them one at a time."""
    return [shoeframe.encode(c, (start_seq + i) & 0xFFFF) for i, c in enumerate(cards)]


def dealt_check(got, want):
    """(lost, doubled, in_order) for the card names a table reported dealt (`got`, in
    order) against the shoe's cards (`want`, names). A face-down card is reported without
    its name (None: the Pai Gow banker's, a dealer's hole cards; issue 12) and matches
    whatever card was dealt at its place; the settlement shows them all."""
    lost = max(0, len(want) - len(got))
    named = [c for c in got if c is not None]
    doubled = max(0, len(got) - len(want)) + len(named) - len(set(named))
    in_order = len(got) == len(want) and all(g is None or g == w for g, w in zip(got, want))
    return lost, doubled, in_order


def decode_acks(data):
    """The sequence numbers the controller acknowledged in `data` (its UART TX bytes), in
    order; anything that is not an intact acknowledgement (pitboss.hw.shoe.encode_ack) is
    skipped."""
    out = []
    n = shoeframe.ACK_LEN
    i = data.find(b"+")
    while 0 <= i <= len(data) - n:
        f = bytes(data[i:i + n])
        try:
            seq, crc = int(f[1:5], 16), int(f[5:9], 16)
        except ValueError:
            seq = crc = -1
        if f[9:] == b"\n" and seq >= 0 and shoeframe.ack_crc(seq) == crc:
            out.append(seq)
            i = data.find(b"+", i + n)
        else:
            i = data.find(b"+", i + 1)
    return out


class ShoeTimeout(RuntimeError):
    pass


class AckingShoe:
    """The shoe side of the acknowledged link (docs/shoe-protocol.md): one frame at a
    time, sent again every `timeout` seconds until the controller acknowledges its
    sequence number on the UART's TX line.

    Transport-free: send(bytes) puts bytes on the shoe's line, received() returns what
    the controller sent since the last call, now() reads a clock and wait(seconds) lets
    that much time pass (a real sleep, or a simulation's step)."""

    def __init__(self, send, received, now, wait, timeout=0.1, step=0.005, tries=200):
        self.send, self.received, self.now, self.wait = send, received, now, wait
        self.timeout, self.step, self.tries = timeout, step, tries
        self.frames = 0  # frames acknowledged
        self.sends = 0  # frames put on the line, retransmissions included
        self._rx = b""
        self._fresh = True

    @property
    def retransmits(self):
        return self.sends - self.frames

    def deal(self, frames):
        for f in frames:
            self.deal_one(f)

    def deal_one(self, frame):
        if self._fresh:
            # What the controller sent before this shoe started (acknowledgements of an
            # earlier session, perhaps of the same numbers) must not count for its frames.
            self.received()
            self._fresh = False
        seq = int(frame[3:7], 16)
        for _ in range(self.tries):
            self.send(frame)
            self.sends += 1
            deadline = self.now() + self.timeout
            while True:
                self.wait(self.step)
                self._rx += self.received()
                got = decode_acks(self._rx)
                self._rx = self._rx[-(shoeframe.ACK_LEN - 1):]
                if seq in got:
                    self.frames += 1
                    return
                if self.now() >= deadline:
                    break
        raise ShoeTimeout("frame seq %d not acknowledged after %d tries" % (seq, self.tries))


def _fault(text):
    try:
        index, kind = text.split(":")
        return int(index), kind
    except ValueError:
        raise argparse.ArgumentTypeError(f"fault {text!r}: expected INDEX:KIND")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.emu.shoe_sim", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--deck", type=int, default=52, choices=(52, 53))
    ap.add_argument("--cards", type=int, default=None, help="deal only the first N")
    ap.add_argument("--start-seq", type=int, default=0)
    ap.add_argument("--fault", type=_fault, action="append", default=[],
                    metavar="INDEX:KIND", help="one of: " + ", ".join(FAULTS))
    ap.add_argument("--list", action="store_true", help="print card names, not frames")
    ap.add_argument("-o", "--output", help="write here instead of stdout")
    a = ap.parse_args(argv)
    try:
        if not 0 <= a.start_seq <= 0xFFFF:
            raise ValueError(f"--start-seq {a.start_seq} out of range 0..65535")
        data, cards = deal(a.seed, a.deck, a.cards, a.start_seq, a.fault)
    except ValueError as e:
        print(f"shoe_sim: {e}", file=sys.stderr)
        return 2
    if a.list:
        data = "".join(name(c) + "\n" for c in cards).encode()
    if a.output:
        with open(a.output, "wb") as f:
            f.write(data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
