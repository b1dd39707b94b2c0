# The RFID shoe: cards identified by their tags, through a reader (pitboss.hw.mfrc522)
# and a deck map (pitboss.store.deckmap), with pitboss.hw.shoe's interface and events.
from pitboss.rules.cards import name
from pitboss.hw.shoe import (EV_COLLISION, EV_DUPLICATE, EV_READ_ERROR, EV_READER_FAULT,
                             EV_REPEAT, EV_UNKNOWN_TAG, EV_WRONG_DECK, Shoe)


class RFIDShoe(Shoe):
    """Cards identified by RFID tag: reader.read_uid() -> bytes or None (pitboss.hw.mfrc522)
    and deckmap.lookup(uid) -> (card, deck) (pitboss.store.deckmap).

    seq is this shoe's own count of cards dealt (16 bits, wrapping), so the table sees
    the same (card, seq) as from a serial shoe. The first card after reset() decides the
    deck; a tag of another registered deck is an alarm, not a card."""

    def __init__(self, reader, deckmap, alarm=None):
        super().__init__(alarm)
        self.reader = reader
        self.deckmap = deckmap
        self.deck = -1
        self._seq = 0
        self._last = None

    def reset(self):
        super().reset()
        self.deck = -1
        self._last = None

    def next_card(self):
        try:
            uid = self.reader.read_uid()
        except OSError as e:  # RFIDError is an OSError; so is a dead SPI bus
            kind = getattr(e, "kind", "")
            if kind == "collision":
                self._report(EV_COLLISION, -1, 0)
            elif kind and kind != "no_reader" and kind != "timeout":
                self._report(EV_READ_ERROR, -1, str(e))
            else:
                self._report(EV_READER_FAULT, -1, str(e))
            return -1
        if uid is None:
            return -1
        if uid == self._last:
            # The same tag again straight away: it left the field and came back (the
            # reader halts a tag after reading it, so one that stays is not re-read).
            self._report(EV_REPEAT, -1, _hex(uid))
            return -1
        self._last = uid
        try:
            card, deck = self.deckmap.lookup(uid)
        except ValueError as e:
            # Only DeckError('unknown_uid') is an unknown tag; anything else is a bug and
            # must not be filed as a card problem. (Checked by code, so that a serial-shoe
            # table need not load pitboss.store.deckmap.)
            if getattr(e, "code", None) != "unknown_uid":
                raise
            self._report(EV_UNKNOWN_TAG, -1, str(e))
            return -1
        if self.deck < 0:
            self.deck = deck
        elif deck != self.deck:
            self._report(EV_WRONG_DECK, -1, "%s is deck %d, dealing deck %d"
                         % (_hex(uid), deck, self.deck))
            return -1
        if not self._first(card):
            self._report(EV_DUPLICATE, -1, "%s (%s) seen twice in this deck"
                         % (_hex(uid), name(card)))
            return -1
        seq = self._seq
        self._seq = (seq + 1) & 0xFFFF
        return card | seq << 6


def _hex(uid):
    return "".join("%02X" % b for b in uid)
