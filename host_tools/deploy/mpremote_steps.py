"""One step on a board: a `python -m mpremote connect PORT ...` subprocess with a timeout,
and the integrity checker's requests it carries (firmware/pitboss/store/integrity.py, sent
as source with every request, so a damaged copy on the board cannot vouch for itself).
`pitboss flash`, `verify` and the pitboss image's deploy talk to the board through here.
"""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading

from host_tools.deploy.mpy_build import REPO, boards_package
from host_tools.output import FlashError, ProductionMode

INTEGRITY_SRC = REPO / "firmware" / "pitboss" / "store" / "integrity.py"
REPORT = "PITBOSS-INTEGRITY "
# Per-step subprocess limits: a board that stops answering fails the flash, it never hangs.
TIMEOUT_QUERY = 60.0
TIMEOUT_COPY_BASE = 60.0
TIMEOUT_COPY_PER_KB = 1.0   # plain raw REPL (no raw-paste) writes ~2 KB/s on slow links


def run(port: str, args: list[str], timeout: float, on_line=None) -> str:
    """Run `python -m mpremote connect PORT ARGS...`; returns stdout, FlashError on failure.
    on_line(line) sees stdout lines as they come (for progress)."""
    cmd = [sys.executable, "-m", "mpremote", "connect", port, *args]
    # A process group of its own: a Ctrl-C at the terminal reaches only this process,
    # which decides whether the step may be cut (flash._finish_first), not mpremote mid-copy.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, errors="replace",
                            process_group=0)
    timed_out = threading.Event()

    def kill():
        timed_out.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    lines = []
    try:
        assert proc.stdout is not None and proc.stderr is not None
        for line in proc.stdout:
            lines.append(line)
            if on_line:
                on_line(line.rstrip("\n"))
        err = proc.stderr.read()
        rc = proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:  # on_line raised: do not leave mpremote holding the port
            proc.kill()
            proc.wait()
    out = "".join(lines)
    if timed_out.is_set():
        raise FlashError("mpremote on %s gave no result within %.0f s (board not answering?)"
                         % (port, timeout))
    if rc != 0 and "could not enter raw repl" in err:
        raise_if_production(port)
    if rc != 0:
        raise FlashError("mpremote on %s failed (exit %d):\n%s%s"
                         % (port, rc, out[-2000:], err[-2000:]))
    return out


def restart_loop(dev: str) -> None:
    from host_tools.link import protolink

    try:
        # 120 s: an emulated Pico under load takes seconds of wall time to boot
        protolink.restart_loop(dev, timeout=120.0)
    except protolink.LinkError:
        pass  # the board went away: nothing to restart


def raise_if_production(port: str) -> None:
    """ProductionMode if the board at `port` answers protocol lines (its main loop runs)."""
    from host_tools.link.protolink import PRODUCTION, PRODUCTION_HINT, LinkError, probe

    try:
        mode = probe(port)
    except LinkError:
        return
    if mode == PRODUCTION:
        raise ProductionMode(PRODUCTION_HINT % port)


def board_code(call: str) -> str:
    # Comment lines dropped: without raw-paste (the virtual board) mpremote sends code at
    # ~25 KB/s, and this goes with every request.
    src = [ln for ln in INTEGRITY_SRC.read_text().splitlines()
           if ln.strip() and not ln.lstrip().startswith("#")]
    return "\n".join(src) + "\n" + call + "\n"


# After commit: the board seals the manifest it just verified against the host's build,
# under its key (pitboss.store.auth.seal_manifest; no key yet: sealed at provisioning).
SEAL_CODE = ("try:\n from pitboss.store import auth\nexcept ImportError:\n auth = None\n"
             "if auth and hasattr(auth, 'seal_manifest'):\n auth.seal_manifest()\n")


def report(out: str) -> dict:
    for line in out.splitlines():
        if line.startswith(REPORT):
            return json.loads(line[len(REPORT):])
    raise FlashError("the board did not answer the integrity request; its output was:\n"
                     + out[-2000:])


def describe(port: str, paths: list[str], timeout: float = TIMEOUT_QUERY) -> dict:
    """{platform, mpy, version, manifest, hashes{path: hex|None}} from the board."""
    out = run(port, ["exec", board_code("describe(%r)" % (sorted(set(paths)),))], timeout)
    return report(out)


def resolve_board(board: str, platform: str) -> str:
    boards = boards_package()

    auto = boards.name_for_platform(platform)
    if board == "auto":
        return auto
    if board not in boards.BOARDS:
        raise FlashError("unknown board %r (known: %s)" % (board, ", ".join(boards.BOARDS)))
    mod = boards.load(board)
    if mod.PLATFORM != platform:
        raise FlashError("board %r is a %s board, but the device runs MicroPython for %r"
                         % (board, mod.PLATFORM, platform))
    return board


def open_port(port):
    """'virtual' -> a throw-away virtual board (host_tools.link.ports), else the port as is."""
    try:
        from host_tools.link.ports import resolve_port
    except ImportError:
        return contextlib.nullcontext(port)
    return resolve_port(port)
