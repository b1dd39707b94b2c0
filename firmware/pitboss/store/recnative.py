# pyright: reportUndefinedVariable=false
# (ptr8, ptr32 and uint are viper's compiler built-ins)
#
# A dealt card's journal record in native code, for ports with a native emitter (the
# Pico's armv6m, the ESP32's xtensawin): its numbers (pitboss.store.cardrec), and the
# record's header and CRC values (pitboss.store.record.frame: the same bytes as its
# struct.pack_into and binascii.crc32, CRC-32, IEEE, reflected), written straight into
# buffers allocated once. binascii.crc32 returns an int object above 2**30, a long int's
# arithmetic makes another at each step, and a Python function's frame is on the heap
# past 11 words; a native call makes none of these, so a card's record costs no heap
# here, and its digits and CRC take tens of microseconds instead of ~1 ms of bytecode.
# Never imported where `@micropython.viper` is a SyntaxError: `pitboss flash` builds this
# file only for a board with a native arch, and record._native() imports it only if it
# is there.
import micropython
from array import array

# The CRC's table for 4 bits at a time (16 words; 256 would be 1 KB of heap): 16
# instructions or so a byte instead of ~100 bit by bit (186 us a card record on the Pico).
# Built when the first record is written (this module is imported then), once.
_T = array("I", range(16))
for _i in range(16):
    _c = _i
    for _k in range(4):
        _c = (_c >> 1) ^ (0xEDB88320 if _c & 1 else 0)
    _T[_i] = _c


@micropython.viper
def frame(buf, data, n: int, kind: int, seq: int):
    """buf: the record's first 14 bytes. Writes the header (magic 0xA5, kind, seq u32, n
    u16, little-endian), its check (the low 16 bits of the CRC-32 of the first 8 bytes)
    and the CRC-32 of the header's 10 bytes and data[0:n]."""
    b = ptr8(buf)
    d = ptr8(data)
    t = ptr32(_T)
    b[0] = 0xA5
    b[1] = kind
    b[2] = seq & 0xFF
    b[3] = (seq >> 8) & 0xFF
    b[4] = (seq >> 16) & 0xFF
    b[5] = (seq >> 24) & 0xFF
    b[6] = n & 0xFF
    b[7] = (n >> 8) & 0xFF
    ones = (uint(0xFFFF) << 16) | uint(0xFFFF)  # (built: a literal over 2**30 is an object)
    c = ones
    i = 0
    while i < 10:
        if i == 8:
            h = c ^ ones
            b[8] = h & 0xFF
            b[9] = (h >> 8) & 0xFF
        c ^= uint(b[i])
        c = (c >> 4) ^ uint(t[c & 15])
        c = (c >> 4) ^ uint(t[c & 15])
        i += 1
    i = 0
    while i < n:
        c ^= uint(d[i])
        c = (c >> 4) ^ uint(t[c & 15])
        c = (c >> 4) ^ uint(t[c & 15])
        i += 1
    c = c ^ ones
    b[10] = c & 0xFF
    b[11] = (c >> 8) & 0xFF
    b[12] = (c >> 16) & 0xFF
    b[13] = (c >> 24) & 0xFF


@micropython.viper
def put(buf, at: int, data, n: int, kind: int, seq: int):
    """A whole record into buf at `at`, as frame() frames it (header, data[0:n], CRC-32):
    the journal's page buffer, where a record that fits is copied whole (pitboss.store.
    ringjournal). One call for what were frame() and three slice copies, each slice a heap
    object (issue 27's card path)."""
    b = ptr8(buf)
    d = ptr8(data)
    t = ptr32(_T)
    b[at] = 0xA5
    b[at + 1] = kind
    b[at + 2] = seq & 0xFF
    b[at + 3] = (seq >> 8) & 0xFF
    b[at + 4] = (seq >> 16) & 0xFF
    b[at + 5] = (seq >> 24) & 0xFF
    b[at + 6] = n & 0xFF
    b[at + 7] = (n >> 8) & 0xFF
    ones = (uint(0xFFFF) << 16) | uint(0xFFFF)
    c = ones
    i = 0
    while i < 10:
        if i == 8:
            h = c ^ ones
            b[at + 8] = h & 0xFF
            b[at + 9] = (h >> 8) & 0xFF
        c ^= uint(b[at + i])
        c = (c >> 4) ^ uint(t[c & 15])
        c = (c >> 4) ^ uint(t[c & 15])
        i += 1
    o = at + 10
    i = 0
    while i < n:
        x = d[i]
        b[o + i] = x
        c ^= uint(x)
        c = (c >> 4) ^ uint(t[c & 15])
        c = (c >> 4) ^ uint(t[c & 15])
        i += 1
    c = c ^ ones
    o += n
    b[o] = c & 0xFF
    b[o + 1] = (c >> 8) & 0xFF
    b[o + 2] = (c >> 16) & 0xFF
    b[o + 3] = (c >> 24) & 0xFF


@micropython.viper
def card(buf, i: int, c: int, s: int, t: uint) -> int:
    """A dealt card's record's numbers into buf (pitboss.store.cardrec, whose head is
    there already): c (>= 0) from buf[i], then ,"s":s (s >= 0; -1: none), ,"t":t (t: the
    time, below 2**32, a long int passed as its 32 bits) and the closing brace. Returns
    the record's length. (One loop writes every number: a call from viper to viper
    would box its arguments, a ptr8 too, as a Python call does.)"""
    b = ptr8(buf)
    # t = top * 10000 + low, from its 16-bit halves in int arithmetic (viper divides
    # ints only; (hi % 10000) * 65536 + lo < 655,360,000 fits one).
    hi = int(t >> 16)
    cur = (hi % 10000) * 65536 + int(t & 0xFFFF)
    top = (hi // 10000) * 65536 + cur // 10000
    low = cur % 10000
    k = 0  # what comes next: 0 c, 1 ,"s":s, 2 ,"t": and t's top digits, 3 t's low four
    while k < 4:
        w = 1  # the place value of the first digit, at least: low after top has four
        if k == 0:
            n = c
        elif k == 3:
            n = low
            if top:
                w = 1000
        else:
            n = s if k == 1 else top
            if n < 0:  # no shoe count
                k += 1
                continue
            b[i] = 0x2C  # ,"s": or ,"t":
            b[i + 1] = 0x22
            b[i + 2] = 0x73 if k == 1 else 0x74
            b[i + 3] = 0x22
            b[i + 4] = 0x3A
            i += 5
            if k == 2 and not top:
                k = 3  # t below 10,000: its low digits alone
                continue
        p = 1
        while p < w or p <= n // 10:
            p *= 10
        while p:
            b[i] = 0x30 + n // p
            n = n % p
            p //= 10
            i += 1
        k += 1
    b[i] = 0x7D  # }
    return i + 1
