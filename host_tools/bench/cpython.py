"""`pitboss bench`, CPython part: throughput, cold start and census, pitboss beside its
peers (treys, eval7, phevaluator: requirements-bench.txt; a peer not installed is
reported n/a). Every figure is the min and the median of several runs.

- Throughput (ranks/s) on the same pre-generated hands, rounds interleaved: pitboss's
  public API (score, best, rank) and each peer's public API and fastest core (treys
  `Evaluator._five` / `_seven`, phevaluator's C `_pheval.evaluate_5cards` / `_7cards`;
  eval7's public `evaluate` is its C core). Ratios are per round (pitboss / peer).
- Cold start: a fresh process imports the library and ranks one hand (seconds, timed in
  that process), five and seven cards.
- Census: every five-card hand, each library ranking it once in the same loop shape
  (`map` over itertools.combinations, counted by collections.Counter) on the same number
  of processes.
"""
from __future__ import annotations

import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter

import host_tools
from host_tools import process_pool
from host_tools.fast import hostfast
from pitboss.rules import evaluator, profiles
from pitboss.rules.cards import name

PEERS = ("treys", "eval7", "phevaluator")


def stats(xs):
    """{'min', 'median', 'runs'} of a list of figures."""
    return {"min": min(xs), "median": statistics.median(xs), "runs": len(xs)}


def peer(modname):
    try:
        import warnings
        with warnings.catch_warnings():  # eval7 trips pyparsing's deprecation warnings
            warnings.simplefilter("ignore")
            return __import__(modname), None
    except ImportError as e:
        from host_tools.bench.report import install_hint
        return None, "n/a: %s not installed (%s): %s" % (modname, install_hint("bench"), e)


def version(dist):
    try:
        from importlib.metadata import version as v
        return v(dist)
    except Exception:  # noqa: BLE001
        return None


# ---- implementations: name -> (prepare(hands) -> data, run(data)) ---------------------

def impls(n):
    """Every way in for n-card hands (5 or 7), on pitboss card ids converted once."""
    hostfast.install()
    p = profiles.get("nj-5card")
    out = {}
    score, best, rank = evaluator.score, evaluator.best, evaluator.rank

    def run_score(hs):
        for h in hs:
            score(p, h)
    out["pitboss score"] = (list, run_score)
    if n == 7:
        def run_best(hs):
            for h in hs:
                best(p, h)
        out["pitboss best"] = (list, run_best)
    else:
        def run_rank(hs):
            for h in hs:
                rank(p, h)
        out["pitboss rank"] = (list, run_rank)
    treys, _ = peer("treys")
    if treys:
        ev = treys.Evaluator()
        new = treys.Card.new

        def prep_t(hs):
            return [([new(name(c)) for c in h[:2]], [new(name(c)) for c in h[2:]])
                    for h in hs]

        def run_t(data):
            f = ev.evaluate
            for a, b in data:
                f(a, b)
        out["treys"] = (prep_t, run_t)

        def prep_tc(hs):
            return [[new(name(c)) for c in h] for h in hs]

        def run_tc(data):
            f = ev._five if n == 5 else ev._seven
            for h in data:
                f(h)
        out["treys core"] = (prep_tc, run_tc)
    eval7, _ = peer("eval7")
    if eval7:
        def prep_e(hs):
            return [[eval7.Card(name(c)) for c in h] for h in hs]

        def run_e(data):
            f = eval7.evaluate
            for h in data:
                f(h)
        out["eval7"] = (prep_e, run_e)
    ph, _ = peer("phevaluator")
    if ph:
        from phevaluator import _pheval

        def prep_p(hs):
            return [[ph.Card(name(c)).id_ for c in h] for h in hs]

        def run_p(data):
            f = ph.evaluate_cards
            for h in data:
                f(*h)
        out["phevaluator"] = (prep_p, run_p)

        def run_pc(data):
            f = _pheval.evaluate_5cards if n == 5 else _pheval.evaluate_7cards
            for h in data:
                f(*h)
        out["phevaluator core"] = (prep_p, run_pc)
    return out


def agree(hands5):
    """The harness ranks the same hands: every peer orders them as pitboss does."""
    hostfast.install()
    p = profiles.get("nj-5card")
    ref = [evaluator.score(p, h) for h in hands5]
    res = {}
    for nm in PEERS:
        mod, _ = peer(nm)
        if mod is None:
            continue
        if nm == "treys":
            ev = mod.Evaluator()
            vals = [-ev.evaluate([mod.Card.new(name(c)) for c in h[:2]],
                                 [mod.Card.new(name(c)) for c in h[2:]]) for h in hands5]
        elif nm == "eval7":
            vals = [mod.evaluate([mod.Card(name(c)) for c in h]) for h in hands5]
        else:
            vals = [-mod.evaluate_cards(*[name(c) for c in h]) for h in hands5]
        res[nm] = all((ref[i] > ref[j]) == (vals[i] > vals[j]) and
                      (ref[i] == ref[j]) == (vals[i] == vals[j])
                      for i in range(len(ref)) for j in range(i + 1, min(i + 8, len(ref))))
    return res


def rates(n, hands, rounds):
    """{impl: stats of ranks/s}, {impl: [ranks/s per round]} (rounds interleaved, so a
    ratio is taken round by round)."""
    im = impls(n)
    data = {k: prep(hands) for k, (prep, _) in im.items()}
    per = {k: [] for k in im}
    for _ in range(rounds):
        for k, (_, run) in im.items():
            t = time.perf_counter()
            run(data[k])
            per[k].append(len(hands) / (time.perf_counter() - t))
    return {k: stats(v) for k, v in per.items()}, per


def three_card(hands, rounds):
    """nj-3card: pitboss score vs a plain dict keyed by the sum of per-card keys that
    ranks all 22,100 hands identically (the issue's yardstick: the pre-issue-13 path ran
    at a quarter of it, so >= 1.0x of it is >= 4x that)."""
    hostfast.install()
    p = profiles.get("nj-3card")
    score = evaluator.score
    K = [1 << c for c in range(52)]
    D = {K[a] + K[b] + K[c]: score(p, [a, b, c])
         for a, b, c in itertools.combinations(range(52), 3)}

    def plain(p, cards):
        a, b, c = cards
        return D[K[a] + K[b] + K[c]]
    per = {"pitboss score": [], "plain dict": []}
    for _ in range(rounds):
        for k, f in (("pitboss score", score), ("plain dict", plain)):
            t = time.perf_counter()
            for h in hands:
                f(p, h)
            per[k].append(len(hands) / (time.perf_counter() - t))
    ratio = [a / b for a, b in zip(per["pitboss score"], per["plain dict"])]
    return {k: stats(v) for k, v in per.items()}, stats(ratio)


# ---- cold start -----------------------------------------------------------------------

COLD = {
    "pitboss": (
        "import sys; sys.path.insert(0, {repo!r})\n"
        "t0 = time.perf_counter()\n"
        "from host_tools.fast import hostfast\n"
        "from pitboss.rules import evaluator, profiles\n"
        "hostfast.install()\n"
        "v = evaluator.score(profiles.get('nj-5card'), {ids!r})\n"),
    "pitboss (board path)": (
        "import sys; sys.path.insert(0, {fw!r})\n"
        "t0 = time.perf_counter()\n"
        "from pitboss.rules import evaluator, profiles\n"
        "v = evaluator.score(profiles.get('nj-5card'), {ids!r})\n"),
    "treys": (
        "t0 = time.perf_counter()\n"
        "import treys\n"
        "C = treys.Card.new\n"
        "v = treys.Evaluator().evaluate([C(x) for x in {names!r}[:2]], "
        "[C(x) for x in {names!r}[2:]])\n"),
    "eval7": (
        "import warnings; warnings.simplefilter('ignore')\n"
        "t0 = time.perf_counter()\n"
        "import eval7\n"
        "v = eval7.evaluate([eval7.Card(x) for x in {names!r}])\n"),
    "phevaluator": (
        "t0 = time.perf_counter()\n"
        "import phevaluator\n"
        "v = phevaluator.evaluate_cards(*{names!r})\n"),
}


def cold_start(n, runs):
    """{library: stats of seconds from before the import to after the first rank of an
    n-card hand, in a fresh process}."""
    ids = [48, 44, 33, 21, 6, 17, 2][:n]  # no flush, no straight: a plain high card
    names = [name(c) for c in ids]
    out = {}
    for lib, body in COLD.items():
        if lib in PEERS and peer(lib)[0] is None:
            continue
        code = "import time\n" + body.format(repo=host_tools.REPO, fw=host_tools.FIRMWARE,
                                             ids=ids, names=names) + \
            "print(time.perf_counter() - t0)\n"
        times = []
        for _ in range(runs):
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=120, cwd="/")
            if r.returncode:
                raise RuntimeError("cold start %s: %s" % (lib, r.stderr[-500:]))
            times.append(float(r.stdout.split()[-1]))
        out[lib] = stats(times)
    return out


# ---- census: every five-card hand, same loop shape and processes for all ---------------

def _census_job(args):
    lib, first = args
    f, cards = _census_fn(lib)
    hands = ((cards[first],) + rest for rest in
             itertools.combinations(cards[first + 1:], 4))
    if lib == "phevaluator":
        return Counter(itertools.starmap(f, hands)).total()
    if lib == "pitboss":
        return Counter(map(f, itertools.repeat(profiles.get("nj-5card")), hands)).total()
    return Counter(map(f, hands)).total()


def _census_fn(lib):
    """(rank function, the 52 cards in its form): each library's fastest five-card way."""
    ids = list(range(52))
    if lib == "pitboss":
        hostfast.install()
        hostfast.warm("nj-5card")
        return evaluator.score, ids
    if lib == "treys":
        import treys
        ev = treys.Evaluator()
        return ev._five, [treys.Card.new(name(c)) for c in ids]
    if lib == "eval7":
        import eval7
        return eval7.evaluate, [eval7.Card(name(c)) for c in ids]
    from phevaluator import _pheval
    import phevaluator
    return _pheval.evaluate_5cards, [phevaluator.Card(name(c)).id_ for c in ids]


def census(lib, workers, quick=False):
    """Seconds to rank every five-card hand (a 30-card deck if quick) with `workers`
    processes, and the hand count."""
    firsts = range(26 if quick else 48)
    jobs = [(lib, f) for f in firsts]
    t = time.perf_counter()
    if quick:  # (a 30-card deck: the first cards' hands with the rest of a small deck)
        total = sum(_census_small(lib))
    elif workers > 1:
        with process_pool(workers) as pool:
            total = sum(pool.imap_unordered(_census_job, jobs))
    else:
        total = sum(map(_census_job, jobs))
    return time.perf_counter() - t, total


def _census_small(lib):
    f, cards = _census_fn(lib)
    hands = itertools.combinations(cards[:30], 5)
    if lib == "phevaluator":
        yield Counter(itertools.starmap(f, hands)).total()
    elif lib == "pitboss":
        yield Counter(map(f, itertools.repeat(profiles.get("nj-5card")), hands)).total()
    else:
        yield Counter(map(f, hands)).total()


def bench_census(quick, runs):
    workers = 1 if quick else (os.cpu_count() or 1)
    out = {"workers": workers, "how": "Counter(map(rank, combinations)) per first card, "
           "%d process(es), every library alike" % workers}
    for lib in ("pitboss",) + PEERS:
        if lib in PEERS and peer(lib)[0] is None:
            continue
        secs = []
        hands = 0
        for _ in range(runs):
            s, hands = census(lib, workers, quick)
            secs.append(s)
        out[lib] = dict(stats(secs), hands=hands)
    # the All-Six: 20,358,520 six-card hands through pitboss's own census command
    from host_tools.fast.census import census as game_census
    secs = []
    for _ in range(1 if quick else max(1, runs - 1)):
        t = time.perf_counter()
        c = game_census("pa-all-six", "grouped" if quick else "exhaustive")
        secs.append(time.perf_counter() - t)
    out["pa-all-six"] = dict(stats(secs), hands=c["total"],
                             method="grouped" if quick else "exhaustive")
    return out


# ---- the CPython section -----------------------------------------------------------------

def deal(rng, n, size, deck=52):
    return [rng.sample(range(deck), size) for _ in range(n)]


def bench_cpython(quick):
    rng = random.Random(6)
    n5, n7, n3, rounds, runs = ((2000, 500, 2000, 2, 2) if quick
                                else (100000, 20000, 100000, 7, 5))
    hands5 = deal(rng, n5, 5)
    hands7 = deal(rng, n7, 7)
    hands3 = deal(rng, n3, 3)
    hostfast.install()
    out = {"peers": {m: version(m) for m in PEERS}}
    for m in PEERS:
        if peer(m)[0] is None:
            out.setdefault("missing", {})[m] = peer(m)[1]
    out["agree"] = agree(hands5[:300])
    out["runs"] = {}
    out["five"], out["runs"]["five"] = rates(5, hands5, rounds)
    out["seven"], out["runs"]["seven"] = rates(7, hands7, rounds)
    out["three"], out["three_ratio"] = three_card(hands3, rounds)
    out["cold5"] = cold_start(5, runs)
    out["cold7"] = cold_start(7, runs)
    out["census"] = bench_census(quick, 1 if quick else 3)
    return out


if __name__ == "__main__":
    print(json.dumps(bench_cpython("--quick" in sys.argv), indent=1))
