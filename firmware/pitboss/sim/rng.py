# Deterministic random numbers: Marsaglia's xorshift32 with shifts 13/17/5, in plain ints
# so that CPython and MicroPython produce the same cards for the same seed. The one
# generator of the project: the shoe simulator (host_tools/emu/shoe_sim.py), the round
# simulator (simulate_round), the host's round plans (host_tools/table/rounds.py) and the
# board benchmark all use this class.
#
# It is for simulations and tests only. A real table never shuffles: the cards come out
# of a physical shoe. Nothing here is suitable for anything that must be unpredictable.
#
# Known answer (tests/host/test_shoe.py checks it): XorShift32(1) yields 270369, 67634689,
# 2647435461, ... and its shuffle(list(range(52))) is the same list on both ports.
# `below` and `Rng` are short aliases (rng.below(6), Rng(seed)) the callers use.
from pitboss.compat import const

_MASK = const(0xFFFFFFFF)
# xorshift32 never leaves state 0, so a zero seed is replaced by this fixed odd constant
# (the 32-bit golden ratio); documented so that seed 0 is still reproducible.
_ZERO_SEED = const(0x9E3779B9)


class XorShift32:
    """Seeded xorshift32: next32(), randbelow(n), shuffle(list)."""

    def __init__(self, seed):
        if not isinstance(seed, int):
            raise TypeError("rng seed must be an int, not %r" % (seed,))
        s = seed & _MASK
        self.state = s if s else _ZERO_SEED

    def next32(self):
        # 32-bit values are long ints on 32-bit ports (small ints hold 31 bits); a
        # shuffle is a few hundred of them, so the allocation does not matter here.
        x = self.state
        x ^= (x << 13) & _MASK
        x ^= x >> 17
        x ^= (x << 5) & _MASK
        self.state = x
        return x

    def randbelow(self, n):
        """Uniform int in [0, n). Rejection sampling: a plain `% n` would favour small
        values whenever n does not divide 2**32."""
        if not isinstance(n, int) or n <= 0:
            raise ValueError("randbelow needs a positive int, not %r" % (n,))
        limit = 0x100000000 - (0x100000000 % n)
        while True:
            r = self.next32()
            if r < limit:
                return r % n

    def shuffle(self, items):
        """Fisher-Yates in place (from the end, as Knuth's algorithm P); returns items."""
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]
        return items

    below = randbelow


Rng = XorShift32
