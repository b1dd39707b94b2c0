"""Where an emulated board's state lives and whether the board runs: its state dir,
status(), stop(), and which ports are emulated boards' (host_tools.emu.vboard starts them).

State dir (default <repo>/.pitboss/<kind>, or $PITBOSS_STATE/<kind>):
    tty -> /dev/pts/N   stable port path to give mpremote
    pid                 daemon pid (also its process group)
    state.json          pid, node_pid, pty, flash_dir, kind
    board.log           daemon + node stderr
    ctl.sock            pico only: the emulator's control socket (host_tools.emu.pico.Control)
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

from host_tools.output import BoardError

from .vm.runner import repo_root

KINDS = ("virtual", "pico")
# `--port virtual` / `--port pico`: a throw-away board of that kind for one command.
THROWAWAY_PORTS = KINDS


def default_state_dir(kind: str = "virtual") -> Path:
    """$PITBOSS_STATE/KIND; else <checkout>/.pitboss/KIND, or for an installed package
    <home>/KIND (~/.pitboss/virtual, beside the key store)."""
    import host_tools
    env = os.environ.get("PITBOSS_STATE")
    if env:
        return Path(env) / kind
    if host_tools.INSTALLED:
        return Path(host_tools.home()) / kind
    return repo_root() / ".pitboss" / kind


def alive(pid: int) -> bool:
    """True if pid runs; a zombie (dead, not yet reaped: e.g. our daemon after SIGKILL when
    the container's init does not reap) counts as dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0]:      # our own child, now reaped
            return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return True     # no /proc (macOS): trust kill(0)


def _is_daemon(pid: int) -> bool:
    """Alive and really our daemon: a stale pid file may name a pid reused by anything."""
    if not alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read()
        # host_tools.vboard: a board started before the host tools were packages by job
        return b"host_tools.emu.vboard" in cmd or b"host_tools.vboard" in cmd
    except OSError:
        return True


def read_state(state_dir: Path) -> dict | None:
    try:
        return json.loads((state_dir / "state.json").read_text())
    except (OSError, ValueError):
        return None


def clear_state(state_dir: Path) -> None:
    for name in ("tty", "pid", "state.json", "ctl.sock"):
        with contextlib.suppress(FileNotFoundError):
            (state_dir / name).unlink()


def status(state_dir: Path | None = None, kind: str = "virtual") -> dict:
    """{running, kind, pid, node_pid, port, pty, flash_dir, state_dir}; stale state is
    removed. A pico's also has `ctl` (its control socket)."""
    state_dir = Path(state_dir or default_state_dir(kind))
    st = read_state(state_dir)
    # The daemon is the board's owner: while it lives the board is running, even in the
    # moment its node is gone (a Pico's watchdog reset, before the daemon has restarted
    # node or written node_pid None; a daemon whose node ended for good exits by itself).
    # Killing it here for a dead node_pid raced with that restart.
    if st and _is_daemon(st["pid"]):
        node = st.get("node_pid")
        out = {"running": True, "kind": st.get("kind", "virtual"), "pid": st["pid"],
               "node_pid": node if node and alive(node) else None,
               "port": str(state_dir / "tty"),
               "pty": st.get("pty"), "flash_dir": st.get("flash_dir"),
               "state_dir": str(state_dir), "switch": st.get("switch")}
        if st.get("resets"):
            out["resets"] = st["resets"]  # watchdog resets the daemon restarted the Pico for
        if st.get("ctl"):
            out["ctl"] = st["ctl"]
        return out
    if st:  # the daemon died without cleaning up (SIGKILL, host crash): stale
        clear_state(state_dir)
    return {"running": False, "kind": None, "pid": None, "node_pid": None, "port": None,
            "pty": None, "flash_dir": None, "state_dir": str(state_dir)}


def kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def stop(state_dir: Path | None = None, timeout: float = 5.0, kind: str = "virtual") -> bool:
    """Stop the board; True if one was running. SIGTERM lets the bridge flush, then SIGKILL."""
    state_dir = Path(state_dir or default_state_dir(kind))
    st = status(state_dir)
    if not st["running"]:
        return False
    pid = st["pid"]
    kill_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive(pid):
        time.sleep(0.05)
    kill_group(pid, signal.SIGKILL)
    clear_state(state_dir)
    return True


def is_virtual(port: str) -> bool:
    """Is this device path an emulated board's (its state dir's `tty` link), of any kind?"""
    p = Path(port)
    return p.name == "tty" and (p.parent / "state.json").exists()


def board_kind(port: str) -> str | None:
    """'virtual' or 'pico' for an emulated board's port, None for anything else."""
    if not is_virtual(port):
        return None
    st = read_state(Path(port).parent) or {}
    return st.get("kind", "virtual")


def state_root():
    """The folder holding every kept board's state dir (one per name)."""
    return default_state_dir("virtual").parent


def name_dir(name):
    """The state dir of the kept board `name` (board start/stop/status --name)."""
    if not name or "/" in name or name in (".", ".."):
        raise BoardError("--name %r: one word, e.g. bench2" % (name,))
    return Path(state_root()) / name
