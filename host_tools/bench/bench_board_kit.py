# `pitboss bench`, board side, first part: the timed loops the figures are measured with,
# and the rank digests (every five-card hand of every five-card game, and a seeded
# sample), which the chip computes and the host recomputes on CPython over the same
# hands. Plain Python, names looked up when called, so the host imports it
# (bench_device.host_sample_digests) and the board runs it as the start of the bench
# script (bench_device._script: this file, then host_tools/bench/bench_board.py, whose head
# imports what the loops use).


# ---- timed loops: one function each, so everything they touch is a local -----------------

def _empty5(a, b, c, d, e):
    pass


def loop_floor(hands, reps):
    f = _empty5
    t = time.ticks_us()
    for _ in range(reps):
        for h in hands:
            f(h, 0, 1, 2, 3)
    return time.ticks_diff(time.ticks_us(), t)


def loop_score(score, p, hands, reps):
    t = time.ticks_us()
    for _ in range(reps):
        for h in hands:
            score(p, h)
    return time.ticks_diff(time.ticks_us(), t)


def loop_treys(five, hands, reps):
    t = time.ticks_us()
    for _ in range(reps):
        for h in hands:
            five(h)
    return time.ticks_diff(time.ticks_us(), t)


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


def exact_all_hands(evaluator, profiles):
    """Every five-card hand of every five-card game: evaluator.score (native where
    flashed) against the bytecode table path, and a digest of the scores in
    enumeration order (the host compares it with the core's)."""
    import hashlib
    from array import array
    out = {}
    for gid in profiles.GAMES:
        p = profiles.get(gid)
        if p.size != 5 or p.hand != 5:
            continue
        score = evaluator.score
        bc = evaluator._score_bc
        h = bytearray(5)
        buf = array("I", [0] * 52)
        dig = hashlib.sha256()
        n = bad = 0
        deck = p.deck
        for a in range(deck):
            h[0] = a
            for b in range(a + 1, deck):
                h[1] = b
                for c in range(b + 1, deck):
                    h[2] = c
                    for d in range(c + 1, deck):
                        h[3] = d
                        i = 0
                        for e in range(d + 1, deck):
                            h[4] = e
                            v = score(p, h)
                            if v != bc(p, h) or v != evaluator.score_frame(p, h, 0):
                                bad += 1
                            buf[i] = v
                            i += 1
                        n += i
                        dig.update(bytes(buf)[:4 * i])
        out[gid] = {"hands": n, "mismatches": bad,
                    "sha256": "".join("%02x" % x for x in dig.digest())}
    return out


def sample_five(evaluator, profiles, n, seed, chunk=500):
    """n pseudo-random five-card hands of every five-card game (the joker too where the
    deck has it), ranked from a list by evaluator.score and from a bytes frame by
    evaluator.score_frame (both native where flashed): mismatches between the two, and a
    SHA-256 of the scores in order, which the host recomputes with CPython on the same
    hands (this function is plain Python: the host imports and runs it too). Hands are
    made in chunks, so a chip's heap holds chunk hands at a time, not n."""
    import hashlib
    from array import array
    out = {}
    for gid in profiles.GAMES:
        p = profiles.get(gid)
        if p.size != 5 or p.hand != 5:
            continue
        score = evaluator.score
        sf = evaluator.score_frame
        deck = p.deck
        lim = 256 - 256 % deck  # bytes below lim map evenly onto the deck
        key = "%s/%d/" % (gid, seed)
        ctr = 0
        pool = b""
        pi = 0
        dig = hashlib.sha256()
        buf = bytearray(5 * chunk)
        seen = bytearray(deck)
        h = [0, 0, 0, 0, 0]
        sc = array("I", [0] * chunk)
        done = bad = 0
        while done < n:
            k = min(chunk, n - done)
            for j in range(k):
                o = 5 * j
                i = 0
                while i < 5:  # five distinct cards, each from one byte of SHA-256 output
                    # (a 31-bit LCG needs big ints on a 32-bit port: 8x slower there)
                    if pi == len(pool):
                        ctr += 1
                        pool = hashlib.sha256((key + str(ctr)).encode()).digest()
                        pi = 0
                    r = pool[pi]
                    pi += 1
                    if r >= lim:
                        continue
                    c = r % deck
                    if seen[c]:
                        continue
                    seen[c] = 1
                    buf[o + i] = c
                    h[i] = c
                    i += 1
                for i in range(5):
                    seen[h[i]] = 0
                v = score(p, h)
                if v != sf(p, buf, o):
                    bad += 1
                sc[j] = v
            dig.update(bytes(sc)[:4 * k])
            done += k
        out[gid] = {"hands": done, "mismatches": bad,
                    "sha256": "".join("%02x" % b for b in dig.digest())}
    return out
