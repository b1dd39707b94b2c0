# A dealt card's journal record, formatted into a buffer allocated once (issue 27: a
# card's path allocates nothing): the bytes json.dumps({"ev": "card", "c": c, "s": s,
# "t": t}, separators=(",", ":")) gives on CPython, with no dict, string or list per card.
# What the journal stores is unchanged, so replay, recall and the host's export read it
# as before.
import struct

from pitboss.store.record import native

_HEAD = b'{"ev":"card","c":'
_S = b',"s":'
_T = b',"t":'
_SIZE = 64  # "c" <= 52, "s" and "t" < 10**19: 17 + 2 + 5 + 19 + 5 + 19 + 1 = 68 at most


class CardRecord:
    def __init__(self):
        self.buf = bytearray(_SIZE + 8)
        self.buf[0:len(_HEAD)] = _HEAD
        self._w = bytearray(4)  # a long int's 4 bytes (_put_u32)
        # A view per record length, made the first time that length comes: memoryview
        # slices are heap objects, and a card's record is one of a few lengths.
        self._views = {}
        self._nat = None  # record.native(), looked up at the first record

    def encode(self, c, s, t):
        """ints c (the card id), s (the shoe's frame count, or None), t (time) -> a
        memoryview of the record's bytes (valid until the next encode)."""
        b = self.buf
        nat = self._nat
        if nat is None:
            nat = self._nat = native()
        if nat and 0 <= t < 0x100000000 and 0 <= c < 0x40000000 and (
                s is None or 0 <= s < 0x40000000):
            # Native code where the port has it (pitboss.store.recnative): no long-int
            # arithmetic, no Python frame per number (each is heap past 11 words).
            s = -1 if s is None else s
            i = nat.card(b, len(_HEAD), c, s, t)  # pyright: ignore[reportAttributeAccessIssue]
            v = self._views.get(i)
            if v is None:
                v = self._views[i] = memoryview(b)[:i]
            return v
        i = _put_int(b, len(_HEAD), c)
        if s is not None:
            b[i:i + 5] = _S
            i = _put_int(b, i + 5, s)
        b[i:i + 5] = _T
        if 0x40000000 <= t < 0x100000000:
            i = self._put_u32(b, i + 5, t)
        else:
            i = _put_int(b, i + 5, t)
        b[i] = 0x7D  # }
        i += 1
        v = self._views.get(i)
        if v is None:
            v = self._views[i] = memoryview(b)[:i]
        return v


    def _put_u32(self, b, i, n):
        """Write n (2**30 <= n < 2**32: a long int on MicroPython, as a Unix time is) in
        decimal at b[i:] with small ints only: each operation on a long int makes
        another on the heap. n = hi * 65536 + lo, divided by 10000 a 16-bit limb at a
        time (r * 65536 + lo < 655,360,000 stays a small int)."""
        w = self._w
        struct.pack_into("<I", w, 0, n)
        hi = w[3] << 8 | w[2]
        cur = (hi % 10000) * 65536 + (w[1] << 8 | w[0])
        top = (hi // 10000) * 65536 + cur // 10000  # n // 10000
        cur %= 10000  # n % 10000: its last four digits
        i = _put_int(b, i, top)  # top > 0: n >= 2**30
        k = 4
        while k:
            k -= 1
            b[i + k] = 0x30 + cur % 10
            cur //= 10
        return i + 4


def _put_int(b, i, n):
    """Write int n >= 0 in decimal at b[i:]; returns the index after it."""
    if n < 0:
        raise ValueError("negative in a card record")
    k = 1
    m = n
    while m >= 10:
        m //= 10
        k += 1
    j = i + k
    while k:
        k -= 1
        b[i + k] = 0x30 + n % 10
        n //= 10
    return j
