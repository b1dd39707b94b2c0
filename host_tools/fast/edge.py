"""`pitboss edge --game G [--paytable KIND=NAME|JSON]... [--house-way W] [--json]`: the
return and house edge of every wager of a configured table, from the firmware's own rule
core (ranked through the host's fast tables, host_tools/fast/hostfast.py) and its own
settlement code (pitboss.games.*), beside the published figure where one is published.

How each figure is computed (and said so in the output, "method"):
- Pair Bonus, All-Six: exact, from the count of every hand of the deck by category
  (host_tools.fast.census.grouped: one hand per class of hands the evaluator cannot tell
  apart, times the class's size).
- Prime: exact, over every colour pattern of the six cards (binomials).
- Three Card Prime Ante and Play under the Q-6-4 strategy (play Q-6-4 or better, the
  game module's sim_decision): exact, every player hand (22,100) against every dealer
  hand of the 49 cards left (18,424 each), counted without dealing them: the dealer
  hands below / equal to / above a score among the 49 cards are the deck's counts less
  those holding one of the player's cards (inclusion-exclusion over the player's three
  cards, each a sorted list searched by bisection). Each player hand is then settled by
  pitboss.games.threecard.settle() for one representative dealer hand per outcome, so
  the money is the firmware's.
- Caribbean Ante and Call (call with ace-king or better) and Pai Gow under a house way
  (both hands set by the house way): sampled (an exact enumeration is not feasible in
  minutes on two cores from Python), each round settled by the firmware, with the 95%
  confidence interval (1.96 standard errors) stated.

Returns and edges are per unit of the wager named (Three Card Prime's Ante and Play:
per unit of Ante, Play included, as the Wizard of Odds states it).
"""
import bisect
import json
import math
import os
import random
import sys
from math import comb

from host_tools import process_pool
from host_tools.fast import hostfast
from host_tools.output import emit

# Published figures: (game, wager, paytable lines) -> (edge in %, decimals, source).
# Only figures whose text we read and whose rules are the ones computed here.
PUBLISHED = (
    ("pa-three-card-prime", "pair_bonus",
     {"mini_royal": 40, "straight_flush": 40, "three_of_a_kind": 30, "straight": 6,
      "flush": 4, "one_pair": 1},
     2.32, 2, "John Grochowski, 'The Three Card Poker problem', Casino City Times, "
     "2017-12-28 (casinocitytimes.com/john-grochowski/article/the-three-card-poker-"
     "problem-66089): Pair Plus 40/30/6/4/1, 'the house edge drops to 2.32%'"),
    ("pa-three-card-prime", "pair_bonus",
     {"mini_royal": 40, "straight_flush": 40, "three_of_a_kind": 30, "straight": 6,
      "flush": 3, "one_pair": 1},
     7.28, 2, "John Grochowski, 'Three Card Poker and Pair Plus', Casino City Times, "
     "2021-07-08 (casinocitytimes.com/john-grochowski/article/three-card-poker-and-pair-"
     "plus-67518): 40/30/6/3/1, 'the common edge today is 7.28 percent'"),
    ("pa-three-card-prime", "pair_bonus",
     {"mini_royal": 50, "straight_flush": 40, "three_of_a_kind": 30, "straight": 6,
      "flush": 3, "one_pair": 1},
     7.10, 2, "John Grochowski, 'Mini Royal Payoffs in Three Card Poker', Tunica Travel "
     "blog, 2017-02 (tunicatravel.com/blog/mini-royal-payoffs-in-three-card-poker/): "
     "mini-royal 50 with 40/30/6/3/1, 'the house edge is reduced to 7.10 percent'"),
    ("pa-three-card-prime", "all_six",
     {"six_card_royal_flush": 1000, "royal_flush": 1000, "straight_flush": 200,
      "four_of_a_kind": 50, "full_house": 25, "flush": 20, "straight": 10,
      "three_of_a_kind": 5},
     10.23, 2, "table-games-online.com, Three Card Poker rules "
     "(table-games-online.com/3-card-poker/rules.html): 6-Card Bonus 1000/200/50/25/20/"
     "10/5, 'It has a house advantage of 10.23%' (the exact figure, also from Brian "
     "Alspach's published six-card counts, is 10.2248%: the page's last digit is off)"),
)


def _published(game, wager, lines):
    for g, w, pl, edge, dec, src in PUBLISHED:
        if g == game and w == wager and pl == lines:
            return {"edge_pct": edge, "decimals": dec, "source": src}
    return None


def _row(wager, ret, method, published=None, ci=None, n=None, note=None):
    edge = -ret * 100
    row = {"wager": wager, "return": ret, "edge_pct": edge, "method": method}
    if ci is not None:
        row["ci95_pct"] = ci * 100
        row["hands"] = n
    if published is not None:
        row["published"] = published
        d = published["decimals"]
        row["agrees"] = round(edge, d) == round(published["edge_pct"], d)
    if note:
        row["note"] = note
    return row


# ---- exact: side wagers from category counts -------------------------------------------

def _category_counts(gid):
    from host_tools.fast.census import grouped
    from pitboss.rules import profiles
    p = profiles.get(gid)
    counts, _ = grouped(p)
    return {p.category(r << 26): n for r, n in counts.items()}, sum(counts.values())


def side_bet(gid, table):
    """Exact return of a wager paid from `table` ({line: (N, D)}) on the category of a
    hand of game gid (a line not on the table loses)."""
    counts, total = _category_counts(gid)
    ret = 0
    for cat, n in counts.items():
        if cat in table:
            num, den = table[cat]
            ret += n * num / den
        else:
            ret -= n
    return ret / total


def prime(table):
    """Exact return of Prime: the player's three cards of one colour (26 red, 26 black),
    all six of one colour paying the higher line; dealer's three from the other 49."""
    three = 2 * comb(26, 3) / comb(52, 3)
    six_given = comb(23, 3) / comb(49, 3)
    hi = table["six_same_colour"][0] / table["six_same_colour"][1]
    lo = table["three_same_colour"][0] / table["three_same_colour"][1]
    return three * (six_given * hi + (1 - six_given) * lo) - (1 - three)


# ---- exact: Three Card Prime Ante and Play ---------------------------------------------

def three_card_prime_ante_play(tables, bad_beat="straight", progress=None, only=None):
    """Exact return per unit of Ante (Play included) under Q-6-4, settled by
    threecard.settle(). See the module docstring for the counting. only: a list of
    player hands (sorted card-id tuples): {hand: its return} instead (tests)."""
    from itertools import combinations
    from pitboss.rules import evaluator
    from pitboss.games import threecard

    p = threecard.profile()
    hands = list(combinations(range(52), 3))
    score = {h: evaluator.score(p, list(h)) for h in hands}
    allsc = sorted(score.values())
    by1 = [[] for _ in range(52)]
    by2 = {}
    for h, s in score.items():
        a, b, c = h
        for x in h:
            by1[x].append(s)
        for pr in ((a, b), (a, c), (b, c)):
            by2.setdefault(pr, []).append(s)
    for lst in by1:
        lst.sort()
    for lst in by2.values():
        lst.sort()

    def below(lst, s):
        return bisect.bisect_left(lst, s)

    def at(lst, s):
        return bisect.bisect_right(lst, s) - bisect.bisect_left(lst, s)

    def disjoint(h, f, s):
        a, b, c = h
        n = f(allsc, s) - f(by1[a], s) - f(by1[b], s) - f(by1[c], s)
        n += f(by2[(a, b)], s) + f(by2[(a, c)], s) + f(by2[(b, c)], s)
        sc = score[h]
        n -= (sc < s) if f is below else (sc == s)
        return n

    q = threecard._thresholds()[0]
    play_at = threecard.play_at()
    bb = threecard.bad_beat_at(bad_beat)
    # The money of each outcome is the firmware's: threecard.settle() on one real deal
    # of that outcome (a dealer hand from the 49 cards, below the qualifier, below,
    # equal to or above the player's), kept per (category, outcome, bad beat or not):
    # those decide Ante and Play alone. An Ante of 1,000,000 units: no rounding shows.
    money = {}

    def settled(h, kind):
        s = score[h]
        key = (p.category(s), kind, s >= bb)
        if key not in money:
            for d in combinations([c for c in range(52) if c not in h], 3):
                ds = score[d]
                if (kind == "nq" and ds < q) or (ds >= q and (
                        (kind == "lt" and ds < s) or (kind == "eq" and ds == s) or
                        (kind == "gt" and ds > s))):
                    r = threecard.settle({"ante": 1000000}, list(h), list(d), True,
                                         tables, bad_beat)["results"]
                    money[key] = (r["ante"]["amount"] + r["play"]["amount"]) / 1e6
                    break
        return money[key]

    total = 0.0
    n_dealer = comb(49, 3)
    each = {}
    for i, h in enumerate(only or hands):
        s = score[h]
        if progress and i % 2000 == 0:
            progress(i, len(hands))
        if s < play_at:
            total -= 1.0  # fold: the Ante lost
            each[h] = -1.0
            continue
        nq = disjoint(h, below, q)  # the dealer does not qualify
        lt = disjoint(h, below, s) - nq if s >= q else 0
        eq = disjoint(h, at, s) if s >= q else 0
        gt = n_dealer - nq - lt - eq
        ev = 0.0
        for n, kind in ((nq, "nq"), (lt, "lt"), (eq, "eq"), (gt, "gt")):
            if n:
                ev += n * settled(h, kind)
        total += ev / n_dealer
        each[h] = ev / n_dealer
    return each if only else total / len(hands)


# ---- sampled: Caribbean, Pai Gow -------------------------------------------------------

def _sample_chunk(job):
    """Worker: (game, kind, seed, n, config) -> (sum, sum of squares, n) of the net per
    unit of the main wager, each round settled by the firmware."""
    game, seed, n, cfg = job
    hostfast.install()
    rnd = random.Random(seed)
    s = s2 = 0.0
    if game == "qc-caribbean":
        from pitboss.rules import evaluator, paytables
        from pitboss.games import caribbean
        tables = paytables.resolve(caribbean.PAYTABLES, cfg.get("paytables"))
        p = caribbean.profile()
        at = caribbean.qualify_at()
        deck = list(range(52))
        for _ in range(n):
            c = rnd.sample(deck, 10)
            pl, dl = c[:5], c[5:]
            called = evaluator.score(p, pl) >= at
            x = caribbean.settle({"ante": 1000}, pl, dl, called, tables)["amount"] / 1000
            s += x
            s2 += x * x
    else:
        from pitboss.rules import evaluator, profiles
        from pitboss.games import houseways, paigow, paigow_rules, paigow_way
        p = profiles.get(game)
        lp = paigow_rules.low()
        way = houseways.way(cfg.get("house_way", "gold-star"))
        deck = list(range(53))
        for _ in range(n):
            c = rnd.sample(deck, 14)
            ph, plo, _ = paigow_way.house_way(p, c[:7], way)
            bh, blo, _ = paigow_way.house_way(p, c[7:], way)
            r = paigow.settle(100, evaluator.score(p, ph), evaluator.score(lp, plo),
                              evaluator.score(p, bh), evaluator.score(lp, blo), False)
            x = r["amount"] / 100
            s += x
            s2 += x * x
    return s, s2, n


def sampled(game, hands, cfg, workers=None, progress=None, seed=1):
    per = 20000
    jobs = [(game, seed * 1000003 + i, min(per, hands - a), cfg)
            for i, a in enumerate(range(0, hands, per))]
    s = s2 = 0.0
    n = 0
    with process_pool(workers or os.cpu_count() or 1, hostfast.install) as pool:
        for i, (a, b, c) in enumerate(pool.imap_unordered(_sample_chunk, jobs)):
            s += a
            s2 += b
            n += c
            if progress:
                progress(i + 1, len(jobs))
    mean = s / n
    var = max(0.0, s2 / n - mean * mean)
    return mean, 1.96 * math.sqrt(var / n), n


# ---- the tool ---------------------------------------------------------------------------

def edge(game, paytable_args=None, house_way=None, hands=None, workers=None,
         progress=None):
    """Every wager's figures for game `game` as configured: {"game", "rows": [...]}."""
    from pitboss import games
    from pitboss.rules import paytables
    g = games.module(game)
    overrides = dict(paytable_args or {})
    tables = paytables.resolve(g.PAYTABLES, overrides)
    rows = []
    names = {k: (overrides.get(k) if isinstance(overrides.get(k), str)
                 else ("own" if k in overrides else paytables.DEFAULTS[k]["name"]))
             for k in g.PAYTABLES}

    def lines(kind):
        return paytables.as_config(tables[kind])

    if game in ("pa-three-card-prime", "pa-all-six"):
        game = "pa-three-card-prime"
        rows.append(_row("pair_bonus", side_bet("pa-three-card-prime", tables["pair_bonus"]),
                         "exact", _published(game, "pair_bonus", lines("pair_bonus"))))
        rows.append(_row("all_six", side_bet("pa-all-six", tables["all_six"]), "exact",
                         _published(game, "all_six", lines("all_six"))))
        rows.append(_row("prime", prime(tables["prime"]), "exact",
                         _published(game, "prime", lines("prime")),
                         note=None if _published(game, "prime", lines("prime")) else
                         "no published figure found for this table"))
        r = three_card_prime_ante_play(tables, "straight", progress)
        rows.append(_row("ante+play (Q-6-4)", r, "exact", None,
                         note="per unit of Ante; Play table %s: no published figure"
                         % names["play"]))
    elif game == "qc-caribbean":
        mean, ci, n = sampled(game, hands or 2000000, {"paytables": overrides}, workers,
                              progress)
        rows.append(_row("ante+call (call with A-K or better)", mean, "sampled", None,
                         ci, n, note="per unit of Ante; no published figure for this "
                         "strategy found"))
    elif game in ("pr-pai-gow", "pr-pai-gow-a5-low"):
        from pitboss.games import houseways
        way = house_way or "gold-star"
        houseways.way(way)  # refused here, not in a worker, if unknown
        mean, ci, n = sampled(game, hands or 200000, {"house_way": way}, workers, progress)
        rows.append(_row("wager (player and banker both by house way %s)" % way, mean,
                         "sampled", None, ci, n, note="5% commission; copies to the "
                         "banker; no published figure for this pairing found"))
    else:
        raise ValueError("edge: game %s has no house wager (showdown games pay the pot)"
                         % game)
    return {"game": game, "paytables": names,
            "house_way": house_way if game.startswith("pr-pai-gow") else None,
            "rows": rows}


def _parse_paytables(items):
    out = {}
    for it in items or ():
        k, sep, v = it.partition("=")
        if not sep:
            raise ValueError("--paytable takes KIND=NAME or KIND=JSON lines, got %r" % it)
        v = v.strip()
        out[k] = json.loads(v) if v.startswith("{") else v
    return out


def cmd_edge(args):
    hostfast.install()
    tty = sys.stderr.isatty()

    def progress(i, n):
        if tty:
            print("\r%d/%d" % (i, n), end="", file=sys.stderr, flush=True)

    out = edge(args.game, _parse_paytables(args.paytable), args.house_way, args.hands,
               args.workers, progress)
    if tty:
        print(file=sys.stderr)
    if args.json:
        emit(out)
        return 0
    print("%s  paytables: %s%s" % (out["game"], ", ".join(
        "%s=%s" % kv for kv in sorted(out["paytables"].items())),
        "  house way: %s" % out["house_way"] if out["house_way"] else ""))
    for r in out["rows"]:
        fig = "%7.4f%%" % r["edge_pct"]
        if "ci95_pct" in r:
            fig += " +/- %.4f%% (95%%, %d hands)" % (r["ci95_pct"], r["hands"])
        pub = ""
        if "published" in r:
            pb = r["published"]
            pub = "  published %.*f%% (%s): %s" % (pb["decimals"], pb["edge_pct"],
                                                   "agrees" if r["agrees"] else "DIFFERS",
                                                   pb["source"])
        print("  %-46s edge %s  [%s]%s%s" % (r["wager"], fig, r["method"], pub,
                                             "  (" + r["note"] + ")" if r.get("note")
                                             else ""))
    return 0
