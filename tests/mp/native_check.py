# Runs on a MicroPython with a native emitter (the unix port from
# requirements-bench-native.txt): pitboss.rules.native5 is the score() in use, it agrees with
# the bytecode path and the core on random hands of every five-card game, and 10,000
# ranks (from lists and from a bytes frame) allocate nothing with the collector off.
import gc
import sys

sys.path.insert(0, sys.argv[1])
from pitboss.rules import evaluator, profiles  # noqa: E402

assert evaluator._n5 is not None, "native5 not in use"
assert evaluator.score is evaluator._n5.score


class Lcg:
    def __init__(self, seed):
        self.x = seed

    def below(self, n):
        self.x = (self.x * 1103515245 + 12345) & 0x7FFFFFFF
        return (self.x >> 8) % n


rng = Lcg(99)
checked = 0
for gid in profiles.GAMES:
    p = profiles.get(gid)
    for n in (p.size, 7) if p.hand == 5 else (p.size,):
        for _ in range(3000):
            deck = list(range(p.deck))
            h = [deck.pop(rng.below(len(deck))) for _ in range(n)]
            want = evaluator._eval(p, h, n)
            assert evaluator.score(p, h) == want, (gid, h)
            assert evaluator._score_bc(p, h) == want, (gid, h)
            if n == 5:
                assert evaluator.score_frame(p, bytes(h), 0) == want, (gid, h)
            checked += 1

# Seven cards (score's native best-five-of-seven, native5.seven) with five or more of a
# suit, and five-card joker hands (native5.joker): against the core.
for gid in ("nj-5card", "pr-pai-gow", "pr-pai-gow-a5-low"):
    p = profiles.get(gid)
    for _ in range(3000):
        st = rng.below(4)
        h = []
        while len(h) < 5 + rng.below(3):
            c = rng.below(13) * 4 + st
            if c not in h:
                h.append(c)
        while len(h) < 7:
            c = rng.below(52)
            if c not in h:
                h.append(c)
        h.insert(rng.below(7), h.pop())
        assert evaluator.score(p, h) == evaluator._eval(p, h, 7), (gid, h)
        checked += 1
    if p.joker:
        for _ in range(5000):
            deck = list(range(52))
            h = [deck.pop(rng.below(len(deck))) for _ in range(4)]
            h.insert(rng.below(5), 52)
            want = evaluator._eval(p, h, 5)
            assert evaluator.score(p, h) == want, (gid, h)
            assert evaluator.score_frame(p, bytes(h), 0) == want, (gid, h)
            checked += 1
# The house way's 21 settings in one call: each the core's score of its two hands.
from pitboss.games import paigow, paigow_rules, paigow_way  # noqa: E402
p, low = profiles.get("pr-pai-gow"), paigow_rules.low()
for _ in range(300):
    deck = list(range(52))
    h = [deck.pop(rng.below(len(deck))) for _ in range(7)]
    assert evaluator._n5.seven(p.fast, h, paigow_way._W, low.fast) == evaluator._eval(p, h, 7)
    for k, (hi, lo) in enumerate(paigow_rules.settings(h)):
        assert paigow_way._W[k] == evaluator._eval(p, hi, 5), h
        assert paigow_way._W[21 + k] == evaluator._eval(low, lo, 2), h
    checked += 1

# evaluator.check's native pass (native5.valid) accepts exactly what the bytecode walk
# accepts: bools, large ints, other types, out-of-range ids, duplicates, jokers.
from pitboss.rules.cards import CardError  # noqa: E402
weird = [True, False, 2 ** 40, 2 ** 40 + 5, -1, 53, 255, "x", None, 1.0, -(2 ** 40),
         2 ** 31 + 3]
for gid in ("nj-5card", "pr-pai-gow"):
    p = profiles.get(gid)
    for _ in range(3000):
        n = 1 + rng.below(8)
        h = [rng.below(54) for _ in range(n)]
        if rng.below(4) == 0:
            h[rng.below(n)] = weird[rng.below(len(weird))]
        try:
            evaluator._check_cards(p, h)
            ok = 1
        except CardError:
            ok = 0
        assert evaluator._n5.valid(h, p.joker) == ok, (gid, h)
        checked += 1

p = profiles.get("pr-pai-gow")  # four aces and the joker go back to the core: still 0 B
hands = []
for _ in range(100):
    deck = list(range(53))
    hands.append([deck.pop(rng.below(len(deck))) for _ in range(5)])
buf = bytes(bytearray(c for h in hands for c in h))
score, frame = evaluator.score, evaluator.score_frame
for h in hands:
    score(p, h)


hands7 = []
for _ in range(20):
    deck = list(range(53))
    hands7.append([deck.pop(rng.below(len(deck))) for _ in range(7)])
for h in hands7:
    score(p, h)


def ranks_list(reps):
    for _ in range(reps):
        for h in hands:
            score(p, h)
        for h in hands7:  # (seven cards, with the joker: the core's, also 0 B)
            score(p, h)


def ranks_frame(reps):
    for _ in range(reps):
        off = 0
        while off < 500:
            frame(p, buf, off)
            off += 5


def measure():
    # locals only: a new module global could grow the globals dict mid-count
    ranks_list(1)
    ranks_frame(1)
    gc.collect()
    gc.disable()
    try:
        a0 = gc.mem_alloc()
        ranks_list(100)
        a1 = gc.mem_alloc()
        ranks_frame(100)
        a2 = gc.mem_alloc()
    finally:
        gc.enable()
    return a1 - a0, a2 - a1


al, af = measure()
print("NATIVE-OK checked %d alloc_list %d alloc_frame %d" % (checked, al, af))
