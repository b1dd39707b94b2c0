"""`pitboss bench`, board part: the board script (host_tools/bench/bench_board.py) run on the
virtual board (the MicroPython 1.27 WebAssembly VM: bytecode, .py and .mpy), on a real
board through mpremote (the firmware as flashed), and on the unix port with a native
emitter where installed (requirements-bench-native.txt: .py, bytecode .mpy, and .mpy
with pitboss/native5 compiled for its arch; plus the all-hands exactness proof). Every
.mpy comes from host_tools.deploy.mpy_build.build(), the one build path `pitboss flash` uses.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import host_tools
from host_tools import output as errors
from host_tools.deploy import mpy_abi, mpy_build

REPO = Path(host_tools.REPO)
FIRMWARE = REPO / "firmware"
BOARD_SCRIPT = Path(__file__).with_name("bench_board.py")
# The board script's first part (the rank digests, also run on CPython by the host).
DIGESTS = Path(__file__).with_name("bench_board_kit.py")
MARK = "PITBOSS-BENCH "
# mpy-cross -march names by the arch number in sys.implementation._mpy >> 10
MPY_ARCH = {i: a for i, a in enumerate(mpy_abi.MPY_ARCHS) if a}
CROSS_BOARDS = ("pico", "esp32_devkitc")  # the native module built for their archs


def _board_config(quick, path=()):
    if quick:
        cfg = {"hands": 40, "reps": 2, "rounds": 1, "paigow_rounds": 2, "paigow_reps": 1,
               "sample": 50}
    else:
        cfg = {"hands": 500, "reps": 400, "rounds": 5, "paigow_rounds": 20,
               "paigow_reps": 5, "sample": 5000}
    cfg["path"] = list(path)
    return cfg


def _script(cfg):
    # The pitboss image keeps littlefs off sys.path (its _boot.py): treys, copied to
    # :/lib for the comparison, is put back on it for this script only.
    return ("import sys\nif '/lib' not in sys.path:\n    sys.path.append('/lib')\n"
            "CONFIG = %r\n" % (cfg,) + DIGESTS.read_text() + BOARD_SCRIPT.read_text())


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
    from host_tools.bench.cpython import peer
    treys, _ = peer("treys")
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


def run_virtual(cfg, firmware_dir, lib_dir, timeout):
    from host_tools.emu.vm import run_script
    mounts = {str(firmware_dir): "/"}
    if lib_dir:
        mounts[str(lib_dir)] = "/lib"
    r = run_script(_script(cfg), mounts=mounts, timeout=timeout)
    res = _parse(r.stdout)
    if res is None:
        raise RuntimeError("board bench printed no result (exit %s):\n%s\n%s"
                           % (r.returncode, r.stdout[-2000:], r.stderr[-3000:]))
    return with_host_samples(res, cfg)


def with_host_samples(res, cfg):
    """res with "sample_host": the sampled hands' digests recomputed on CPython."""
    if res.get("sample"):
        res["sample_host"] = host_sample_digests(cfg["sample"], cfg.get("seed", 2024))
    return res


def host_sample_digests(n, seed):
    """bench_board_kit.sample_five's digests on CPython, over the same hands (plain Python,
    imported here without running), scored by the host's tables (the rule core's own
    scores, host_tools/fast/hostfast.py)."""
    from host_tools.bench import bench_board_kit
    from host_tools.fast import hostfast
    from pitboss.rules import evaluator, profiles
    hostfast.install()
    return {g: r["sha256"] for g, r in
            bench_board_kit.sample_five(evaluator, profiles, n, seed).items()}


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
    return with_host_samples(res, cfg)




def compile_firmware(dest, arch=None, native=True):
    """The firmware as `pitboss flash` builds it (host_tools.deploy.mpy_build.build), into dest:
    bytecode .mpy, and pitboss/native5 for `arch` if given. Returns dest."""
    files = mpy_build.build("virtual", build_root=Path(dest), arch=arch or "", native=native)
    return Path(dest) / "mpy" / "virtual", [f.dest for f in files]


def bench_board(port, quick, work):
    lib = treys_for_micropython(work / "lib")
    timeout = 300 if quick else 1800
    cfg = _board_config(quick)
    out = {"port": port or "virtual"}
    if port and port != "virtual":
        out["as flashed"] = run_port(cfg, port, lib, timeout)
        return out
    out["py"] = run_virtual(cfg, FIRMWARE, lib, timeout)
    mpy, _ = compile_firmware(work / "mpy")
    out["mpy"] = run_virtual(cfg, mpy, lib, timeout)
    return out


def native_micropython():
    """A unix-port micropython with a native emitter: (path, mpy-cross -march) or None."""
    exe = shutil.which("micropython") or shutil.which(
        "micropython", path=os.path.dirname(sys.executable))
    if not exe:
        from host_tools.bench.report import install_hint
        return None, ("n/a: no unix-port `micropython` on PATH (optional, benchmark-only: "
                      "%s)" % install_hint("native"))
    probe = ("import sys, micropython\n@micropython.native\ndef f(x):\n    return x\n"
             "print(sys.implementation._mpy >> 10, f(1))")
    r = subprocess.run([exe, "-c", probe], capture_output=True, text=True, timeout=60)
    try:
        arch = MPY_ARCH[int(r.stdout.split()[0])]
    except (ValueError, IndexError, KeyError):
        return None, "n/a: %s has no native emitter (%s)" % (exe, (r.stdout + r.stderr)[-200:])
    return (exe, arch), None


def bench_native(quick, work, exact=False):
    """The board script on the unix port: from .py (native5 compiled at import), from
    bytecode .mpy without native5 (the bytecode path), and from .mpy with native5 built
    for the port's arch (what a Pico or ESP32 gets). exact: also every five-card hand of
    every five-card game (native vs bytecode, and a digest the host compares)."""
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
        variants = {"py": FIRMWARE,
                    "mpy": compile_firmware(work / "umpy", native=False)[0],
                    "native": compile_firmware(work / "unative", arch=arch)[0]}
        cfg0 = _board_config(quick)
        if not quick:
            cfg0["reps"] = 2000  # ticks are real here, the loops just run faster
        for nm, d in variants.items():
            cfg = dict(cfg0, path=[str(d)] + ([str(lib)] if lib else []))
            if exact and nm == "native":
                cfg["exact"] = True
            script = work / ("unix_%s.py" % nm)
            script.write_text(_script(cfg))
            r = subprocess.run([exe, str(script)], capture_output=True, text=True,
                               timeout=3600, cwd=str(work))
            res = _parse(r.stdout)
            if res is None:
                res = {"error": (r.stdout + r.stderr)[-1500:]}
            out[nm] = with_host_samples(res, cfg)
        if exact and "exact" in out.get("native", {}):
            out["exact_host"] = host_digests(list(out["native"]["exact"]))
    out["cross"] = cross_compile(work / "cross")
    return out


def host_digests(gids):
    """sha256 of every five-card hand's score (same order as bench_board.exact_all_hands)
    on the host: the host's tables (host_tools/fast/hostfast.py, the core's own scores)."""
    import hashlib
    from array import array
    from host_tools.fast import hostfast
    from pitboss.rules import evaluator, profiles
    hostfast.install()
    out = {}
    for gid in gids:
        p = profiles.get(gid)
        dig = hashlib.sha256()
        deck = p.deck
        for a in range(deck):
            for b in range(a + 1, deck):
                for c in range(b + 1, deck):
                    for d in range(c + 1, deck):
                        dig.update(array("I", [evaluator.score(p, (a, b, c, d, e))
                                               for e in range(d + 1, deck)]).tobytes())
        out[gid] = dig.hexdigest()
    return out


def cross_compile(dest):
    """What `pitboss flash` builds for the Pico and the ESP32: native5 for their arch."""
    res = {}
    for board in CROSS_BOARDS:
        try:
            files = mpy_build.build(board, build_root=Path(dest) / board)
        except errors.FlashError as e:
            res[board] = {"ok": False, "errors": str(e)[-300:]}
            continue
        nat = [f for f in files if "native5" in f.dest]
        arch = mpy_build.BOARD_ARCH[board]
        res[board] = {"ok": bool(nat), "arch": arch,
                      "native_bytes": nat[0].local.stat().st_size if nat else 0,
                      "files": len(files)}
    return res
