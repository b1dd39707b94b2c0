"""Emulated boards behind a pseudo-terminal, of two kinds:

    virtual  the MicroPython 1.27 WebAssembly VM (host_tools/emu/vm/bridge.mjs)
    pico     a Raspberry Pi Pico: stock MicroPython on rp2040js (host_tools/emu/pico/board.mjs)

`mpremote connect <port>` and anything else that talks to a serial port works with either.

    python -m host_tools.emu.vboard start [--kind virtual|pico] [--flash-dir DIR] [--state-dir DIR]
                                      [--uf2 FILE] [--gpio N=0|1]...
    python -m host_tools.emu.vboard status | stop [--kind ...]

Processes: a small Python daemon owns the pty (Node has no pty support) and relays bytes
between it and the Node process (the VM's REPL, or the Pico's USB CDC serial): it is
host_tools/emu/vboard_daemon.py. Killing the daemon's process group is a power cut: the flash
dir keeps every file a finished command wrote (the Pico's flash file keeps every flash
operation that finished).

This module starts boards, gives `--port virtual|pico` a throw-away one and has the
`board` commands; the state dir, status() and stop() are host_tools/emu/vboard_state.py.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import host_tools
from host_tools.output import BoardError, emit
from .vboard_daemon import START_TIMEOUT, serve
from .vboard_state import (KINDS, clear_state, default_state_dir,
                           kill_group, name_dir, status, stop)
from .vm.runner import find_node, node_env, repo_root


# --------------------------------------------------------------------------------------
# start
# --------------------------------------------------------------------------------------
def start(flash_dir: str | os.PathLike | None = None, state_dir: Path | None = None,
          heap: int | None = None, parent_pid: int | None = None,
          timeout: float = START_TIMEOUT, service: bool = True, kind: str = "virtual",
          uf2: str | os.PathLike | None = None, gpio: dict | None = None,
          flash_ms: tuple | None = None) -> dict:
    """Start a board in the background and wait until its REPL (the virtual board) or its
    USB serial (the Pico) is up; returns status(). For the Pico: `uf2` (else
    $PITBOSS_PICO_UF2, else ../shared/firmware/) and `gpio` {pin: level} held from power-on.

    service: the logic-door service switch held at power-on (pitboss.service). True by
    default because today's host table commands still use the raw REPL (issue 11 moves
    them onto protocol lines), so boards started by tests, the demo and `--port virtual`
    are in service mode; service=False is production (no REPL on the port). On the Pico
    the switch is its SERVICE_PIN (boards/pico.py) held low, unless `gpio` sets that pin.
    flash_ms: the Pico's (sector erase, page program) times in ms, interrupts off
    (host_tools/emu/pico/flash.mjs; default 45 and 0.7, the W25Q16JV's typical figures)."""
    if kind not in KINDS:
        raise BoardError(f"no board kind {kind!r} (kinds: {', '.join(KINDS)})")
    state_dir = Path(state_dir or default_state_dir(kind))
    if status(state_dir)["running"]:
        raise BoardError(f"a board is already running (state {state_dir}): stop it first "
                         f"(pitboss board stop --state-dir {state_dir}), or start another "
                         f"with --name")
    extra = []
    if kind == "pico":
        from host_tools.emu.pico import FirmwareError, find_firmware
        try:
            uf2_path, rom, _ = find_firmware(uf2)
        except FirmwareError as e:
            raise BoardError(str(e)) from None
        extra = ["--uf2", str(uf2_path.resolve()), "--bootrom", str(rom.resolve())]
        # The service switch is a pin to GND with a pull-up: held = low at reset.
        from boards import pico as pico_board
        gpio = dict(gpio or {})
        if service:
            gpio.setdefault(pico_board.SERVICE_PIN, 0)
        for pin, level in sorted(gpio.items()):
            extra += ["--gpio", f"{int(pin)}={1 if level else 0}"]
        if flash_ms:
            extra += ["--flash-erase-ms", "%g" % flash_ms[0],
                      "--flash-page-ms", "%g" % flash_ms[1]]
    elif uf2 or gpio or flash_ms:
        raise BoardError("--uf2, --gpio and --flash-ms are for --kind pico")
    flash = Path(flash_dir) if flash_dir else state_dir / "flash"
    for what, d in (("--flash-dir", flash), ("--state-dir", state_dir)):
        _usable_dir(what, d)
    node_env_ = node_env()  # installs the VM first if it is missing
    find_node()
    cmd = [sys.executable, "-m", "host_tools.emu.vboard", "_serve", "--state-dir", str(state_dir),
           "--flash-dir", str(flash.resolve()), "--kind", kind] + extra
    if heap:
        cmd += ["--heap", str(heap)]
    cmd += ["--switch", "service" if service else "production"]
    if parent_pid:
        cmd += ["--parent-pid", str(parent_pid)]
    log = open(state_dir / "board.log", "ab")
    log_start = log.tell()  # this start's lines begin here (the log is appended to)
    env = dict(node_env_, PYTHONPATH=os.pathsep.join(
        [str(repo_root())] + host_tools.checkout_paths()
        + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    # New session: the daemon is its own process group, so stop() and a simulated power cut
    # reach node too, and a Ctrl-C in the caller's terminal does not.
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                            start_new_session=True, cwd=repo_root(), env=env)
    log.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = status(state_dir)
        if st["running"] and st["pid"] == proc.pid and (state_dir / "tty").exists():
            return st
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    exited = proc.poll() is not None
    kill_group(proc.pid, signal.SIGKILL)
    proc.wait()
    clear_state(state_dir)
    log = state_dir / "board.log"
    with open(log, "rb") as f:
        f.seek(log_start)
        tail = f.read().decode(errors="replace")[-4000:]
    when = "did not start" if exited else f"did not come up within {timeout}s"
    raise BoardError(f"{kind} board {when}: {log_cause(tail)} (more in {log})\n{tail}")


def log_cause(text: str) -> str:
    """The line of a board.log that says why the board did not start: the last error
    Node or Python raised (their stack traces around it dropped), else the last line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    noise = ("Node.js v", "at ", "^", "board did not start", "Traceback", "File ")
    for ln in reversed(lines):
        if re.match(r"^([A-Za-z_.]*Error|Exception)\b.*:", ln):
            return ln
    for ln in reversed(lines):
        if not ln.startswith(noise):
            return ln
    return "nothing in its log"


def _usable_dir(what: str, d: Path) -> None:
    """Make `d` or say in one line why it cannot be the board's folder (a file, no
    permission, a read-only mount), before anything is started."""
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BoardError("%s %s is not a usable folder: %s" % (what, d, e.strerror or e))
    if not os.access(d, os.R_OK | os.W_OK | os.X_OK):
        raise BoardError("%s %s is not a usable folder: not readable and writable" % (what, d))

# --------------------------------------------------------------------------------------
# throw-away boards and --port virtual
# --------------------------------------------------------------------------------------
@contextlib.contextmanager
def virtual_board(flash_dir: str | os.PathLike | None = None, heap: int | None = None,
                  service: bool = True, kind: str = "virtual", **kw):
    """A board of its own for the `with` block (own state dir; flash in a temp dir unless
    flash_dir is given). Yields the status dict: use ["port"] as the serial device.
    kind="pico" (see pico_board) takes start()'s uf2= and gpio= too."""
    tmp = tempfile.mkdtemp(prefix=f"pitboss-{kind}-")
    state_dir = Path(tmp) / "state"
    try:
        st = start(flash_dir or Path(tmp) / "flash", state_dir=state_dir, heap=heap,
                   parent_pid=os.getpid(), service=service, kind=kind, **kw)
        try:
            yield st
        finally:
            stop(state_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def pico_board(flash_dir: str | os.PathLike | None = None, **kw):
    """A throw-away emulated Pico for a `with` block (virtual_board(kind="pico"))."""
    return virtual_board(flash_dir, kind="pico", **kw)


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------
def _gpio_levels(specs) -> dict:
    out = {}
    for spec in specs or ():
        pin, _, level = spec.partition("=")
        if not pin.isdigit() or level not in ("0", "1"):
            raise BoardError(f"--gpio {spec!r}: expected PIN=0 or PIN=1")
        out[int(pin)] = int(level)
    return out


def _named(a) -> None:
    if getattr(a, "name", None):
        if a.state_dir is not None:
            raise BoardError("--name and --state-dir both say where the board lives: "
                             "give one")
        a.state_dir = name_dir(a.name)


def _cmd_start(a) -> int:
    _named(a)
    try:
        st = start(a.flash_dir, state_dir=a.state_dir, heap=a.heap,
                   service=not a.production, kind=a.kind, uf2=a.uf2,
                   gpio=_gpio_levels(a.gpio), flash_ms=a.flash_ms)
    except BoardError as e:
        # One line (the log's tail is in STATE/board.log); exit 2 like every CLI error.
        lines = [ln for ln in str(e).splitlines() if ln.strip()]
        print("pitboss board start: %s" % (lines[0] if lines else e), file=sys.stderr)
        return 2
    emit(st)
    return 0


def _cmd_stop(a) -> int:
    _named(a)
    was = stop(a.state_dir, kind=a.kind)
    emit({"stopped": was})
    return 0


def _cmd_log(a) -> int:
    """The last lines of the board's log (the daemon's and the emulator's stderr)."""
    _named(a)
    log = Path(a.state_dir or default_state_dir(a.kind)) / "board.log"
    try:
        lines = log.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        print("pitboss board log: no log at %s (never started there)" % log, file=sys.stderr)
        return 2
    print("\n".join(lines[-a.lines:]))
    return 0


def _cmd_status(a) -> int:
    _named(a)
    st = status(a.state_dir, kind=a.kind)
    emit(st)
    return 0 if st["running"] else 3


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_serve"]:
        p = argparse.ArgumentParser()
        p.add_argument("_serve")
        p.add_argument("--state-dir", type=Path, required=True)
        p.add_argument("--flash-dir", type=Path, required=True)
        p.add_argument("--heap", type=int, default=None)
        p.add_argument("--parent-pid", type=int, default=None)
        p.add_argument("--switch", choices=("service", "production"), default="service")
        p.add_argument("--kind", default="virtual")
        a, pico_args = p.parse_known_args(argv)
        return serve(a.state_dir, a.flash_dir, a.heap, a.parent_pid, a.switch, a.kind,
                     pico_args)
    from host_tools import commands

    p = argparse.ArgumentParser(prog="python -m host_tools.emu.vboard")
    sp = p.add_subparsers(dest="cmd", required=True)
    commands.add(sp, "board")
    a = p.parse_args(["board"] + argv)
    return a.func(a)


if __name__ == "__main__":
    sys.exit(main())
