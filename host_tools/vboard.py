"""The virtual board: the MicroPython 1.27 WebAssembly VM behind a pseudo-terminal.

`mpremote connect <port>` and anything else that talks to a serial port works with it.

    python -m host_tools.vboard start [--flash-dir DIR] [--state-dir DIR]
    python -m host_tools.vboard status | stop

Processes: a small Python daemon owns the pty (Node has no pty support) and relays bytes
between it and `node host_tools/vm/bridge.mjs`, which runs the VM's REPL (see bridge.mjs for
the fixes mpremote needs). Killing the daemon's process group is a power cut: the flash dir
keeps every file a finished command wrote.

State dir (default <repo>/.pitboss/virtual, or $PITBOSS_STATE):
    tty -> /dev/pts/N   stable port path to give mpremote
    pid                 daemon pid (also its process group)
    state.json          pid, node_pid, pty, flash_dir
    board.log           daemon + node stderr
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import select
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tty
from pathlib import Path

from .vm.runner import find_node, node_env, repo_root

BRIDGE = Path(__file__).resolve().parent / "vm" / "bridge.mjs"
READY = b">>> "          # end of the banner the bridge prints once the REPL is up
START_TIMEOUT = 30.0


def default_state_dir() -> Path:
    """$PITBOSS_STATE/virtual; else <checkout>/.pitboss/virtual, or for an installed
    package <home>/virtual (~/.pitboss/virtual, beside the key store)."""
    import host_tools
    env = os.environ.get("PITBOSS_STATE")
    if env:
        return Path(env) / "virtual"
    if host_tools.INSTALLED:
        return Path(host_tools.home()) / "virtual"
    return repo_root() / ".pitboss" / "virtual"


class BoardError(RuntimeError):
    """A board (real or virtual) cannot be reached, started or used; the message says why.
    The one class for it: host_tools.boardlink re-exports it."""


# --------------------------------------------------------------------------------------
# status / stop
# --------------------------------------------------------------------------------------
def _alive(pid: int) -> bool:
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
    if not _alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"host_tools.vboard" in f.read()
    except OSError:
        return True


def _read_state(state_dir: Path) -> dict | None:
    try:
        return json.loads((state_dir / "state.json").read_text())
    except (OSError, ValueError):
        return None


def _clear_state(state_dir: Path) -> None:
    for name in ("tty", "pid", "state.json", "ctl.sock"):
        with contextlib.suppress(FileNotFoundError):
            (state_dir / name).unlink()


def status(state_dir: Path | None = None) -> dict:
    """{running, pid, node_pid, port, pty, flash_dir, state_dir}; stale state is removed."""
    state_dir = Path(state_dir or default_state_dir())
    st = _read_state(state_dir)
    if st and _is_daemon(st["pid"]) and _alive(st.get("node_pid") or st["pid"]):
        return {"running": True, "pid": st["pid"], "node_pid": st.get("node_pid"),
                "port": str(state_dir / "tty"), "pty": st.get("pty"),
                "flash_dir": st.get("flash_dir"), "state_dir": str(state_dir),
                "switch": st.get("switch")}
    if st:  # the daemon died without cleaning up (SIGKILL, host crash): stale
        if _is_daemon(st["pid"]):   # daemon alive but node gone: finish the job
            _kill_group(st["pid"], signal.SIGKILL)
        _clear_state(state_dir)
    return {"running": False, "pid": None, "node_pid": None, "port": None, "pty": None,
            "flash_dir": None, "state_dir": str(state_dir)}


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def stop(state_dir: Path | None = None, timeout: float = 5.0) -> bool:
    """Stop the board; True if one was running. SIGTERM lets the bridge flush, then SIGKILL."""
    state_dir = Path(state_dir or default_state_dir())
    st = status(state_dir)
    if not st["running"]:
        return False
    pid = st["pid"]
    _kill_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    _kill_group(pid, signal.SIGKILL)
    _clear_state(state_dir)
    return True


# --------------------------------------------------------------------------------------
# start
# --------------------------------------------------------------------------------------
def start(flash_dir: str | os.PathLike | None = None, state_dir: Path | None = None,
          heap: int | None = None, parent_pid: int | None = None,
          timeout: float = START_TIMEOUT, service: bool = True) -> dict:
    """Start a board in the background and wait until it is up; returns status().

    service: the logic-door service switch held at power-on (pitboss.service). True by
    default because today's host table commands still use the raw REPL (issue 11 moves
    them onto protocol lines), so boards started by tests, the demo and `--port virtual`
    are in service mode; service=False is production (no REPL on the port)."""
    state_dir = Path(state_dir or default_state_dir())
    if status(state_dir)["running"]:
        raise BoardError(f"a virtual board is already running (state {state_dir}); "
                         "stop it first")
    flash = Path(flash_dir) if flash_dir else state_dir / "flash"
    for what, d in (("--flash-dir", flash), ("--state-dir", state_dir)):
        _usable_dir(what, d)
    node_env_ = node_env()  # installs the VM first if it is missing
    find_node()
    cmd = [sys.executable, "-m", "host_tools.vboard", "_serve", "--state-dir", str(state_dir),
           "--flash-dir", str(flash.resolve())]
    if heap:
        cmd += ["--heap", str(heap)]
    cmd += ["--switch", "service" if service else "production"]
    if parent_pid:
        cmd += ["--parent-pid", str(parent_pid)]
    log = open(state_dir / "board.log", "ab")
    env = dict(node_env_, PYTHONPATH=os.pathsep.join(
        [str(repo_root())] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
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
    _kill_group(proc.pid, signal.SIGKILL)
    proc.wait()
    _clear_state(state_dir)
    tail = (state_dir / "board.log").read_text(errors="replace")[-2000:]
    raise BoardError(f"virtual board did not come up within {timeout}s; log:\n{tail}")


def _usable_dir(what: str, d: Path) -> None:
    """Make `d` or say in one line why it cannot be the board's folder (a file, no
    permission, a read-only mount), before anything is started."""
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BoardError("%s %s is not a usable folder: %s" % (what, d, e.strerror or e))
    if not os.access(d, os.R_OK | os.W_OK | os.X_OK):
        raise BoardError("%s %s is not a usable folder: not readable and writable" % (what, d))


def _serve(state_dir: Path, flash_dir: Path, heap: int | None, parent_pid: int | None,
           switch: str = "service") -> int:
    """Daemon body: pty <-> node bridge relay, until node exits or we are told to stop."""
    master, slave = os.openpty()
    # Raw: no echo, no CR/LF translation, no signals from ^C: the bytes are the protocol.
    # We keep our own slave fd open for good, so the master never gets EIO between clients.
    tty.setraw(slave)
    pty_path = os.ttyname(slave)
    ready = state_dir / "bridge.ready"
    with contextlib.suppress(FileNotFoundError):
        ready.unlink()
    cmd = [find_node(), str(BRIDGE), "--flash-dir", str(flash_dir), "--switch", switch,
           "--ready-file", str(ready), "--ctl", str(state_dir / "ctl.sock")]
    if heap:
        cmd += ["--heap", str(heap)]
    node = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    stopping = False

    def on_term(signum, frame):
        nonlocal stopping
        stopping = True
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    # Wait until the bridge says it is up (after boot.py/main.py; in service mode its REPL
    # banner ends in READY) before publishing the port: a client never sees a half-up
    # board. What boot printed is not passed on, as a host connecting later never sees it.
    banner = b""
    deadline = time.monotonic() + START_TIMEOUT
    while not (ready.exists() and (banner.endswith(READY) or
                                   ready.read_text().strip() == "loop")):
        if time.monotonic() > deadline or node.poll() is not None:
            print(f"bridge did not start; got {banner!r}", file=sys.stderr)
            node.kill()
            return 1
        if select.select([node.stdout], [], [], 0.2)[0]:
            banner += os.read(node.stdout.fileno(), 4096)
    print(f"virtual board up: pty {pty_path}, flash {flash_dir}, node pid {node.pid}",
          file=sys.stderr, flush=True)

    link = state_dir / "tty"
    tmp = state_dir / "tty.tmp"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(pty_path, tmp)
    os.replace(tmp, link)
    (state_dir / "pid").write_text(f"{os.getpid()}\n")
    st = {"pid": os.getpid(), "node_pid": node.pid, "pty": pty_path,
          "flash_dir": str(flash_dir), "switch": switch}
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
                    if not data:        # node exited: the board is off
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
            now = time.monotonic()
            if parent_pid and now - last_parent_check > 1.0:
                last_parent_check = now
                if not _alive(parent_pid):   # throw-away board whose owner is gone
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
        cur = _read_state(state_dir)
        if cur and cur.get("pid") == os.getpid():
            _clear_state(state_dir)
        print("virtual board stopped", file=sys.stderr, flush=True)
    return 0


# --------------------------------------------------------------------------------------
# throw-away boards and --port virtual
# --------------------------------------------------------------------------------------
@contextlib.contextmanager
def virtual_board(flash_dir: str | os.PathLike | None = None, heap: int | None = None,
                  service: bool = True):
    """A board of its own for the `with` block (own state dir; flash in a temp dir unless
    flash_dir is given). Yields the status dict: use ["port"] as the serial device."""
    tmp = tempfile.mkdtemp(prefix="pitboss-vboard-")
    state_dir = Path(tmp) / "state"
    try:
        st = start(flash_dir or Path(tmp) / "flash", state_dir=state_dir, heap=heap,
                   parent_pid=os.getpid(), service=service)
        try:
            yield st
        finally:
            stop(state_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def is_virtual(port: str) -> bool:
    """Is this device path a virtual board's (its state dir's `tty` link)?"""
    p = Path(port)
    return p.name == "tty" and (p.parent / "state.json").exists()


@contextlib.contextmanager
def resolve_port(port_arg: str | None):
    """`--port virtual` -> a throw-away virtual board's device path; anything else as is."""
    if port_arg == "virtual":
        # Service mode: a throw-away board is flashed for its one command, and today's
        # host table commands use the raw REPL (issue 11 moves them onto protocol lines).
        with virtual_board(service=True) as st:
            yield st["port"]
    else:
        yield port_arg


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------
def _cmd_start(a) -> int:
    try:
        st = start(a.flash_dir, state_dir=a.state_dir, heap=a.heap,
                   service=not a.production)
    except BoardError as e:
        # One line (the log's tail is in STATE/board.log); exit 2 like every CLI error.
        lines = [ln for ln in str(e).splitlines() if ln.strip()]
        print("pitboss board start: %s" % (lines[0] if lines else e), file=sys.stderr)
        return 2
    print(json.dumps(st))
    return 0


def _cmd_stop(a) -> int:
    was = stop(a.state_dir)
    print(json.dumps({"stopped": was}))
    return 0


def _cmd_status(a) -> int:
    st = status(a.state_dir)
    print(json.dumps(st))
    return 0 if st["running"] else 3


def add_board_commands(subparsers) -> None:
    """Register `board start|stop|status` on an argparse subparsers object.
    Each leaf sets `func(args) -> exit code`."""
    board = subparsers.add_parser("board", help="the virtual board (MicroPython VM on a pty)")
    sub = board.add_subparsers(dest="board_cmd", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--state-dir", type=Path, default=None,
                        help="where tty/pid/log live (default .pitboss/virtual or "
                             "$PITBOSS_STATE/virtual)")
    p = sub.add_parser("start", parents=[common], help="start the virtual board")
    p.add_argument("--flash-dir", default=None,
                   help="host folder holding the board's files (default STATE/flash)")
    p.add_argument("--heap", type=int, default=None, help="initial GC heap in bytes")
    p.add_argument("--production", action="store_true",
                   help="power on with the service switch released: the firmware's main "
                        "loop owns the port, no REPL (default: switch held, service mode, "
                        "which today's host table commands need)")
    p.set_defaults(func=_cmd_start)
    sub.add_parser("stop", parents=[common], help="stop it").set_defaults(func=_cmd_stop)
    sub.add_parser("status", parents=[common],
                   help="print JSON; exit 3 if not running").set_defaults(func=_cmd_status)


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
        a = p.parse_args(argv)
        return _serve(a.state_dir, a.flash_dir, a.heap, a.parent_pid, a.switch)
    p = argparse.ArgumentParser(prog="python -m host_tools.vboard")
    sp = p.add_subparsers(dest="cmd", required=True)
    add_board_commands(sp)
    a = p.parse_args(["board"] + argv)
    return a.func(a)


if __name__ == "__main__":
    sys.exit(main())
