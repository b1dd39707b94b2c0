"""Build-time tables: every value is the rule core's own output (pitboss.rules.evaluator._eval),
one hand per class of hands that score alike, so no table is built at import or at boot.

    python -m host_tools.fast.gentables           # rewrite the generated files
    python -m host_tools.fast.gentables --check   # exit 1 if a file differs from a rebuild

What it writes:
- firmware/pitboss/rules/tables/t5_<hash>.py, one per distinct five-card table: `T`, one `bytes`
  constant (little-endian uint32) holding the board's five-card fast-path table (layout
  in evaluator.py), named by the first 8 hex digits of its SHA-256. Games whose rules
  give the same table share one module (nj-5card, qc-caribbean and pr-pai-gow-a5-low:
  the same ladder below five aces, the wheel the lowest straight), and each five-card
  profile names its module (Profile.t5, pitboss/rules/profiles.py): a rule change that changes
  a table changes its name, and --check says which profile to update. A board loads only
  the configured game's module, on first use.
- firmware/pitboss/rules/tables/t2_<hash>.py, the same for the two-card game (Pai Gow's low hand,
  pr-pai-gow-low; Profile.t2): one score per pair of ranks (the joker its own rank).
- host_tools/fast/tables/<game>-<n>.bin (zlib): the host's tables for n cards of a game
  (host_tools/fast/hostfast.py): one score per rank multiset (the joker a rank of its own)
  and one per flush-suit rank mask, so CPython ranks any hand with two lookups and
  starts without ranking anything.
tests/host/test_tables.py rebuilds everything from the core and compares.
"""
from __future__ import annotations

import hashlib
import sys
import zlib
from array import array
from pathlib import Path

from pitboss.rules import evaluator as ev
from pitboss.rules import profiles

import host_tools
from host_tools.fast import hand_keys

REPO = Path(host_tools.REPO)
PKG = REPO / "firmware" / "pitboss" / "rules" / "tables"
HOST = Path(__file__).with_name("tables")
_ALL = 0x1FFF
_DISTINCT_MAX = 32  # straights and the like: more exceptions than this -> no fast path


def five_games():
    return [g for g in profiles.GAMES
            if profiles.get(g).size == 5 and profiles.get(g).hand == 5]


def table_bytes(values):
    """The little-endian uint32 bytes of a table's values (what T holds)."""
    raw = array("I", values)
    if sys.byteorder != "little":
        raw.byteswap()
    return raw.tobytes()


def two_games():
    return [g for g in profiles.GAMES
            if profiles.get(g).size == 2 and profiles.get(g).hand == 2]


def board_module_name(raw, n=5):
    """A table module is named by its content: equal tables, one module (t5_ for
    five-card tables, t2_ for two-card ones)."""
    return "t%d_" % n + hashlib.sha256(raw).hexdigest()[:8]


def table_attr(n):
    """The Profile attribute naming a game's n-card table module."""
    return "t%d" % n


def board_tables():
    """{module name: (table bytes, [games using it])}, every five-card and two-card
    game's table rebuilt from the core, equal tables merged."""
    out = {}
    for n, games, build in ((5, five_games(), five_table), (2, two_games(), two_table)):
        for gid in games:
            vals = build(profiles.get(gid))
            if vals is None:
                continue
            raw = table_bytes(vals)
            out.setdefault(board_module_name(raw, n), (raw, []))[1].append(gid)
    return out


# ---- the board's two-card table (Pai Gow's low hand) ---------------------------------------

def two_table(p, core=None):
    """p's two-card table (evaluator.py: _T2N words): the score of a rank pair, entry
    (a >> 2) * 14 + (b >> 2) for card ids a, b (the joker, id 52, is rank 13 here), each
    the core's score of two cards of those ranks in different suits (two cards make no
    flush or straight: hand < 3). Two jokers (13, 13) cannot be dealt: 0."""
    core = core or ev._eval
    out = [0] * ev._T2N
    for ra in range(14):
        for rb in range(14):
            if ra == 13 and rb == 13:
                continue
            a = 52 if ra == 13 else ra * 4
            b = 52 if rb == 13 else rb * 4 + 1
            out[ra * 14 + rb] = core(p, bytes((a, b)), 2)
    return out


# ---- the board's five-card table ----------------------------------------------------------

def five_table(p, core=None):
    """The uint32 values of p's fast-path table (evaluator.py's layout), all from the
    core; None if p's scores do not fit the fast path's form."""
    core = core or ev._eval
    hp, hc = ev._HP, ev._HC
    tab = [0] * hp
    used = bytearray(hp)
    ex, fl, bases = {}, {}, {}
    hand = bytearray(5)
    cnt = bytearray(13)
    # Every rank multiset of five cards, at most four of a rank: r0 <= r1 <= ... <= r4.
    for r0 in range(13):
        for r1 in range(r0, 13):
            for r2 in range(r1, 13):
                for r3 in range(r2, 13):
                    for r4 in range(r3, 13):
                        if r0 == r4:
                            continue
                        m = s = x = 0
                        for i, r in enumerate((r0, r1, r2, r3, r4)):
                            b = 1 << r
                            m |= b
                            s += b
                            x ^= b
                            hand[i] = r * 4 + cnt[r]  # suits by occurrence: no flush
                            cnt[r] += 1
                        for r in (r0, r1, r2, r3, r4):
                            cnt[r] = 0
                        if s == m:
                            hand[0] |= 1  # five ranks, suits 1 0 0 0 0: no flush
                            v = core(p, hand, 5)
                            if v != m:
                                ex[m] = v
                            for i in range(5):
                                hand[i] &= ~3  # all spades: the flush
                            v = core(p, hand, 5)
                            fl[m] = v
                            b = v & ~_ALL
                            bases[b] = bases.get(b, 0) + 1
                            continue
                        k = (s - m + hc * (m ^ x)) % hp
                        v = core(p, hand, 5) ^ m
                        if v & _ALL & ~m:
                            return None  # the kickers are not m without the ranked part
                        if used[k]:
                            if tab[k] != v:
                                return None  # two classes on one slot: the hash is not perfect
                            continue
                        used[k] = 1
                        tab[k] = v
    fb = max(bases, key=lambda b: (bases[b], -b))  # the flush: the base most flushes share
    fl = {m: v for m, v in fl.items() if v != m | fb}
    if len(fl) > _DISTINCT_MAX or len(ex) > _DISTINCT_MAX:
        return None
    out = [1 << (c >> 2) for c in range(53)] + tab + [fb]
    assert len(out) == ev._QX
    for d in (ex, fl):
        q = max(1, len(d))  # a small modular hash: (q, masks by m % q..., scores...)
        while len({m % q for m in d}) < len(d):
            q += 1
        masks, scores = [0] * q, [0] * q
        for m, v in d.items():
            masks[m % q] = m
            scores[m % q] = v
        out += [q] + masks + scores
    return out


def board_module_text(games, raw, n="5"):
    what = "five-card fast-path" if n == "5" else "two-card"
    # The header names the tool where it stood when these files were generated (they are
    # firmware files: a new path would rewrite every table for nothing).
    lines = ["# GENERATED by host_tools/gentables.py from pitboss.rules.evaluator._eval: do not edit.",
             "# The %s table (layout: pitboss/rules/evaluator.py) of %s"
             % (what, ", ".join(games)),
             "# (equal for each: one module), little-endian uint32; named by its SHA-256;",
             "# tests/host/test_tables.py rebuilds it from the core.",
             "T = ("]
    for i in range(0, len(raw), 32):
        lines.append("    %r" % raw[i:i + 32])
    lines.append(")")
    return "\n".join(lines) + "\n"


# ---- the host's tables ------------------------------------------------------------------

def host_sizes(p):
    """Hand sizes the host ships precomputed for a game: its own, and seven for the
    five-card games (best five of seven: showdown, Pai Gow's house way)."""
    sizes = [p.size]
    if p.size == 5 and p.hand == 5:
        sizes.append(7)
    return sizes


def _multisets(n, top=13):
    out = []

    def rec(r, left, acc):
        if left == 0:
            out.append(tuple(acc))
            return
        if r == top:
            return
        for k in range(min(4, left), -1, -1):
            acc.extend([r] * k)
            rec(r + 1, left - k, acc)
            del acc[len(acc) - k:]
    rec(0, n, [])
    return out


def _spread(ranks):
    """Card ids for the ranks with suits spread (least loaded first): no suit reaches a
    flush for n <= 7 (at most two cards a suit)."""
    load = [0, 0, 0, 0]
    ids = []
    for r in ranks:
        used = {c & 3 for c in ids if c >> 2 == r}
        s = min((s for s in range(4) if s not in used), key=lambda s: (load[s], s))
        load[s] += 1
        ids.append(r * 4 + s)
    return ids


def host_table(p, n, core=None):
    """(keys, plain scores, flush scores) for n cards of p: keys[i] (ascending) is the
    rank-multiset key (hand_keys.rank_key) of plain[i]; flush[mask | joker << 13] is the
    score of the suited ranks in mask (and the joker) alone, 0 where fewer than a flush's
    worth."""
    core = core or ev._eval
    keys, plain = array("I"), array("I")
    for jk in ((0, 1) if p.joker else (0,)):
        for ranks in _multisets(n - jk):
            ids = _spread(ranks) + [52] * jk
            keys.append(hand_keys.rank_key(ids))
            plain.append(core(p, ids, n))
    if len(set(keys)) != len(keys):
        raise RuntimeError("hand_keys.W: two rank multisets of %d cards share a key" % n)
    order = sorted(range(len(keys)), key=keys.__getitem__)  # sorted: bisect finds a key
    keys = array("I", [keys[i] for i in order])
    plain = array("I", [plain[i] for i in order])
    flush = array("I", bytes(4 * (1 << 14)))
    need = p.hand - (1 if p.joker else 0)
    if p.flushes:
        for mask in range(1 << 13):
            k = bin(mask).count("1")
            if k < need or k > n:
                continue
            for jk in ((0, 1) if p.joker and k < n else (0,)):
                ids = [r * 4 for r in range(13) if mask >> r & 1] + [52] * jk
                flush[mask | jk << 13] = core(p, ids, len(ids))
    return keys, plain, flush


def host_blob(keys, plain, flush):
    head = array("I", [len(keys)])
    parts = [head, keys, plain, flush]
    if sys.byteorder != "little":
        parts = [array(a.typecode, a) for a in parts]
        for a in parts:
            a.byteswap()
    return zlib.compress(b"".join(a.tobytes() for a in parts), 9)


def host_file(gid, n):
    return HOST / ("%s-%d.bin" % (gid, n))


# ---- command -----------------------------------------------------------------------------

def generate():
    """{path: bytes} of every generated file, rebuilt from the core."""
    out = {}
    for mod, (raw, games) in board_tables().items():
        out[PKG / (mod + ".py")] = board_module_text(games, raw, mod[1]).encode()
    for gid in profiles.GAMES:
        p = profiles.get(gid)
        for n in host_sizes(p):
            out[host_file(gid, n)] = host_blob(*host_table(p, n))
    return out


def same(path, old, new):
    """Equal content (a .bin compares decompressed: zlib builds may differ)."""
    if old is None:
        return False
    if path.suffix == ".bin":
        return zlib.decompress(old) == zlib.decompress(new)
    return old == new


def profile_problems(tables=None):
    """Five-card profiles that do not name the module holding their table (Profile.t5)."""
    want = {}
    for mod, (_raw, games) in (tables or board_tables()).items():
        for gid in games:
            want[(gid, table_attr(int(mod[1])))] = mod
    out = []
    for gid in profiles.GAMES:
        for attr in ("t5", "t2"):
            have = getattr(profiles.get(gid), attr)
            if have != want.get((gid, attr)):
                out.append("profile %s names %s table module %r, its table is %r: set "
                           "%s=%r in pitboss/rules/profiles.py"
                           % (gid, attr, have, want.get((gid, attr)), attr,
                              want.get((gid, attr))))
    return out


def stale_modules(built):
    """t5_*.py files in firmware/pitboss that no game's table is (left by a rule change)."""
    return sorted(p for p in list(PKG.glob("t5_*.py")) + list(PKG.glob("t2_*.py"))
                  if p not in built)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    bad = 0
    built = generate()
    for msg in profile_problems():
        print(msg)
        bad += 1
    for path in stale_modules(built):
        if check:
            print("stale (no game's table): %s" % path.relative_to(REPO))
            bad += 1
        else:
            path.unlink()
            print("removed %s (no game's table)" % path.relative_to(REPO))
    for path, data in built.items():
        old = path.read_bytes() if path.exists() else None
        if same(path, old, data):
            continue
        if check:
            print("differs from a rebuild: %s" % path.relative_to(REPO))
            bad += 1
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            print("wrote %s (%d bytes)" % (path.relative_to(REPO), len(data)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
