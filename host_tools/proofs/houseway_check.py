"""Run Pai Gow house ways (firmware/pitboss/games/houseways.py) over many hands and count
the fouls (there must be none): every rank pattern of seven cards (the joker counted as
a fifth ace), each dealt in two ways (suits spread; five of one suit where the pattern
allows, so straights and flushes meet every class), and seeded random samples of the
53-card deck. The firmware's own engine ranks them, through the host's fast tables
(hostfast); the work is spread over host_tools.process_pool.

    python -m host_tools.proofs.houseway_check [--hands N] [--workers W] [WAY ...]
"""
import argparse
import os
import random
import sys

from host_tools import process_pool
from host_tools.fast import hostfast
from host_tools.output import emit

PROFILES = ("pr-pai-gow", "pr-pai-gow-a5-low")
# The source of each published way (firmware/pitboss/games/houseways.py WAYS, same order;
# kept here, off the chip's heap; docs/games.md, House ways, has the table).
SOURCES = (
    "Gold Star School of Gaming, House Ways (goldstarschool.com/house-ways/) with the "
    "Trump Plaza two-pair rule (Wizard of Odds, Pai Gow Poker, Appendix 2)",
    "Wizard of Odds, Foxwoods Pai Gow Poker House Way "
    "(wizardofodds.com/games/pai-gow-poker/house-way/foxwoods/)",
    "Gold Star School of Gaming, House Ways, with the two-pair rule of frixo.com, Pai Gow "
    "Poker House Way (frixo.com/sbook/articles/pai-gow-poker-house-way.asp)",
    "Gold Star School of Gaming, House Ways, with the two-pair rule of i-casinobonus.com, "
    "Pai Gow Poker Rules, 'House Way' Rules (i-casinobonus.com/pai-gow-poker-rules/)",
)
# What each pick of a rule puts in front (houseways.py, rule byte 15): for messages here.
PICKS = ("S0 S1", "S1 S2", "P0", "PL", "T0", "T0 S0", "Q", "A A")
_JOKER = 52


def rank_patterns():
    """Every multiset of seven ranks (deuce 0 .. ace 12; at most four of a rank, five of
    the ace where the fifth is the joker), as a tuple of 13 counts."""
    out = []

    def walk(r, left, counts):
        if r < 0:
            if left == 0:
                out.append(tuple(counts))
            return
        top = 5 if r == 12 else 4
        for n in range(min(top, left), -1, -1):
            counts[r] = n
            walk(r - 1, left - n, counts)
        counts[r] = 0

    walk(12, 7, [0] * 13)
    return out


def deal_pattern(counts, flush):
    """Cards for a rank pattern: suits spread (flush False), or as many of the distinct
    ranks as possible in spades (so a flush appears where the pattern allows one)."""
    cards = []
    used = set()
    for r in range(12, -1, -1):
        n = counts[r]
        if r == 12 and n == 5:
            cards.append(_JOKER)
            n = 4
        for i in range(n):
            s = (len(cards) + i) % 4 if not flush else i
            while r * 4 + s in used:
                s = (s + 1) % 4
            used.add(r * 4 + s)
            cards.append(r * 4 + s)
    return cards


def _chunk(job):
    """Worker: (profile, way, kind, a, b) -> [hands, fouls, first fouls]. kind "patterns"
    takes patterns a..b of rank_patterns(); "sample" deals hands a..b of a seeded
    shuffle."""
    from pitboss.rules import profiles
    from pitboss.games import houseways, paigow, paigow_rules, paigow_way

    game, way, kind, a, b = job
    p = profiles.get(game)
    w = houseways.way(way)
    hands = fouls = 0
    bad = []
    if kind == "patterns":
        pats = rank_patterns()[a:b]
        todo = [deal_pattern(c, f) for c in pats for f in (False, True)]
    else:
        rnd = random.Random(a)
        deck = list(range(53))
        todo = (rnd.sample(deck, 7) for _ in range(b - a))
    for cards in todo:
        high, low, rule = paigow_way.house_way(p, cards, w)
        hands += 1
        if paigow_rules.is_foul(p, high, low):
            fouls += 1
            if len(bad) < 5:
                bad.append([cards, rule])
    return [hands, fouls, bad]


def run(ways=None, hands=1000000, workers=None, progress=None, patterns_every=1):
    """For each profile and way: every rank pattern (every `patterns_every`-th chunk of
    them) and `hands` random hands. Returns
    {profile: {way: {"hands": n, "fouls": n, "examples": [...]}}}."""
    from pitboss.games import houseways

    ways = list(ways or houseways._WAYS)
    workers = workers or os.cpu_count() or 1
    npat = len(rank_patterns())
    jobs = []
    step = 2000
    for game in PROFILES:
        for way in ways:
            for a in range(0, npat, step * patterns_every):
                jobs.append((game, way, "patterns", a, min(npat, a + step)))
            per = 25000
            for a in range(0, hands, per):
                # seed = start index + a per-way offset: every chunk a different deal
                jobs.append((game, way, "sample", a + 7919 * ways.index(way),
                             a + 7919 * ways.index(way) + min(per, hands - a)))
    out = {g: {w: {"hands": 0, "fouls": 0, "examples": []} for w in ways} for g in PROFILES}
    hostfast.install()
    done = 0
    with process_pool(workers, hostfast.install) as pool:
        for job, res in zip(jobs, pool.imap(_chunk, jobs)):
            r = out[job[0]][job[1]]
            r["hands"] += res[0]
            r["fouls"] += res[1]
            r["examples"] += res[2][:5 - len(r["examples"])]
            done += 1
            if progress:
                progress(done, len(jobs))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.proofs.houseway_check",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("ways", nargs="*", help="house ways (default: every published one)")
    ap.add_argument("--hands", type=int, default=1000000, help="random hands per profile "
                    "and way (default 1,000,000)")
    ap.add_argument("--workers", type=int, default=None)
    a = ap.parse_args(argv)
    out = run(a.ways, a.hands, a.workers,
              lambda d, n: print("\r%d/%d chunks" % (d, n), end="", file=sys.stderr))
    print(file=sys.stderr)
    emit(out)
    return 1 if any(r["fouls"] for g in out.values() for r in g.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
