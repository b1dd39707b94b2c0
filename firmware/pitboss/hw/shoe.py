# Shoes: where the cards come from. One interface for every kind of shoe:
#
#     shoe.poll() -> (card_id, seq) or None     never blocks, never raises for bad input
#     shoe.alarm(code, seq, info)               called for every event below
#     shoe.reset()                              a new shuffle: forget the cards seen (the
#                                               frame sequence runs on across rounds)
#
# pitboss.hw.serialshoe reads pitboss shoe frames from a UART (pitboss.hw.shoeframe, the
# codec the host tools share; docs/shoe-protocol.md); the simulated shoe is a SerialShoe on
# a ByteSource, so simulated cards go through the same parser as real ones.
# pitboss.hw.rfidshoe gives the same interface for a reader plus a deck map
# (pitboss.store.deckmap). This module is what they share: the event codes, their names
# and the base class; a table loads only the shoe it has.
#
# Bad frames are reported through `alarm` with a code, never an exception: the main loop
# must outlive line noise, a flaky shoe and a fumbled card.
from pitboss.rules.cards import JOKER
from pitboss.compat import const

# Event codes, passed to alarm(code, seq, info). seq is -1 where no trustworthy sequence
# number exists; info is an int (or the tag UID in hex, for RFID events).
EV_GARBAGE = const(1)  # bytes outside any frame were skipped; info = how many
EV_MALFORMED = const(2)  # a frame with a wrong length or a non-hex character; dropped
EV_BAD_CRC = const(3)  # a frame whose CRC-16 does not match; dropped, seq not trusted
EV_BAD_CARD = const(4)  # intact frame, card id > 52; info = the id; card not dealt
EV_DROPPED = const(5)  # sequence gap; info = frames missing before seq; the card is dealt
EV_REPEAT = const(6)  # same seq and card again (a retransmission); ignored
EV_CONFLICT = const(7)  # same seq, different card; info = the new card; ignored
EV_STALE = const(8)  # seq older than the last one (not a restart); info = card; ignored
EV_RESTART = const(9)  # seq 0 out of turn: the shoe restarted; info = the last seq
EV_DUPLICATE = const(10)  # a card already dealt since reset(); info = card or tag; ignored
EV_UNKNOWN_TAG = const(11)  # RFID: tag not in the deck map; info = UID hex
EV_WRONG_DECK = const(12)  # RFID: tag from another registered deck; info = UID hex
EV_COLLISION = const(13)  # RFID: two tags in the field at once; info = 0
EV_READ_ERROR = const(14)  # RFID: CRC, check byte or protocol error; info = the message
EV_READER_FAULT = const(15)  # RFID: the reader chip does not answer; info = the message
EV_UNRESENT = const(16)  # a torn frame no intact frame followed within RESEND_MS; info = ms
N_EVENTS = const(17)

NAMES = ("", "garbage", "malformed", "bad_crc", "bad_card", "dropped", "repeat",
         "conflict", "stale", "restart", "duplicate", "unknown_tag", "wrong_deck",
         "collision", "read_error", "reader_fault", "unresent")
# Notices are harmless on their own (noise between frames, a retransmission, a restart
# between rounds, and a torn frame: a transport error the shoe repairs by sending the
# frame again, since a torn frame is never acknowledged); everything else means a card
# may be missing or wrong. A torn frame that nothing intact follows within RESEND_MS is
# `unresent`, an alarm (docs/shoe-protocol.md, "Transport errors and misdeals").
_NOTICES = const((1 << EV_GARBAGE) | (1 << EV_REPEAT) | (1 << EV_RESTART)
                 | (1 << EV_MALFORMED) | (1 << EV_BAD_CRC))


def is_alarm(code):
    return not (_NOTICES >> code) & 1


def describe(code, seq, info):
    """One line for a log or the display, e.g. 'dropped: 2 frame(s) missing before seq
    17'."""
    what = NAMES[code] if 0 < code < N_EVENTS else "event %d" % code
    if code == EV_GARBAGE:
        return "%s: %d byte(s) skipped" % (what, info)
    if code == EV_DROPPED:
        return "%s: %d frame(s) missing before seq %d" % (what, info, seq)
    if code == EV_RESTART:
        return "%s: seq 0 after seq %d" % (what, info)
    if code == EV_UNRESENT:
        return "%s: a torn frame, nothing intact within %d ms" % (what, info)
    if seq >= 0:
        return "%s: seq %d, %s" % (what, seq, info)
    return "%s: %s" % (what, info)


class Shoe:
    """What every shoe shares: event counting, the alarm callback, the duplicate check."""

    def __init__(self, alarm):
        self.alarm = alarm
        self.counts = [0] * N_EVENTS  # events since start, by code
        self._seen = bytearray(JOKER + 1)  # cards dealt since reset()

    def _report(self, code, seq, info):
        self.counts[code] += 1
        if self.alarm is not None:
            self.alarm(code, seq, info)

    def _first(self, card):
        """True the first time a card is dealt since reset(); a second time is the
        caller's EV_DUPLICATE (a single deck holds each card once)."""
        if self._seen[card]:
            return False
        self._seen[card] = 1
        return True

    def reset(self):
        seen = self._seen
        for i in range(len(seen)):
            seen[i] = 0

    def ack(self, seq):
        """Tell the shoe a card is in (only a serial shoe has a line back)."""

    def resume(self, card, seq):
        """After a reboot: the last card the journal holds came from frame `seq`."""

