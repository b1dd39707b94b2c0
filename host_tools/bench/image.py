"""Issue 27's before/after: the same firmware on the stock MicroPython image, on the
pitboss image (boards/rp2/PITBOSS_PICO: code in ROMFS) and on its release variant (the
firmware frozen into the core), each on an emulated Pico of its own in one run
(`pitboss bench --port pico`, or `python -m host_tools.bench.image`).

Every time is chip time (the emulator's clock at 125 MHz). Per image:
    deploy             `pitboss flash` onto a fresh chip (files copied, or one ROMFS)
    first line         power-on (production) to the first protocol line answered: the
                       `mem` line sent as soon as the USB serial is up; its up_ms
    free / largest     that reply's free heap and largest free block (the app built)
    card ms            a dealt card: the last byte of its frame's first send on UART1
                       to its acknowledgement, resends included (the emulator's
                       acknowledging shoe, 100 ms resend time), every card of a six-seat
                       Pai Gow round; median / p99 / max
    round / settle     that round from its first line to its settlement's reply, and the
                       settle line alone (the emulator's clock from its sending to its
                       reply read)
    import / app       over the raw REPL after a soft reset with gc.threshold(-1) (the
                       threshold survives a soft reset on rp2: DEVELOPERS.md): heap held
                       by `import pitboss.app`, import and App() chip time, a collection
                       with the app built, free heap and largest block then
"""
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from host_tools.deploy import flash as flashing
from host_tools.emu.pico import PITBOSS, RELEASE, STOCK, control_for
from host_tools.emu.vboard import start
from host_tools.emu.vboard_state import stop
from host_tools.link.boardlink import Board
from host_tools.link.protolink import LinkError, ProtocolLink
from host_tools.output import BoardError
from host_tools.table.auth import KeyStore
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round
from host_tools.table.targets import PicoTarget

# The stock image, the pitboss image (code in ROMFS) and its release variant (the
# firmware frozen into the core: host_tools/deploy/release.py), each from a fresh Pico.
IMAGES = (STOCK, PITBOSS, RELEASE)
GAME, SEATS, SEED = "pr-pai-gow", 6, 27
BOARD_ID = "bench-image"

_HEAP = """
import gc, json, time
gc.threshold(-1)
gc.collect()
a0 = gc.mem_alloc()
t0 = time.ticks_us()
import pitboss.app as A
t1 = time.ticks_us()
gc.collect()
a1 = gc.mem_alloc()
r = {"held": a1 - a0, "import_ms": (t1 - t0) / 1000}
try:
    t2 = time.ticks_us()
    app = A.app()
    t3 = time.ticks_us()
    gc.collect()
    t4 = time.ticks_us()
    gc.collect()
    t5 = time.ticks_us()
    from pitboss.verbs import board as VB
    m = VB.mem(app.ctl, [])
    r.update({"app_ms": (t3 - t2) / 1000, "gc_ms": (t5 - t4) / 1000, "free": m["free"],
              "max_block": m["max_block"]})
except MemoryError as e:  # the import's figures still stand (the stock image: render())
    app = None
    gc.collect()
    r["app_error"] = "App() over the REPL: MemoryError %s (%d B free after it)" % (
        e, gc.mem_free())
print(json.dumps(r))
"""


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def _first_line(link, out):
    """The first `mem` line after power-on: reset -> first line answered, the heap then."""
    m = link.request("mem", timeout=900)
    out["first_line_ms"] = m["up_ms"]
    out["boot_free"], out["boot_max_block"] = m["free"], m["max_block"]
    out["boot_ms"] = m.get("boot_ms")


def _settle_in(ctl, link, out, chip_s=1.0):
    """Let the board idle `chip_s` of chip time after its first line, as a table powered
    on before its first round does: the idle passes hash the core (the boot defers it,
    pitboss_program.step: ~0.37 s) and check the journal. Recorded: the chip time idled,
    and whether the core was checked by then (a verb that moves the round would wait for
    the rest, and the round's figures would carry it)."""
    n0 = ctl.cycles()["ns"]
    while ctl.cycles()["ns"] - n0 < chip_s * 1e9:
        time.sleep(0.05)
    m = link.request("mem", timeout=300)
    out["idle_before_round_s"] = chip_s
    out["program_pending_then"] = m.get("program_pending")


def _repl_heap(flash_dir, state, image):
    """_HEAP over the raw REPL of the board powered on in service mode, after a soft
    reset: Board() breaks into the running loop, whose app is still imported."""
    st = start(flash_dir, state_dir=state, kind="pico", parent_pid=os.getpid(), uf2=image)
    try:
        # The boot replays the journal before its loop answers and turns Ctrl-C on: wait
        # for the loop, so mpremote's Ctrl-C lands in it (a loaded machine, 2026-12-03:
        # the stock image's Board() came too early, "could not enter raw repl").
        with ProtocolLink(st["port"]) as link:
            link.ready(900)
        b = Board(st["port"])
        try:
            b._t.enter_raw_repl(soft_reset=True, timeout_overall=b.timeout)
            return json.loads(b.exec(_HEAP).strip().splitlines()[-1])
        finally:
            b.close()
    finally:
        stop(state)


def measure_image(image, base: Path, progress=print) -> dict:
    """The figures of the module's doc for one image ("stock", "pitboss" or a UF2)."""
    out = {"image": image}
    keys = KeyStore(str(base / "keys"))
    state, flash_dir = base / "state", base / "flash"
    # 1. deploy, in service mode, and provision
    st = start(flash_dir, state_dir=state, kind="pico", parent_pid=os.getpid(), uf2=image)
    try:
        ctl = control_for(st["port"])
        n0, t0 = ctl.cycles()["ns"], time.monotonic()
        res = flashing.flash(st["port"], progress=None)
        out["deploy"] = {"chip_s": (ctl.cycles()["ns"] - n0) / 1e9,
                         "wall_s": time.monotonic() - t0, "copied": len(res.copied)}
        b = Board(st["port"])
        try:
            Configurator(PicoTarget(b), BOARD_ID, keys).provision()
        finally:
            b.close()
    finally:
        stop(state)
    progress("pico %s: deployed" % image)
    # 2. power-on in production: first line, heap, a Pai Gow round through UART1
    st = start(flash_dir, state_dir=state, kind="pico", parent_pid=os.getpid(), uf2=image,
               service=False)
    try:
        ctl = control_for(st["port"])
        with ProtocolLink(st["port"]) as link:
            _first_line(link, out)
            _settle_in(ctl, link, out)
            r = link.request(keys.sign(BOARD_ID, 'config {"game":"%s","seats":%d}'
                                       % (GAME, SEATS)), timeout=300)
            assert r.get("ok"), r
            before, frames, after = plan_round(GAME, SEATS, SEED)
            c = ctl.cycles()
            n0, k0 = c["ns"], c["cycles"]
            ctl("lines")  # from here: each line's chip time, newline in to reply out
            for ln in before:
                r = link.request(ln, timeout=300)
                assert r.get("ok"), (ln, r)
            cards = len(frames) // 12
            lat0 = len(ctl("shoe_state", id=1)["latency_ns"])
            ctl("shoe", id=1, hex=bytes(frames).hex(), wait=False)
            got = link.wait_events(cards, timeout=120 + 10 * cards)
            assert all(g.get("ok") for g in got), got[-1:]
            shoe = ctl("shoe_state", id=1)
            for ln in after[:-1]:
                r = link.request(ln, timeout=300)
                assert r.get("ok"), (ln, r)
            # The settle line alone: the emulator's clock from before the line is sent to
            # after its reply is read (the control socket does not touch the chip). Until
            # 2026-12-03 this was the difference of two `mem` lines' up_ms around it,
            # which counted the first `mem`'s own collection and largest-block search
            # (~770 ms of the 1,090 then reported; profiled on the chip: the line took
            # 322 ms).
            ns0 = ctl.cycles()["ns"]
            s = link.request(after[-1], timeout=300)
            c = ctl.cycles()
            n1, k1 = c["ns"], c["cycles"]
            assert s.get("ok"), s
            m1 = link.request("mem", timeout=300)
            lat = [x / 1e6 for x in shoe["latency_ns"][lat0:]]
            out["card_ms"] = {"n": len(lat), "median": statistics.median(lat),
                              "p99": percentile(lat, 99), "max": max(lat),
                              "resends": shoe["resends"]}
            out["round_ms"] = (n1 - n0) / 1e6
            out["settle_ms"] = (n1 - ns0) / 1e6
            # Every cycle the core executed over the round (an idle core waits in WFE,
            # which counts none): the lines and cards, and what runs between them, as the
            # collections after replies and acknowledgements, the idle passes' journal
            # and program checks, and the loop's polling.
            out["round_busy_ms"] = (k1 - k0) / 125e3
            # What the chip spent on the round: each line from its newline to its reply
            # (the emulator times it, usbcdc.mjs) and each card from its frame to its
            # acknowledgement. The clock across the round (round_ms) also runs while the
            # host reads a reply and writes the next line, and while the shoe's frames
            # cross the 9600-baud line (~23 ms a card), which a real table's host and
            # shoe take too, but which is not the chip's work.
            n = len(before) + len(after)
            lines = [x / 1e6 for x in ctl("lines")["ns"]][:n]  # (then the mem line)
            if len(lines) == n:
                out["round_chip_ms"] = sum(lines) + sum(lat)
                out["settle_chip_ms"] = lines[-1]
                out["line_chip_ms"] = {"n": len(lines), "median": statistics.median(lines),
                                       "max": max(lines)}
            out["min_free"] = m1["min_free"]
            out["flash_ops"] = ctl("flash")
    finally:
        stop(state)
    progress("pico %s: booted, Pai Gow round dealt" % image)
    # 3. service mode, raw REPL after a soft reset, gc.threshold(-1): the app's heap. A
    # table that cannot start there (the stock image after a six-seat Pai Gow round: no
    # block for its settlement's record, 2026-12-06) is a figure of its own, not the end
    # of the run: the other images are still measured.
    try:
        out["repl"] = _repl_heap(flash_dir, state, image)
        progress("pico %s: heap figures" % image)
    except (LinkError, BoardError) as e:
        out["repl"] = {"error": str(e).splitlines()[0][:300]}
        progress("pico %s: no heap figures: %s" % (image, out["repl"]["error"]))
    return out


def measure(progress=print, images=IMAGES) -> dict:
    base = Path(tempfile.mkdtemp(prefix="pitboss-bench-image-"))
    return {img: measure_image(img, base / str(i), progress) for i, img in enumerate(images)}


ROWS = (
    ("deploy the firmware (s chip)", lambda r: r["deploy"]["chip_s"], "%.1f"),
    ("deploy the firmware (s wall)", lambda r: r["deploy"]["wall_s"], "%.1f"),
    ("power-on to the first line answered (ms)", lambda r: r["first_line_ms"], "%d"),
    ("free heap after boot (B)", lambda r: r["boot_free"], "%d"),
    ("largest free block after boot (B)", lambda r: r["boot_max_block"], "%d"),
    ("heap held by import pitboss.app (B)", lambda r: r["repl"]["held"], "%d"),
    ("import pitboss.app (ms)", lambda r: r["repl"]["import_ms"], "%.1f"),
    ("App() built (ms)", lambda r: r["repl"]["app_ms"], "%.1f"),
    ("gc.collect() with the app built (ms)", lambda r: r["repl"]["gc_ms"], "%.1f"),
    ("free heap / largest block, app built over the REPL (B)",
     lambda r: "%d / %d" % (r["repl"]["free"], r["repl"]["max_block"]), "%s"),
    ("a card, frame to ack, median (ms)", lambda r: r["card_ms"]["median"], "%.2f"),
    ("a card, frame to ack, p99 (ms)", lambda r: r["card_ms"]["p99"], "%.2f"),
    ("a card, frame to ack, max (ms)", lambda r: r["card_ms"]["max"], "%.2f"),
    ("resends in the round's deal", lambda r: r["card_ms"]["resends"], "%d"),
    ("Pai Gow round, 6 seats, first line to settled, the host's pauses included (ms)",
     lambda r: r["round_ms"], "%.0f"),
    ("its settlement, the settle line sent to its reply read (ms)",
     lambda r: r["settle_ms"], "%d"),
    ("Pai Gow round: the chip's time on its lines and cards (ms)",
     lambda r: r["round_chip_ms"], "%.0f"),
    ("Pai Gow round: every cycle the core ran over it, between lines included (ms)",
     lambda r: r["round_busy_ms"], "%.0f"),
    ("its settlement: the settle line's newline to its reply (ms)",
     lambda r: r["settle_chip_ms"], "%.1f"),
    ("its lines, newline to reply, median (ms)",
     lambda r: r["line_chip_ms"]["median"], "%.1f"),
    ("lowest free heap seen (B)", lambda r: r["min_free"], "%d"),
)


# Issue 27's budget for a row, where it sets one (chip time; heap in bytes).
BUDGETS = {
    "power-on to the first line answered (ms)": "<= 400",
    "free heap after boot (B)": ">= 184320",
    "largest free block after boot (B)": ">= 65536",
    "a card, frame to ack, median (ms)": "<= 2",
    "a card, frame to ack, p99 (ms)": "<= 5",
    "a card, frame to ack, max (ms)": "<= 15",
    "Pai Gow round: the chip's time on its lines and cards (ms)": "<= 500",
    "its settlement: the settle line's newline to its reply (ms)": "<= 50",
    "lowest free heap seen (B)": ">= 153600",
}


def render(res) -> str:
    """The before/after table: each image's figures, each against the first (the stock
    image: "x stock"), and issue 27's budget where it sets one."""
    imgs = list(res)
    head = "| figure (chip time at 125 MHz unless said) | " + " | ".join(
        "%s image" % i for i in imgs) + "".join(
        " | %s / %s" % (i, imgs[0]) for i in imgs[1:]) + " | budget |"
    L = ["", "Emulated Pico: %s, one run (issue 27)" % ", ".join(imgs), "",
         head, "|" + "---|" * (2 * len(imgs) + 1)]
    for name, get, fmt in ROWS:
        vals = []
        for i in imgs:
            try:
                vals.append(get(res[i]))
            except (KeyError, TypeError):
                vals.append(None)
        cells = ["-" if v is None else fmt % v for v in vals]
        ratios = []
        for v in vals[1:]:
            ok = all(isinstance(x, (int, float)) for x in (vals[0], v)) and vals[0]
            ratios.append("%.2fx" % (v / vals[0]) if ok else "")
        L.append("| %s | %s |%s %s |" % (name, " | ".join(cells),
                                        "".join(" %s |" % r for r in ratios),
                                        BUDGETS.get(name, "")))
    # Why a REPL figure is "-": the step's own error, under the table.
    notes = []
    for i in imgs:
        rp = res[i].get("repl") or {}
        why = rp.get("error") or rp.get("app_error")
        if why:
            notes.append("- %s image: %s" % (i, why))
    if notes:
        L += [""] + notes
    return "\n".join(L)


if __name__ == "__main__":
    import sys

    # (The release image, which --frozen UF2 measured here before it could run a table,
    # is now one of IMAGES.)
    if sys.argv[1:2] == ["--repl"]:  # --repl IMAGE FLASH_DIR: the REPL figures alone
        base = Path(tempfile.mkdtemp(prefix="pitboss-bench-repl-"))
        print(json.dumps(_repl_heap(Path(sys.argv[3]), base / "state", sys.argv[2])))
    else:
        r = measure()
        print(render(r))
        print(json.dumps(r, default=str))
