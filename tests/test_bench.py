"""`pitboss bench --quick`: the harness runs end to end and reports every figure (its
numbers mean nothing at this size; speed is never asserted)."""
import json
import math

import pytest

from host_tools import bench


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    # --no-native: the unix-port micropython is an optional benchmark-only dependency;
    # the native part is checked below only where it is installed.
    res = bench.run(quick=True, native=False)
    return res, out


def test_cpython_figures(quick):
    res, _ = quick
    c = res["cpython"]
    for key in ("five", "seven"):
        assert _num(c[key]["pitboss"]) and c[key]["pitboss"] > 0
        for peer, ratio in c[key + "_ratio"].items():
            assert peer in ("treys", "eval7", "phevaluator")
            assert _num(ratio) and ratio > 0
    assert _num(c["five_rank_validated"]) and _num(c["seven_score_only"])
    # the peers (where installed) order the bench's hands exactly as pitboss does
    assert all(c["agree"].values())
    cen = c["census"]
    for gid in ("nj-5card", "pr-pai-gow", "pa-all-six"):
        assert _num(cen[gid]["seconds"])
    assert cen["nj-5card"]["hands"] == 2598960
    assert cen["pa-all-six"]["hands"] == 20358520


def test_board_figures_on_the_virtual_board(quick):
    res, _ = quick
    b = res["board"]
    assert b["port"] == "virtual"
    for variant in ("py", "mpy"):
        r = b[variant]
        assert r["impl"].startswith("micropython 1.27")
        for key in ("floor_ns", "pitboss_ns", "pitboss_floor_ratio",
                    "pitboss_tables_bytes", "pitboss_tables_all_bytes",
                    "pitboss_bytes_per_rank", "paigow_ms"):
            assert _num(r[key]), (variant, key, r.get(key))
        assert 0 < r["pitboss_tables_bytes"] <= r["pitboss_tables_all_bytes"]
        assert r["pitboss_bytes_per_rank"] == 0
        assert r["heap_lock_ok"] is True  # every game ranked under heap_lock()
        assert r["pitboss_fast_games"]
        if "treys_error" not in r:  # treys run on the same VM
            assert r["treys_agrees"] is True
            assert _num(r["treys_floor_ratio"]) and r["treys_tables_bytes"] > 0


def test_report_json_and_plot(quick, tmp_path):
    res, _ = quick
    text = bench.render(res)
    for needle in ("CPython", "five-card", "seven-card", "census", "Board virtual",
                   "one rank / floor", "tables heap", "heap_lock", "Pai Gow", "Targets"):
        assert needle in text, needle
    json.dumps(res)  # everything is plain data
    assert len(res["target_rows"]) == 9
    png = tmp_path / "bench.png"
    why = bench.plot(res, str(png))
    if why is None:  # matplotlib installed
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cross_compiles_the_evaluator_native(tmp_path):
    for arch, r in bench.cross_compile(tmp_path).items():
        assert r["ok"], (arch, r["errors"])
        assert set(r["bytes"]) == set(bench.EVALUATOR_MODULES)


def test_native_emitter_run_where_installed(tmp_path):
    found, why = bench.native_micropython()
    if found is None:
        pytest.skip(why)
    n = bench.bench_native(True, tmp_path)
    for variant in ("py", "mpy", "native"):
        assert n[variant]["heap_lock_ok"] is True, n[variant]
        assert _num(n[variant]["pitboss_floor_ratio"])


def test_the_cli_parser_takes_the_bench_options():
    import argparse
    ap = argparse.ArgumentParser()
    bench.add_bench_commands(ap.add_subparsers(dest="command"))
    a = ap.parse_args(["bench", "--port", "virtual", "--quick", "--json", "x.json",
                       "--plot", "x.png"])
    assert (a.port, a.quick, a.json, a.plot, a.func) == ("virtual", True, "x.json",
                                                         "x.png", bench.cmd_bench)


def test_a_serial_port_runs_the_same_script_through_mpremote(tmp_path):
    # what `pitboss bench --port /dev/ttyACM0` does (firmware as flashed, treys copied
    # to :/lib), here against the virtual board behind its pty
    import shutil

    from host_tools.vboard import virtual_board
    flash = tmp_path / "flash"
    shutil.copytree(bench.FIRMWARE / "pitboss", flash / "pitboss",
                    ignore=shutil.ignore_patterns("__pycache__"))
    lib = bench.treys_for_micropython(tmp_path / "lib")
    with virtual_board(flash_dir=flash) as st:
        out = bench.run_port(bench._board_config(True), st["port"], lib, 600)
    assert out["heap_lock_ok"] is True and out["pitboss_bytes_per_rank"] == 0
    assert _num(out["pitboss_tables_all_bytes"]) and _num(out["paigow_ms"])
    if lib is not None:
        assert out["treys_agrees"] is True
