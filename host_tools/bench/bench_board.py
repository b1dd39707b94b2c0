# `pitboss bench`, board side, and the chip's measuring script: runs on any MicroPython
# (a flashed Pico or ESP32, the virtual board's VM, the unix port).
#
#   pitboss bench --port P                                          # the host does it
#   cat host_tools/bench/bench_board_kit.py host_tools/bench/bench_board.py > /tmp/b.py
#   mpremote connect /dev/ttyACM0 run /tmp/b.py                     # a flashed board
#   micropython /tmp/b.py firmware                                  # unix port + path
#
# The script is this file after host_tools/bench/bench_board_kit.py (the rank digests, which the
# host also runs on CPython): bench_device._script() joins them, as the cat above does.
#
# It prints one line per figure (ratios to an empty five-argument call, which are
# cycle-comparable between boards, then us and, where machine.freq() is known, cycles
# per call) and last a line "PITBOSS-BENCH {json}" that host_tools/bench/cli.py reads. The
# host may prepend `CONFIG = {...}` (sizes, exact=True for the all-hands proof).
# Nothing here needs a file on the board but the firmware (and treys in /lib for the
# treys figures, copied there by the host).
#
# Timing: time.ticks_us() (on the VM it is ticks_ms * 1000, so every timed loop is made
# long enough by CONFIG["reps"]); rounds are interleaved (floor, pitboss, treys, floor,
# ...) and each figure is the median over rounds of that round's ratio.
import gc
import json  # imported first: on a Pico, importing it at the end found no 1,232 bytes
import sys
import time

try:
    import micropython
except ImportError:  # not MicroPython: the host runs this only on MicroPython
    micropython = None

CFG = globals().get("CONFIG") or {}
if (sys.implementation.name == "micropython" and len(sys.argv) > 1
        and sys.argv[1] not in sys.path):  # micropython bench_board.py DIR
    sys.path.insert(0, sys.argv[1])
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


def bench_pitboss(rng):
    gc.collect()
    a0 = gc.mem_alloc()
    from pitboss.rules import evaluator, profiles
    OUT["pitboss_import_bytes"] = mem_delta(a0)
    OUT["native"] = evaluator._n5 is not None  # pitboss/native5 (viper) in use
    a1 = gc.mem_alloc()
    t0 = time.ticks_us()
    p = profiles.get("nj-5card")
    evaluator.score(p, [0, 4, 8, 12, 17])  # loads nj-5card's table (first use)
    OUT["pitboss_first_rank_us"] = time.ticks_diff(time.ticks_us(), t0)
    OUT["pitboss_tables_delta_bytes"] = mem_delta(a1)
    five = [profiles.get(g) for g in profiles.GAMES]
    five = [q for q in five if q.size == 5 and q.hand == 5]
    for q in five:
        evaluator.score(q, [0, 4, 8, 12, 17])
    OUT["pitboss_tables_all_delta_bytes"] = mem_delta(a1)
    objs = []
    for q in five:  # games whose rules give the same table share one array: count it once
        if q.fast and not [o for o in objs if o is q.fast]:
            objs.append(q.fast)
    OUT["pitboss_tables_bytes"] = held(objs[:1])  # nj-5card's table
    OUT["pitboss_tables_all_bytes"] = held(objs)
    OUT["pitboss_fast_games"] = [q.id for q in five if q.fast]
    return evaluator, p


def loop_frame(score_frame, p, buf, n, reps):
    t = time.ticks_us()
    for _ in range(reps):
        for off in range(0, n, 5):
            score_frame(p, buf, off)
    return time.ticks_diff(time.ticks_us(), t)


def loop_floor_frame(buf, n, reps):
    f = _empty5
    t = time.ticks_us()
    for _ in range(reps):
        for off in range(0, n, 5):
            f(buf, off, 1, 2, 3)
    return time.ticks_diff(time.ticks_us(), t)


def alloc_10k(evaluator, p, hands, buf):
    """gc.mem_alloc() across 10,000 ranks with the collector off: any heap allocation
    (a frame allocated on the heap too, which heap_lock() cannot see) shows here.
    Returns (bytes over 10,000 list ranks, bytes over 10,000 frame ranks)."""
    score = evaluator.score
    sf = evaluator.score_frame
    nb = len(buf)
    reps = 10000 // len(hands)
    score(p, hands[0])
    sf(p, buf, 0)
    gc.collect()
    gc.disable()
    try:
        a0 = gc.mem_alloc()
        _alloc_list(score, p, hands, reps)
        a1 = gc.mem_alloc()
        _alloc_frame(sf, p, buf, nb, reps)
        a2 = gc.mem_alloc()
    finally:
        gc.enable()
    return a1 - a0, a2 - a1, reps * len(hands)


def _alloc_list(score, p, hands, reps):
    for _ in range(reps):
        for h in hands:
            score(p, h)


def _alloc_frame(sf, p, buf, nb, reps):
    off = 0
    for _ in range(reps):
        off = 0
        while off < nb:
            sf(p, buf, off)
            off += 5


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
        from pitboss.rules import evaluator, profiles
        from pitboss.games import paigow, paigow_way
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
            hi, lo, _ = paigow_way.house_way(P, h)
            players.append((100, hi, lo, None))  # None: foul-checked when settled
        rounds.append((seats[0], players))

    def one_round(banker, players):
        # What settle_round does with the numbers (not the record it builds from them):
        # the banker's house way, then every seat scored, foul-checked and settled.
        hi, lo, _ = paigow_way.house_way(P, banker)
        bhs = evaluator.score(P, hi)
        bls = evaluator.score(LOW, lo)
        paigow.settle_seats(P, players, bhs, bls)

    reps = max(1, CFG.get("paigow_reps", 5))
    times = []
    for _ in range(ROUNDS):
        t = time.ticks_us()
        for _ in range(reps):
            for banker, players in rounds:
                one_round(banker, players)
        times.append(time.ticks_diff(time.ticks_us(), t) / 1000 / (reps * len(rounds)))
    OUT["paigow_ms"] = _median(times)
    # The banker's house way alone (evaluator.check, the 21 settings, 42 ranks, the rule
    # table): what a missed round target is made of.
    hw = []
    for _ in range(ROUNDS):
        t = time.ticks_us()
        for _ in range(reps):
            for banker, _p in rounds:
                paigow_way.house_way(P, banker)
        hw.append(time.ticks_diff(time.ticks_us(), t) / 1000 / (reps * len(rounds)))
    OUT["paigow_house_way_ms"] = _median(hw)
    # ... and what the round is made of: of the house way, the hand's check and the 21
    # settings ranked (native5.seven in one call where the board has native code, else
    # setting by setting); the six seats scored, foul-checked and settled
    n5 = getattr(evaluator, "_n5", None)
    LOW.fast is None and evaluator.score(LOW, [0, 5])

    def ways(b):
        if n5 and 52 not in b:
            n5.seven(P.fast, b, paigow_way._W, LOW.fast)
        else:
            paigow_way._ways(P, b)

    def seats(players):
        paigow.settle_seats(P, players, 0, 0)

    for key, fn in (("paigow_check_ms", lambda r: evaluator.check(P, r[0], True)),
                    ("paigow_ways_ms", lambda r: ways(r[0])),
                    ("paigow_seats_ms", lambda r: seats(r[1]))):
        t = time.ticks_us()
        for _ in range(reps):
            for r in rounds:
                fn(r)
        OUT[key] = time.ticks_diff(time.ticks_us(), t) / 1000 / (reps * len(rounds))
    OUT["paigow_joker_rounds"] = sum(1 for b, _p in rounds if 52 in b)
    OUT["paigow_note"] = ("7 hands of 7 cards: the banker's set by house way, the 6 "
                          "players' (preset) scored, foul-checked and settled; median "
                          "of %d rounds of %d" % (ROUNDS, reps * len(rounds)))


def profiles_mod():
    from pitboss.rules import profiles
    return profiles


def _freq():
    try:
        import machine
        return machine.freq() if not isinstance(machine.freq(), tuple) else machine.freq()[0]
    except Exception:  # noqa: BLE001 - unix port, VM: no clock to report
        return None


def say(label, value):
    print("%-52s %s" % (label, value))


def main():
    rng = Lcg(CFG.get("seed", 2024))
    # The tables first, as a table controller loads them (at its first hand), before the
    # dealt hands' garbage fragments a small heap: on a Pico, dealing 200 hands first left
    # no 4,756 contiguous bytes for nj-5card's table (MemoryError).
    evaluator, p = bench_pitboss(rng)
    try:  # imported now too: after the timed loops a Pico's heap had no 1,148 bytes left
        from pitboss.games import paigow, paigow_way  # noqa: F401  (for bench_paigow)
    except ImportError:
        pass
    # ... and every other game's table (Pai Gow's two-card low hand's too): loaded after
    # the timed loops, its 1,148-byte module import found no block on a Pico
    from pitboss.rules import profiles
    for gid in profiles.GAMES:
        q = profiles.get(gid)
        if q.fast is None:
            evaluator._load(q)
    if CFG.get("sample"):  # first, while the heap is whole (a Pico's fragments fast)
        gc.collect()
        t = time.ticks_us()
        OUT["sample"] = sample_five(evaluator, profiles_mod(), CFG["sample"],
                                    CFG.get("seed", 2024), chunk=100)
        OUT["sample_us"] = time.ticks_diff(time.ticks_us(), t)
    hands = deal(rng, N_HANDS, 5)
    gc.collect()
    ev, Card = bench_treys()
    thands = None
    if ev is not None:
        names = [r + s for r in "23456789TJQKA" for s in "shdc"]
        thands = [[Card.new(names[c]) for c in h] for h in hands]
        OUT["treys_agrees"] = _check_treys(evaluator, p, ev, hands, thands)
    score = evaluator.score
    buf = bytearray()
    for h in hands:
        buf.extend(bytes(h))
    buf = bytes(buf)
    hands7 = deal(rng, max(10, N_HANDS // 5), 7)
    floor, pit, tre, frm, ffl, sev, fl7 = [], [], [], [], [], [], []
    rp, rt, rf, r7 = [], [], [], []
    reps7 = max(1, REPS // 4)  # (a seven-card rank costs more: fewer, long enough)
    for _ in range(ROUNDS):
        f = loop_floor(hands, REPS)
        s = loop_score(score, p, hands, REPS)
        floor.append(f)
        pit.append(s)
        rp.append(s / f if f else 0)
        ff = loop_floor_frame(buf, len(buf), REPS)
        sf = loop_frame(evaluator.score_frame, p, buf, len(buf), REPS)
        ffl.append(ff)
        frm.append(sf)
        rf.append(sf / ff if ff else 0)
        f7 = loop_floor(hands7, reps7)
        s7 = loop_score(score, p, hands7, reps7)
        fl7.append(f7)
        sev.append(s7)
        r7.append(s7 / f7 if f7 else 0)
        if ev is not None:
            t = loop_treys(ev._five, thands, REPS)
            tre.append(t)
            rt.append(t / f if f else 0)
    n = REPS * len(hands)
    n7 = reps7 * len(hands7)
    OUT["calls_per_round"] = n
    OUT["floor_ns"] = _median(floor) * 1e3 / n
    OUT["pitboss_ns"] = _median(pit) * 1e3 / n
    OUT["pitboss_per_s"] = n * 1e6 / _median(pit) if _median(pit) else None
    OUT["pitboss_floor_ratio"] = _median(rp)
    OUT["frame_ns"] = _median(frm) * 1e3 / n
    OUT["frame_floor_ratio"] = _median(rf)
    OUT["seven_ns"] = _median(sev) * 1e3 / n7
    OUT["seven_floor_ratio"] = _median(r7)
    if ev is not None:
        OUT["treys_ns"] = _median(tre) * 1e3 / n
        OUT["treys_per_s"] = n * 1e6 / _median(tre) if _median(tre) else None
        OUT["treys_floor_ratio"] = _median(rt)
        OUT["treys_bytes_per_rank"] = alloc_per_call(ev._five, None, 1, thands)
    OUT["pitboss_bytes_per_rank"] = alloc_per_call(score, p, 0, hands)
    al, af, na = alloc_10k(evaluator, p, hands, buf)
    OUT["alloc_ranks"] = na
    OUT["alloc_list_bytes"] = al
    OUT["alloc_frame_bytes"] = af
    # every game, joker hands included, ranked with the heap locked
    lock_ok = heap_locked_ok(score, p, hands)
    from pitboss.rules import profiles
    for gid in profiles.GAMES:
        q = profiles.get(gid)
        qh = deal(rng, 50, q.size, q.deck)
        for h in qh:
            score(q, h)  # first use loads the game's table
        ok = heap_locked_ok(score, q, qh)
        if ok is not None:
            lock_ok = lock_ok and ok
    OUT["heap_lock_ok"] = lock_ok
    bench_paigow(rng)
    mhz = _freq()
    OUT["cpu_hz"] = mhz
    if CFG.get("exact"):
        OUT["exact"] = exact_all_hands(evaluator, profiles)
    cyc = (lambda ns: " = %.0f cycles at %d MHz" % (ns * mhz / 1e9, mhz // 1000000)) \
        if mhz else (lambda ns: "")
    say("port", "%s on %s, native path: %s" % (OUT["impl"], OUT["machine"], OUT["native"]))
    say("empty 5-arg call f(h, 0, 1, 2, 3)", "%.0f ns%s" % (OUT["floor_ns"],
                                                            cyc(OUT["floor_ns"])))
    say("five-card rank, score(p, list) / empty call", "%.2fx (target 2.5x)  %.0f ns%s" % (
        OUT["pitboss_floor_ratio"], OUT["pitboss_ns"], cyc(OUT["pitboss_ns"])))
    say("five-card rank, score_frame(p, bytes, off) / empty", "%.2fx (target 1.8x)  %.0f ns%s"
        % (OUT["frame_floor_ratio"], OUT["frame_ns"], cyc(OUT["frame_ns"])))
    say("seven-card best five, score(p, list) / empty call", "%.2fx (target 4x)  %.0f ns%s" % (
        OUT["seven_floor_ratio"], OUT["seven_ns"], cyc(OUT["seven_ns"])))
    if OUT.get("paigow_ms") is not None:
        say("Pai Gow round, house way + 6 seats settled", "%.3f ms (target < 2 ms at 125 MHz)"
            % OUT["paigow_ms"])
        say("  of it, the banker's house way alone", "%.3f ms (its check %.3f ms, the 21 "
            "settings ranked %.3f ms); the six seats %.3f ms" % (
                OUT["paigow_house_way_ms"], OUT["paigow_check_ms"], OUT["paigow_ways_ms"],
                OUT["paigow_seats_ms"]))
    say("heap bytes allocated over %d ranks, GC off" % na,
        "list %d, bytes frame %d (target 0)" % (al, af))
    say("ranks every game under heap_lock()", lock_ok)
    say("first rank (loads nj-5card's table)", "%d us" % OUT["pitboss_first_rank_us"])
    say("heap held by tables: nj-5card / all five-card", "%d / %d B" % (
        OUT["pitboss_tables_bytes"], OUT["pitboss_tables_all_bytes"]))
    for gid, r in (OUT.get("sample") or {}).items():
        say("sampled: %s, %d hands" % (gid, r["hands"]), "list vs frame %d mismatches, sha256 %s"
            % (r["mismatches"], r["sha256"][:16]))
    for gid, r in (OUT.get("exact") or {}).items():
        say("exact: %s, %d hands" % (gid, r["hands"]), "%d mismatches, sha256 %s" % (
            r["mismatches"], r["sha256"][:16]))
    hands = hands7 = thands = buf = None  # noqa: F841  (freed for the result line)
    _emit(OUT)


def _check_treys(evaluator, p, ev, hands, thands):
    """Same order as treys on these hands (treys: lower is better)."""
    pairs = [(evaluator.score(p, h), ev._five(t)) for h, t in zip(hands, thands)]
    for i in range(1, len(pairs)):
        a, b = pairs[i - 1], pairs[i]
        if (a[0] > b[0]) != (a[1] < b[1]) or (a[0] == b[0]) != (a[1] == b[1]):
            return False
    return True


def _emit(obj):
    """The result line, written a key at a time: on a Pico, by now, the heap has no
    block for the whole JSON string (MemoryError allocating 1,232 bytes)."""
    gc.collect()
    w = sys.stdout.write
    w("PITBOSS-BENCH {")
    sep = ""
    for k in obj:
        w(sep + json.dumps(k) + ": " + json.dumps(obj[k]))
        sep = ", "
    w("}\n")


if sys.implementation.name == "micropython":
    main()
