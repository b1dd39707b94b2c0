"""`pitboss bench`: the evaluator's speed and memory on CPython and on MicroPython, against
treys, eval7 and phevaluator (benchmark-only dependencies: requirements-bench.txt,
requirements-bench-native.txt), every figure with the min and median of several runs and
every target with met / missed.

    pitboss bench [--port P] [--quick] [--json] [--save FILE.json] [--plot FILE.png]
                  [--markdown FILE] [--no-native] [--exact] [--cpython-only | --board-only]

The jobs, one module each:
- host_tools/bench/cpython.py: throughput (public API and peers' fastest core), cold
  start in fresh processes, census with one loop shape and process count for all;
- host_tools/bench/device.py: the board script (host_tools/bench/bench_board.py, also the
  chip's measuring script) on the virtual board, a real board, and the unix port with a
  native emitter (--exact: every five-card hand of every five-card game, native vs
  bytecode, digests compared with the host's); .mpy from host_tools.deploy.mpy_build.build;
- host_tools/bench/report.py: targets, text report, plot, Markdown table.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from host_tools.bench import device as bench_device, report as bench_report
from host_tools.output import emit, say_failed
from host_tools.bench.report import TARGETS, render, plot, markdown, targets  # noqa: F401


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


def run(port=None, quick=False, native=True, cpython=True, board=True, exact=False,
        progress=None):
    """Every figure asked for. progress(msg) hears each stage as it starts (the
    command's prints a line on stderr); by default nothing is said."""
    say = progress or (lambda msg: None)
    if board and port == "pico":
        # Every image the run boots, found (or its FirmwareError naming the fix) before
        # minutes of measuring, not after them.
        from host_tools.bench.image import IMAGES
        from host_tools.emu.pico import find_firmware
        for img in IMAGES:
            find_firmware(img)
    res = {"machine": machine_info(), "quick": quick, "targets": TARGETS}
    with tempfile.TemporaryDirectory(prefix="pitboss-bench-") as tmp:
        work = Path(tmp)
        if cpython:
            from host_tools.bench.cpython import bench_cpython
            say("bench: the evaluators on CPython")
            res["cpython"] = bench_cpython(quick)
        if board and port == "pico":   # the emulated Pico: chip-time figures
            from host_tools.bench import pico as bench_pico
            say("bench: the emulated Pico (minutes)")
            res["pico"] = bench_pico.measure(quick, progress=say)
            # issue 27: the stock image and the pitboss image, side by side, same run
            from host_tools.bench import image as bench_image
            say("bench: the stock and the pitboss image side by side (minutes)")
            res["pico_images"] = bench_image.measure(progress=say)
            # and the WebAssembly board's ratios beside them (the bytecode path, for
            # ports without a native emitter): one run has both (issue 13)
            say("bench: the WebAssembly board")
            res["board"] = bench_device.bench_board("virtual", quick, work)
        elif board:
            say("bench: the board on %s" % port)
            res["board"] = bench_device.bench_board(port, quick, work)
        if native:
            say("bench: native code on the unix port")
            res["native"] = bench_device.bench_native(quick, work, exact=exact)
    res["target_rows"] = [{"target": t, "measured": v,
                           "met": None if quick else ok}
                          for t, v, ok in bench_report.targets(res)]
    return res


def cmd_bench(args):
    from host_tools.outfile import check_out
    for path in (args.save, args.plot, args.markdown):
        why = check_out(path)
        if why:  # said before a run of minutes, not after it
            return say_failed(why, command="bench")
    if args.journal and (args.plot or args.markdown):
        return say_failed("--plot and --markdown draw the evaluator's figures; --journal "
                          "has none (use --json or --save)", command="bench")
    if args.journal:  # flash wear and a card's journal cost (host_tools/bench/journal.py)
        from host_tools.bench import journal as bench_journal
        from host_tools.progress import step
        step("bench: the journal's flash costs")
        res = bench_journal.measure(5 if args.quick else 30)
        texts = [bench_journal.render(res)]
    else:
        from host_tools.progress import step
        res = run(port=args.port, quick=args.quick, native=not args.no_native,
                  cpython=not args.board_only, board=not args.cpython_only,
                  exact=args.exact, progress=step)
        texts = [render(res)]
        if "pico" in res:
            from host_tools.bench import pico as bench_pico
            texts.append(bench_pico.render(res["pico"]))
        if "pico_images" in res:
            from host_tools.bench import image as bench_image
            texts.append(bench_image.render(res["pico_images"]))
    if args.json:  # one JSON document, nothing else on stdout
        emit(res, sort_keys=True)
    else:
        print("\n".join(texts))
    if args.save:
        with open(args.save, "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
    if args.plot:
        why = plot(res, args.plot)
        if why:
            sys.stderr.write("pitboss bench: plot %s\n" % why)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(res))
    return 0


def add_bench_commands(subparsers):
    """`bench` from the command table (host_tools.commands), its handler this module's."""
    from host_tools import commands

    commands.add(subparsers, "bench", func=cmd_bench)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="pitboss")
    sub = ap.add_subparsers(dest="command", required=True)
    add_bench_commands(sub)
    args = ap.parse_args(["bench"] + list(sys.argv[1:] if argv is None else argv))
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
