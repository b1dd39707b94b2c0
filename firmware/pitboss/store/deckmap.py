# Which RFID tag is which card. A deck is registered by reading its tags in a known order
# (by default a new deck's: 2s..As, 2h..Ah, 2d..Ad, 2c..Ac, then the joker), and the map
# UID -> (card, deck) is kept on flash. An unknown tag is an error naming its UID, never
# a guess; a tag that belongs to another registered deck is reported as such.
#
# File (text, so `mpremote fs cat` shows it; about 1 KB per deck):
#
#     pitboss-deckmap 1
#     deck 1 52                    deck number, cards in it
#     2s 04A1B2C3D4E5F6            card, UID in hex (4, 7 or 10 bytes), in card-id order
#     ...
#     crc32 89ABCDEF               CRC-32 (zlib's) of every byte above this line
#
# It is written to <path>.tmp, flushed and synced, then renamed over <path>, so a power
# cut leaves either the old map or the new one. A file that fails any check is refused
# with the line that is wrong; the map in memory is only replaced by a complete one.
import os
from binascii import crc32, unhexlify

from pitboss.rules.cards import JOKER, RANKS, name, parse
from pitboss.compat import const
from pitboss.errors import Refused

MAGIC = "pitboss-deckmap 1"
DEFAULT_PATH = "/deckmap.txt"
_UID_LENGTHS = (4, 7, 10)  # ISO 14443-3 single, double, triple size UIDs
_MAX_DECKS = const(16)  # a table rotates a few decks; more is a configuration mistake


class DeckError(Refused):
    """A refusal (pitboss.errors) whose `code` is one of unknown_uid, duplicate_uid,
    incomplete, bad_order, bad_file, no_deck, too_many; the message names the UID (hex),
    card, file line or count at fault."""


def uid_hex(uid):
    return "".join("%02X" % b for b in uid)


def new_deck_order(size=52):
    """How a new deck comes out of the box: each suit 2..A, suits s h d c, joker last."""
    if size not in (52, 53):
        raise DeckError("bad_order", "a deck has 52 or 53 cards, not %r" % (size,))
    order = [r * 4 + s for s in range(4) for r in range(len(RANKS))]
    if size == 53:
        order.append(JOKER)
    return order


def _check_order(order):
    """A deck order: all 52 cards once, plus the joker at most once."""
    seen = bytearray(JOKER + 1)
    ids = []
    for tok in order:
        c = parse(tok)
        if seen[c]:
            raise DeckError("bad_order", "card %s appears twice in the deck order" % name(c))
        seen[c] = 1
        ids.append(c)
    if len(ids) - seen[JOKER] != 52:
        missing = [name(c) for c in range(JOKER) if not seen[c]]
        raise DeckError("bad_order", "deck order lacks %d card(s): %s"
                        % (len(missing), " ".join(missing)))
    return ids


class DeckMap:
    def __init__(self):
        self._by_uid = {}  # bytes -> deck << 8 | card
        self._decks = []  # per deck: list of (card, uid) in card-id order

    def __len__(self):
        return len(self._decks)

    def lookup(self, uid):
        """(card, deck) for a tag's UID; DeckError('unknown_uid') names the UID."""
        v = self._by_uid.get(uid if isinstance(uid, bytes) else bytes(uid))
        if v is None:
            raise DeckError("unknown_uid", "unknown RFID tag %s (in no registered deck)"
                            % uid_hex(uid))
        return v & 0xFF, v >> 8

    def deck(self, n):
        """[(card, uid)] of deck n (1-based), in card-id order."""
        if not 1 <= n <= len(self._decks):
            raise DeckError("no_deck", "no deck %r (%d registered)" % (n, len(self._decks)))
        return list(self._decks[n - 1])

    def add_deck(self, pairs):
        """Add one complete deck from (card, uid) pairs; returns its number. Checks it
        all first, so a rejected deck leaves the map as it was."""
        if len(self._decks) >= _MAX_DECKS:
            raise DeckError("too_many", "already %d decks registered" % _MAX_DECKS)
        cards = _check_order([c for c, _ in pairs])
        n = len(self._decks) + 1
        fresh = {}
        for card, (_, uid) in zip(cards, pairs):
            uid = bytes(uid)
            if len(uid) not in _UID_LENGTHS:
                raise DeckError("bad_file", "UID %s of %s is %d bytes, not 4, 7 or 10"
                                % (uid_hex(uid), name(card), len(uid)))
            other = fresh.get(uid)
            if other is None:
                other = self._by_uid.get(uid)
            if other is not None:
                raise DeckError("duplicate_uid", "tag %s is both %s and %s of deck %d"
                                % (uid_hex(uid), name(card), name(other & 0xFF), other >> 8))
            fresh[uid] = (n << 8) | card
        self._by_uid.update(fresh)
        self._decks.append(sorted([(v & 0xFF, u) for u, v in fresh.items()]))
        return n

    def remove_deck(self, n):
        """Retire deck n; decks after it move down one number."""
        pairs = self.deck(n)
        decks = self._decks[:n - 1] + self._decks[n:]
        self._decks = []
        self._by_uid = {}
        for d in decks:
            self.add_deck(d)
        return pairs

    # --- the file ---

    def dumps(self):
        lines = [MAGIC]
        for i, pairs in enumerate(self._decks):
            lines.append("deck %d %d" % (i + 1, len(pairs)))
            for card, uid in pairs:
                lines.append("%s %s" % (name(card), uid_hex(uid)))
        body = ("\n".join(lines) + "\n").encode()
        return body + b"crc32 %08X\n" % (crc32(body) & 0xFFFFFFFF)

    def save(self, path=DEFAULT_PATH):
        data = self.dumps()
        tmp = path + ".tmp"
        f = open(tmp, "wb")
        try:
            f.write(data)
            f.flush()
        finally:
            f.close()
        sync = getattr(os, "sync", None)
        if sync is not None:
            sync()
        try:
            os.rename(tmp, path)
        except OSError:
            # FAT (and Windows) will not rename onto an existing file. Removing first
            # opens a window where only <path>.tmp exists; load() falls back to it.
            os.remove(path)
            os.rename(tmp, path)

    @classmethod
    def loads(cls, data, source="deck map"):
        """Parse and check a whole file; DeckError('bad_file') names the line."""
        if isinstance(data, str):
            data = data.encode()
        cut = data.rfind(b"crc32 ")
        if cut < 0 or (cut and data[cut - 1] != 0x0A):
            raise DeckError("bad_file", "%s: no crc32 line (truncated?)" % source)
        body, tail = data[:cut], data[cut:]
        try:
            if len(tail) != 15 or tail[14] != 0x0A:
                raise ValueError
            want = int(tail[6:14].decode(), 16)
        except ValueError:
            raise DeckError("bad_file", "%s: malformed crc32 line %r" % (source, tail))
        got = crc32(body) & 0xFFFFFFFF
        if got != want:
            raise DeckError("bad_file", "%s: checksum %08X does not match the file's %08X "
                            "(corrupted or edited)" % (source, got, want))
        try:
            lines = body.decode().split("\n")
        except UnicodeError:  # only a crafted file gets here: the CRC matched
            raise DeckError("bad_file", "%s: not text" % source)
        if lines[0] != MAGIC:
            raise DeckError("bad_file", "%s line 1: expected %r" % (source, MAGIC))
        dm = cls()
        i = 1
        while i < len(lines) and lines[i]:
            head = lines[i].split()
            if (len(head) != 3 or head[0] != "deck" or head[1] != str(len(dm) + 1)
                    or head[2] not in ("52", "53")):
                raise DeckError("bad_file", "%s line %d: expected 'deck %d 52|53', got %r"
                                % (source, i + 1, len(dm) + 1, lines[i]))
            size = int(head[2])
            pairs = []
            for j in range(i + 1, i + 1 + size):
                pairs.append(_parse_line(lines[j] if j < len(lines) else "", source, j + 1))
            try:
                dm.add_deck(pairs)
            except DeckError as e:
                raise DeckError("bad_file", "%s, deck at line %d: %s" % (source, i + 1, e))
            i += size + 1
        if i != len(lines) - 1:  # only the empty string after the final newline is left
            raise DeckError("bad_file", "%s line %d: unexpected %r" % (source, i + 1, lines[i]))
        return dm

    @classmethod
    def load(cls, path=DEFAULT_PATH):
        """The saved map. A missing file is an empty map unless an interrupted save left
        <path>.tmp (see save()); a damaged file raises DeckError('bad_file')."""
        for p in (path, path + ".tmp"):
            try:
                f = open(p, "rb")
            except OSError:
                continue
            try:
                data = f.read()
            finally:
                f.close()
            return cls.loads(data, p)
        return cls()


def _parse_line(line, source, lineno):
    parts = line.split()
    try:
        if len(parts) != 2:
            raise ValueError
        card = parse(parts[0])
        uid = unhexlify(parts[1])
    except ValueError:  # a refused card is a ValueError too, and so is bad hex
        raise DeckError("bad_file", "%s line %d: expected '<card> <uid hex>', got %r"
                        % (source, lineno, line))
    return card, uid


class Registration:
    """Register a deck tag by tag: add(uid) assigns the next card of `order` and returns
    it. A tag read twice, or already in another deck, raises DeckError and changes
    nothing, so the operator just presents the right card again."""

    def __init__(self, deckmap, order=None, size=52):
        self.deckmap = deckmap
        self.order = _check_order(order) if order is not None else new_deck_order(size)
        self._uids = []
        self._index = {}  # uid -> position in this registration

    def expected(self):
        """The card to present next, or None when the deck is complete."""
        n = len(self._uids)
        return self.order[n] if n < len(self.order) else None

    def done(self):
        return len(self._uids) == len(self.order)

    def count(self):
        """Tags read so far."""
        return len(self._uids)

    def add(self, uid):
        uid = bytes(uid)
        card = self.expected()
        if card is None:
            raise DeckError("bad_order", "deck already complete (%d cards)" % len(self.order))
        if len(uid) not in _UID_LENGTHS:
            raise DeckError("bad_file", "UID %s is %d bytes, not 4, 7 or 10"
                            % (uid_hex(uid), len(uid)))
        k = self._index.get(uid)
        if k is not None:
            raise DeckError("duplicate_uid", "tag %s was already read as %s; present %s"
                            % (uid_hex(uid), name(self.order[k]), name(card)))
        try:
            other, deck = self.deckmap.lookup(uid)
        except DeckError:
            pass
        else:
            raise DeckError("duplicate_uid", "tag %s is already %s of deck %d"
                            % (uid_hex(uid), name(other), deck))
        self._index[uid] = len(self._uids)
        self._uids.append(uid)
        return card

    def undo(self):
        """Forget the last tag read (a misfed card); returns its card, or None."""
        if not self._uids:
            return None
        uid = self._uids.pop()
        del self._index[uid]
        return self.order[len(self._uids)]

    def commit(self):
        """Add the finished deck to the map; returns its deck number."""
        if not self.done():
            raise DeckError("incomplete", "deck incomplete: %d of %d cards read, next %s"
                            % (len(self._uids), len(self.order), name(self.expected())))
        return self.deckmap.add_deck(list(zip(self.order, self._uids)))


def register(deckmap, uids, order=None, size=52):
    """Register a whole deck from UIDs already read in `order`; returns the deck number."""
    reg = Registration(deckmap, order, size)
    for uid in uids:
        reg.add(uid)
    return reg.commit()
