# `pitboss bench`, board side: runs on MicroPython (the virtual board's VM, a real board
# through `mpremote run`, or the unix port for the native-emitter figures). The host
# (host_tools/bench.py) prepends one line, `CONFIG = {...}`, and reads back the last line
# starting "PITBOSS-BENCH " (JSON). Nothing here needs a file on the board but the
# firmware (and treys in /lib for the treys figures, copied there by the host).
#
# Timing: time.ticks_ms() only (the VM's ticks_us is ticks_ms * 1000), so every timed
# loop is made long enough by CONFIG["reps"]; rounds are interleaved (floor, pitboss,
# treys, floor, ...) and each figure is the median over rounds of that round's ratio.
import gc
import sys
import time

try:
    import micropython
except ImportError:  # not MicroPython: the host runs this only on MicroPython
    micropython = None

CFG = globals().get("CONFIG") or {}
N_HANDS = CFG.get("hands", 500)
REPS = CFG.get("reps", 20)
ROUNDS = CFG.get("rounds", 5)
PG_ROUNDS = CFG.get("paigow_rounds", 20)
for _p in CFG.get("path", ()):
    if _p not in sys.path:
        sys.path.insert(0, _p)

OUT = {"impl": "%s %s" % (sys.implementation.name,
                           ".".join(str(v) for v in sys.implementation.version[:3])),
       "platform": sys.platform, "machine": getattr(sys.implementation, "_machine", "")}


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


class Lcg:
    """Deterministic hands without relying on the port's `random` (same on every run)."""

    def __init__(self, seed):
        self.x = seed & 0x7FFFFFFF

    def below(self, n):
        self.x = (self.x * 1103515245 + 12345) & 0x7FFFFFFF
        return (self.x >> 8) % n


def deal(rng, n, size, deck=52):
    hands = []
    for _ in range(n):
        cards = list(range(deck))
        h = []
        for _ in range(size):
            h.append(cards.pop(rng.below(len(cards))))
        hands.append(h)
    return hands


# ---- timed loops: one function each, so everything they touch is a local -----------------

def _empty5(a, b, c, d, e):
    pass


def loop_floor(hands, reps):
    f = _empty5
    t = time.ticks_ms()
    for _ in range(reps):
        for h in hands:
            f(h, 0, 1, 2, 3)
    return time.ticks_diff(time.ticks_ms(), t)


def loop_score(score, p, hands, reps):
    t = time.ticks_ms()
    for _ in range(reps):
        for h in hands:
            score(p, h)
    return time.ticks_diff(time.ticks_ms(), t)


def loop_treys(five, hands, reps):
    t = time.ticks_ms()
    for _ in range(reps):
        for h in hands:
            five(h)
    return time.ticks_diff(time.ticks_ms(), t)


def locked(score, p, hands):
    for h in hands:
        score(p, h)


def alloc_per_call(fn, a, b, hands):
    """Bytes allocated per call of fn(a, h) over hands (b: unused, for treys' fn(h)):
    gc.mem_alloc() across the loop with the GC off. (No fn(*args) here: a star call may
    allocate its argument array.)"""
    gc.collect()
    gc.disable()
    try:
        a0 = gc.mem_alloc()
        if b:
            locked1(fn, hands)
        else:
            locked(fn, a, hands)
        a1 = gc.mem_alloc()
    finally:
        gc.enable()
    return (a1 - a0) / len(hands)


def locked1(fn, hands):
    for h in hands:
        fn(h)


def heap_locked_ok(score, p, hands):
    """Rank hands under micropython.heap_lock(): any allocation raises MemoryError."""
    if micropython is None or not hasattr(micropython, "heap_lock"):
        return None
    gc.collect()
    micropython.heap_lock()
    try:
        locked(score, p, hands)
        ok = True
    except MemoryError:
        ok = False
    finally:
        micropython.heap_unlock()
    return ok


def held(objs):
    """Heap bytes the objects hold: the size of a copy of each (a dict's copy() has the
    same table size; a tuple slice the same length). Used as well as the gc.mem_alloc()
    delta because a port whose gc.collect() reclaims nothing mid-script (the VM's)
    counts the garbage made while building the tables in that delta."""
    total = 0
    for o in objs:
        a0 = gc.mem_alloc()
        c = o.copy() if hasattr(o, "copy") else o[:]
        total += gc.mem_alloc() - a0
        del c
    return total


def mem_delta(a0):
    gc.collect()
    return gc.mem_alloc() - a0


def bench_pitboss(rng):
    gc.collect()
    a0 = gc.mem_alloc()
    from pitboss import evaluator, profiles
    OUT["pitboss_import_bytes"] = mem_delta(a0)
    a1 = gc.mem_alloc()
    p = profiles.get("nj-5card")
    evaluator.score(p, [0, 4, 8, 12, 17])  # builds nj-5card's tables (first use)
    OUT["pitboss_tables_delta_bytes"] = mem_delta(a1)
    five = [profiles.get(g) for g in profiles.GAMES]
    five = [q for q in five if q.size == 5 and q.hand == 5]
    for q in five:
        evaluator.score(q, [0, 4, 8, 12, 17])
    OUT["pitboss_tables_all_delta_bytes"] = mem_delta(a1)
    objs, seen = [], []
    for q in five:
        for o in (q._fast, q._ex, q._flush):
            if o is not None and not any(o is s for s in seen):
                seen.append(o)
                objs.append(o)
    OUT["pitboss_tables_bytes"] = held(objs[:3])  # nj-5card's three tables
    OUT["pitboss_tables_all_bytes"] = held(objs)
    OUT["pitboss_fast_games"] = [q.id for q in five if q._fast]
    return evaluator, p


def bench_treys():
    try:
        gc.collect()
        a0 = gc.mem_alloc()
        from treys import Card, Evaluator
        a1 = gc.mem_alloc()
        ev = Evaluator()
        OUT["treys_tables_delta_bytes"] = mem_delta(a1)
        OUT["treys_import_bytes"] = a1 - a0
        t = ev.table
        OUT["treys_tables_bytes"] = held([t.flush_lookup, t.unsuited_lookup])
        return ev, Card
    except Exception as e:  # noqa: BLE001 - reported, not fatal
        OUT["treys_error"] = "%s: %s" % (type(e).__name__, e)
        return None, None


def bench_paigow(rng):
    try:
        from pitboss import evaluator, profiles
        from pitboss.games import paigow
    except ImportError as e:
        OUT["paigow_ms"] = None
        OUT["paigow_note"] = "n/a: pitboss.paigow not importable (%s)" % e
        return
    P = profiles.get("pr-pai-gow")
    LOW = profiles.get("pr-pai-gow-low")
    rounds = []
    for _ in range(PG_ROUNDS):
        deck = list(range(53))
        seats = []
        for _ in range(7):  # seven hands of seven (49 of 53 cards): banker + six
            h = []
            for _ in range(7):
                h.append(deck.pop(rng.below(len(deck))))
            seats.append(h)
        players = []
        for h in seats[1:]:  # players set their own hands (here: the house way too)
            hi, lo, _ = paigow.house_way(P, h)
            players.append((hi, lo))
        rounds.append((seats[0], players))

    def one_round(banker, players):
        hi, lo, _ = paigow.house_way(P, banker)
        bhs = evaluator.score(P, hi)
        bls = evaluator.score(LOW, lo)
        for h, l in players:
            hs = evaluator.score(P, h)
            ls = evaluator.score(LOW, l)
            foul = not paigow.outranks(P, hs, ls)
            paigow.settle(100, hs, ls, bhs, bls, foul)

    reps = max(1, CFG.get("paigow_reps", 5))
    times = []
    for _ in range(ROUNDS):
        t = time.ticks_ms()
        for _ in range(reps):
            for banker, players in rounds:
                one_round(banker, players)
        times.append(time.ticks_diff(time.ticks_ms(), t) / (reps * len(rounds)))
    OUT["paigow_ms"] = _median(times)
    OUT["paigow_note"] = ("7 hands of 7 cards: the banker's set by house way, the 6 "
                          "players' (preset) scored, foul-checked and settled; median "
                          "of %d rounds of %d" % (ROUNDS, reps * len(rounds)))


def main():
    rng = Lcg(CFG.get("seed", 2024))
    hands = deal(rng, N_HANDS, 5)
    evaluator, p = bench_pitboss(rng)
    ev, Card = bench_treys()
    thands = None
    if ev is not None:
        names = [r + s for r in "23456789TJQKA" for s in "shdc"]
        thands = [[Card.new(names[c]) for c in h] for h in hands]
        OUT["treys_agrees"] = _check_treys(evaluator, p, ev, hands, thands)
    score = evaluator.score
    floor, pit, tre = [], [], []
    rp, rt = [], []
    for _ in range(ROUNDS):
        f = loop_floor(hands, REPS)
        s = loop_score(score, p, hands, REPS)
        floor.append(f)
        pit.append(s)
        rp.append(s / f if f else 0)
        if ev is not None:
            t = loop_treys(ev._five, thands, REPS)
            tre.append(t)
            rt.append(t / f if f else 0)
    n = REPS * len(hands)
    OUT["calls_per_round"] = n
    OUT["floor_ns"] = _median(floor) * 1e6 / n
    OUT["pitboss_ns"] = _median(pit) * 1e6 / n
    OUT["pitboss_per_s"] = n * 1000 / _median(pit) if _median(pit) else None
    OUT["pitboss_floor_ratio"] = _median(rp)
    if ev is not None:
        OUT["treys_ns"] = _median(tre) * 1e6 / n
        OUT["treys_per_s"] = n * 1000 / _median(tre) if _median(tre) else None
        OUT["treys_floor_ratio"] = _median(rt)
        OUT["treys_bytes_per_rank"] = alloc_per_call(ev._five, None, 1, thands)
    OUT["pitboss_bytes_per_rank"] = alloc_per_call(score, p, 0, hands)
    # every game, joker hands included, ranked with the heap locked
    lock_ok = heap_locked_ok(score, p, hands)
    from pitboss import profiles
    for gid in profiles.GAMES:
        q = profiles.get(gid)
        qh = deal(rng, 50, q.size, q.deck)
        for h in qh:
            score(q, h)  # first use builds the game's tables
        ok = heap_locked_ok(score, q, qh)
        if ok is not None:
            lock_ok = lock_ok and ok
    OUT["heap_lock_ok"] = lock_ok
    bench_paigow(rng)
    print("PITBOSS-BENCH " + _json(OUT))


def _check_treys(evaluator, p, ev, hands, thands):
    """Same order as treys on these hands (treys: lower is better)."""
    pairs = [(evaluator.score(p, h), ev._five(t)) for h, t in zip(hands, thands)]
    for i in range(1, len(pairs)):
        a, b = pairs[i - 1], pairs[i]
        if (a[0] > b[0]) != (a[1] < b[1]) or (a[0] == b[0]) != (a[1] == b[1]):
            return False
    return True


def _json(obj):
    import json
    return json.dumps(obj)


if sys.implementation.name == "micropython":
    main()
