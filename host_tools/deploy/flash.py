"""Flash the firmware onto a board with mpremote, and verify it by the board's own hashes.

    python -m host_tools flash  --port PORT [--board NAME] [--source]
    python -m host_tools verify --port PORT [--board NAME] [--source]

What lands on the board (what firmware/manifest.py lists; its root mirrors firmware/):
    /main.py               always source: MicroPython only runs main.py, never main.mpy
    /pitboss/**.mpy        firmware/pitboss's layers compiled with mpy-cross (--source:
                           the .py), without the simulation room (pitboss/sim)
    /board.mpy             boards/<board>.py, so the firmware does `import board`
    /manifest.sha256       sha256sum-style list of every file above (pitboss.store.integrity)

A flash (1) asks the board for its platform, its .mpy ABI (sys.implementation._mpy) and
the SHA-256 of the files it holds, (2) builds into build/mpy/<board>/ and refuses if the
board cannot load the result, (3) writes the new manifest marked *pending*, copies only the
files whose hash differs and deletes files of the old firmware, (4) has the board re-hash
everything against the host's build and only then marks the manifest complete. Stopped
anywhere, the board is left with a pending manifest or files that do not match it, so both
`verify` and the firmware's boot check (pitboss.store.integrity.check) report it; it never looks
like a good firmware. Step (1)'s hashes are the board's real files, not its manifest, so a
file corrupted on the board is copied again by the next flash.

The board-side code is firmware/pitboss/store/integrity.py, sent as source with every request, so
a damaged copy on the board cannot vouch for itself. Each step is one
`python -m mpremote connect PORT ...` subprocess with a timeout.

Here: the flash's transaction and the `flash`/`verify` commands. The pieces are their own
modules: the build (host_tools/deploy/mpy_build.py, with the .mpy ABI check in mpy_abi.py), the
plan and manifest (flash_plan.py), each mpremote step (mpremote_steps.py), `verify`
(verify.py), and the pitboss image's deploy (romfs_deploy.py).
"""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from host_tools.deploy import mpremote_steps as steps
from host_tools.deploy.flash_plan import FlashResult, manifest_text, plan
from host_tools.deploy.mpy_abi import abi_name, decode_sys_mpy
from host_tools.deploy.mpy_build import REPO, all_planned, build, build_dir, build_lock
from host_tools.deploy.verify import verify
from host_tools.output import FlashError, emit, one_line, say_failed
from pitboss.store import integrity


def flash(port: str, board: str = "auto", source: bool = False, progress=print,
          root: Path = REPO, image: str = "auto") -> FlashResult:
    """Flash firmware/ (+ boards/<board>.py as /board) to the board at `port` (a serial
    device, or 'virtual' for a throw-away virtual board). Raises FlashError. A board
    with a ROMFS (the pitboss image) gets the build as one ROMFS image instead of files
    (host_tools/deploy/romfs_deploy.py: a real Pico not running the image gets it first).
    image: "auto" (what the board runs: the pitboss image, its release variant with the
    firmware frozen into the core, or a stock image's files), or "pitboss" / "release"
    to install that image first where the Pico runs another.
    progress(str) gets one line per step and per copied file (None: quiet)."""
    progress = progress or (lambda msg: None)
    t0 = time.monotonic()
    # The board first, then the build's lock: a port that is not there fails at once
    # instead of after another flash from this checkout (CI's Pico tier holds the
    # lock through a ~30 s build and copy, and test_cli_errors waited on it).
    guard = None
    interrupted = done = False
    with steps.open_port(port) as dev:
        info = steps.describe(dev, all_planned(board, root))
        # The raw REPL broke into the board's loop: whatever happens next, soft-reset it
        # so the table runs again (the REPL is for the flash only).
        try:
            with build_lock(build_dir(root)):
                name = steps.resolve_board(board, info["platform"])
                abi = decode_sys_mpy(info["mpy"])
                mode = "source" if source else "mpy"
                progress("board: %s (MicroPython %s, %s, loads %s)" % (
                    name, ".".join(map(str, info["version"])), info["platform"], abi_name(*abi)))
                files = build(name, source, abi, build_dir(root), root)
                if info.get("romfs") or image != "auto":
                    # The pitboss image (the code into its ROMFS; the release image: only
                    # the manifest of its core), installed first if asked for.
                    from host_tools.deploy import romfs_deploy

                    return romfs_deploy.deploy(dev, name, mode, files, info, progress, root,
                                               image)
                p = plan(files, info["hashes"], info["manifest"], name, mode, info.get("files"))
                result = FlashResult(name, mode, len(files))
                if p.up_to_date:
                    progress("up to date: %d files match the board" % len(files))
                    result.seconds = time.monotonic() - t0
                    done = True
                    return result

                guard = _finish_first()
                guard.__enter__()
                pending = manifest_text(files, name, mode, integrity.PENDING)
                dirs = sorted({os.path.dirname(f.dest) for f in files} - {"/"})
                args = ["exec", steps.board_code("begin(%r, %r)" % (pending, dirs))]
                for f in p.copy:
                    args += ["+", "fs", "cp", "-f", str(f.local), ":" + f.dest]
                if p.remove:
                    args += ["+", "exec", steps.board_code("remove(%r)" % (p.remove,))]
                total_kb = sum(f.local.stat().st_size for f in p.copy) / 1024
                progress("copying %d of %d files (%.1f KB)%s" % (
                    len(p.copy), len(files), total_kb,
                    ", removing %d stale" % len(p.remove) if p.remove else ""))
                n = [0]

                def on_line(line):
                    if line.startswith("cp "):
                        n[0] += 1
                        progress("  [%d/%d] %s" % (n[0], len(p.copy), line.rsplit(":", 1)[-1]))

                steps.run(dev, args,
                          steps.TIMEOUT_COPY_BASE + steps.TIMEOUT_COPY_PER_KB * total_kb, on_line)
                if n[0] != len(p.copy):
                    raise FlashError("mpremote reported %d of %d copies" % (n[0], len(p.copy)))

                res = steps.report(steps.run(
                    dev, ["exec", steps.board_code("commit(%r)" % (p.final_manifest,))],
                    steps.TIMEOUT_QUERY + steps.TIMEOUT_COPY_PER_KB * total_kb))
                if not res["ok"]:
                    raise FlashError("verification after copying failed; the board's manifest "
                                     "stays pending. Board vs host: %s" % (res["bad"],))
                steps.run(dev, ["exec", steps.SEAL_CODE], steps.TIMEOUT_QUERY)
                interrupted = guard.__exit__(None, None, None)
                result.copied = [f.dest for f in p.copy]
                result.removed = p.remove
                result.seconds = time.monotonic() - t0
                progress("verified: the board's %d files match the build (%.1f s)"
                         % (len(files), result.seconds))
                done = True
        finally:
            if guard is not None:
                guard.__exit__(None, None, None)
            steps.restart_loop(dev)
            if done:
                _tilt_hint(dev, progress)
    if interrupted:
        raise KeyboardInterrupt
    return result


class _finish_first:
    """The flash's transaction (pending manifest, copies, commit, seal) is not cut by a
    first Ctrl-C: a board left half-written boots into a firmware_mismatch tilt (issue
    29), so the flash finishes, says so, and then the command ends as interrupted. A
    second Ctrl-C cuts it anyway (the board's manifest stays pending: flash again).
    Only the main thread can take signals; elsewhere (tests' worker threads) nothing
    changes."""

    def __init__(self):
        self.hit = False
        self._old = None

    def __enter__(self):
        import signal

        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._on_int)
        return self

    def _on_int(self, signum, frame):
        if self.hit:
            sys.stderr.write("pitboss flash: stopped; the board's manifest is pending "
                             "(it tilts firmware_mismatch at boot): flash it again\n")
            raise KeyboardInterrupt
        self.hit = True
        sys.stderr.write("pitboss flash: Ctrl-C: finishing the flash first, so the board "
                         "is not left half-written (Ctrl-C again to stop at once)\n")

    def __exit__(self, *exc):
        import signal

        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
            self._old = None
        return self.hit if exc == (None, None, None) else False


def _tilt_hint(dev, progress):
    """After a flash: a firmware_mismatch tilt raised by the firmware that was there
    before (a flash cut short, a file changed) stays until an operator clears it; say
    so, and how, rather than leave "verified" as the last word (issue 29)."""
    from host_tools.link.protolink import LinkError, ProtocolLink

    try:
        with ProtocolLink(dev) as link:
            link.ready(20)
            codes = [a["code"] for a in link.request("status").get("tilts", ())]
    except (LinkError, OSError, ValueError, AttributeError):
        return
    if "firmware_mismatch" in codes:
        progress("the board still has the firmware_mismatch tilt its last boot raised (the "
                 "files are right now): clear it with `pitboss tilt-clear --port %s "
                 "--operator ID --code firmware_mismatch`" % dev)


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------
def cmd_flash(args) -> int:
    # Errors: one line, exit 2 (as every CLI error); the full mpremote output of a failed
    # step is in the exception for callers of flash().
    try:
        flash(args.port, args.board, args.source, image=args.image)
    except FlashError as e:
        return say_failed(one_line(e), command="flash")
    return 0


def cmd_verify(args) -> int:
    """Exit 0: the board matches; 1: it does not (each problem printed); 2: no answer."""
    try:
        r = verify(args.port, args.board, True if args.source else None,
                   progress=None if args.json else print)
    except FlashError as e:
        return say_failed(one_line(e), command="verify")
    if args.json:
        emit({"ok": r.ok, "board": r.board, "mode": r.mode, "seeded": r.seeded,
              "problems": [list(p) for p in r.problems]})
    return 0 if r.ok else 1
