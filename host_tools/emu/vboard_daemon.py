"""The daemon behind an emulated board: it owns the pty (Node has no pty support) and
relays bytes between it and the Node process (the VM's REPL, or the Pico's USB CDC
serial), restarting a Pico after a watchdog reset. host_tools.emu.vboard starts it as
`python -m host_tools.emu.vboard _serve ...` in a session of its own; killing that process
group is a power cut.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import selectors
import signal
import subprocess
import sys
import time
import tty
from pathlib import Path

from .vboard_state import alive, clear_state, read_state
from .vm.runner import find_node

BRIDGE = Path(__file__).resolve().parent / "vm" / "bridge.mjs"
READY = b">>> "          # end of the banner the bridge prints once the REPL is up
START_TIMEOUT = 30.0


def _node_command(kind: str, state_dir: Path, flash_dir: Path, heap: int | None,
                  pico_args: list[str], switch: str = "service") -> list[str]:
    if kind == "pico":
        from host_tools.emu.pico import BOARD_MJS
        # held.json: the switches the host holds, kept across a watchdog reset's restart
        return [find_node(), str(BOARD_MJS), "--flash", str(flash_dir / "flash.bin"),
                "--ctl", str(state_dir / "ctl.sock"),
                "--held", str(state_dir / "held.json")] + pico_args
    cmd = [find_node(), str(BRIDGE), "--flash-dir", str(flash_dir), "--switch", switch,
           "--ready-file", str(state_dir / "bridge.ready"),
           "--ctl", str(state_dir / "ctl.sock")]  # the shoe's side channel
    if heap:
        cmd += ["--heap", str(heap)]
    return cmd


def _wait_ready(kind: str, node, state_dir: Path) -> bool:
    """The virtual board: its bridge writes bridge.ready once boot.py/main.py ran (in
    service mode its REPL banner ends in READY). The Pico: its control socket says the USB
    serial has enumerated (the banner went out before anyone listened). What boot printed
    is not passed on, as a host connecting later never sees it."""
    deadline = time.monotonic() + START_TIMEOUT
    banner = b""
    ready = state_dir / "bridge.ready"
    while time.monotonic() < deadline and node.poll() is None:
        if kind == "pico":
            from host_tools.emu.pico import Control
            with contextlib.suppress(OSError, ValueError):
                if Control(state_dir / "ctl.sock", timeout=2)("cycles")["boot_ready_ns"]:
                    return True
            time.sleep(0.05)
            continue
        if ready.exists() and (banner.endswith(READY) or
                               ready.read_text().strip() in ("production", "loop")):
            return True
        if select.select([node.stdout], [], [], 0.2)[0]:
            banner += os.read(node.stdout.fileno(), 4096)
    print(f"board did not start; got {banner[-200:]!r}", file=sys.stderr)
    return False


def serve(state_dir: Path, flash_dir: Path, heap: int | None, parent_pid: int | None,
          switch: str = "service", kind: str = "virtual",
          pico_args: list[str] | None = None) -> int:
    """Daemon body: pty <-> node relay, until node exits or we are told to stop."""
    master, slave = os.openpty()
    # Raw: no echo, no CR/LF translation, no signals from ^C: the bytes are the protocol.
    # We keep our own slave fd open for good, so the master never gets EIO between clients.
    tty.setraw(slave)
    pty_path = os.ttyname(slave)
    with contextlib.suppress(FileNotFoundError):
        (state_dir / "bridge.ready").unlink()
    # A new power-on: nothing is held but what --gpio says (held.json is for restarts).
    with contextlib.suppress(FileNotFoundError):
        (state_dir / "held.json").unlink()
    cmd = _node_command(kind, state_dir, flash_dir, heap, pico_args or [], switch)
    node = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    stopping = False

    def on_term(signum, frame):
        nonlocal stopping
        stopping = True
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    # Wait until it is up before publishing the port: a client must never see a half-up board.
    if not _wait_ready(kind, node, state_dir):
        node.kill()
        return 1
    print(f"{kind} board up: pty {pty_path}, flash {flash_dir}, node pid {node.pid}",
          file=sys.stderr, flush=True)

    link = state_dir / "tty"
    tmp = state_dir / "tty.tmp"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(pty_path, tmp)
    os.replace(tmp, link)
    (state_dir / "pid").write_text(f"{os.getpid()}\n")
    st = {"pid": os.getpid(), "node_pid": node.pid, "pty": pty_path,
          "flash_dir": str(flash_dir), "switch": switch, "kind": kind}
    if kind == "pico":
        st["ctl"] = str(state_dir / "ctl.sock")
    (state_dir / "state.json.tmp").write_text(json.dumps(st))
    os.replace(state_dir / "state.json.tmp", state_dir / "state.json")

    to_node = bytearray()      # host -> board
    to_pty = bytearray()       # board -> host
    node_in, node_out = node.stdin.fileno(), node.stdout.fileno()
    for fd in (master, node_in, node_out):
        os.set_blocking(fd, False)
    sel = selectors.DefaultSelector()
    last_parent_check = time.monotonic()
    try:
        while not stopping:
            sel_map = {master: selectors.EVENT_READ if len(to_node) < 65536 else 0,
                       node_out: selectors.EVENT_READ if len(to_pty) < 65536 else 0}
            if to_node:
                sel_map[node_in] = selectors.EVENT_WRITE
            if to_pty:
                sel_map[master] |= selectors.EVENT_WRITE
            for fd, ev in sel_map.items():
                if ev:
                    sel.register(fd, ev)
            try:
                events = sel.select(timeout=0.5)
            finally:
                for fd in list(sel.get_map()):
                    sel.unregister(fd)
            for key, ev in events:
                fd = key.fd
                if fd == master and ev & selectors.EVENT_READ:
                    with contextlib.suppress(BlockingIOError):
                        to_node += os.read(master, 4096)
                if fd == node_out and ev & selectors.EVENT_READ:
                    data = os.read(node_out, 65536)
                    if not data:        # node exited: the board is off (or resets)
                        node.wait()
                        stopping = True
                    to_pty += data
                if fd == node_in and ev & selectors.EVENT_WRITE:
                    try:
                        del to_node[:os.write(node_in, to_node)]
                    except BrokenPipeError:
                        stopping = True
                if fd == master and ev & selectors.EVENT_WRITE:
                    try:
                        del to_pty[:os.write(master, to_pty)]
                    except BlockingIOError:
                        pass
                    except OSError as e:   # should not happen while we hold the slave
                        if e.errno != errno.EIO:
                            raise
                        to_pty.clear()
            if node.poll() is not None:
                stopping = True
                if kind == "pico" and node.returncode in WATCHDOG_EXIT and not _parent_gone(
                        parent_pid):
                    # A watchdog reset: the chip boots again from its flash behind the same
                    # pty (the host's link stays open); bytes sent meanwhile are lost, as
                    # with a real board's USB re-enumerating.
                    reason = WATCHDOG_EXIT[node.returncode]
                    # No node pid while it restarts: status() then asks about the daemon,
                    # which is alive, instead of taking the board for dead.
                    st["node_pid"] = None
                    (state_dir / "state.json.tmp").write_text(json.dumps(st))
                    os.replace(state_dir / "state.json.tmp", state_dir / "state.json")
                    print(f"pico watchdog reset (reason {reason}): restarting", file=sys.stderr,
                          flush=True)
                    args = _without(pico_args or [], "--reset-reason") + [
                        "--reset-reason", str(reason)]
                    node = subprocess.Popen(
                        _node_command(kind, state_dir, flash_dir, heap, args, switch),
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
                    if _wait_ready(kind, node, state_dir):
                        stopping = False
                        to_node.clear()
                        node_in, node_out = node.stdin.fileno(), node.stdout.fileno()
                        for fd in (node_in, node_out):
                            os.set_blocking(fd, False)
                        st["node_pid"] = node.pid
                        st["resets"] = st.get("resets", 0) + 1
                        (state_dir / "state.json.tmp").write_text(json.dumps(st))
                        os.replace(state_dir / "state.json.tmp", state_dir / "state.json")
            now = time.monotonic()
            if parent_pid and now - last_parent_check > 1.0:
                last_parent_check = now
                if not alive(parent_pid):   # throw-away board whose owner is gone
                    stopping = True
    finally:
        if node.poll() is None:
            node.terminate()      # bridge syncs the flash on SIGTERM
            try:
                node.wait(5)
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait()
        # Only remove state that is still ours (a new board may have replaced it).
        cur = read_state(state_dir)
        if cur and cur.get("pid") == os.getpid():
            clear_state(state_dir)
        print(f"{kind} board stopped", file=sys.stderr, flush=True)
    return 0


# board.mjs's exit code for a watchdog reset -> its --reset-reason (the RP2040's watchdog
# REASON: 1 the timer ran out, 2 forced, as machine.reset() does).
WATCHDOG_EXIT = {75: 1, 76: 2}


def _without(args: list[str], flag: str) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == flag:
            skip = True
        else:
            out.append(a)
    return out


def _parent_gone(parent_pid: int | None) -> bool:
    return bool(parent_pid) and not alive(parent_pid)
