"""Python side of the script-mode VM runner (host_tools/emu/vm/run.mjs)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence, Union

PKG = "@micropython/micropython-webassembly-pyscript"
RUN_MJS = Path(__file__).with_name("run.mjs")
EXIT_SENTINEL = "PITBOSS-VM-EXIT"
NODE_MODULES_ENV = "PITBOSS_NODE_MODULES"

_install_lock = threading.Lock()


class VMError(RuntimeError):
    """Node/npm missing, install failed, or (with check=True) the script failed."""

    def __init__(self, msg: str, result: "VMResult | None" = None):
        super().__init__(msg)
        self.result = result


@dataclass
class VMResult:
    """Shaped like subprocess.CompletedProcess (args, returncode, stdout, stderr)."""
    args: list
    returncode: int
    stdout: str
    stderr: str

    def check_returncode(self) -> None:
        if self.returncode:
            raise VMError(f"VM script failed (exit {self.returncode}):\n{self.stderr}", self)


def repo_root() -> Path:
    """The tree holding firmware/, boards/ and package.json (host_tools.REPO)."""
    import host_tools
    return Path(host_tools.REPO)


def node_dir() -> Path:
    """The npm project whose node_modules holds the VM: the checkout itself, or
    <home>/node for an installed package (package.json + package-lock.json copied there
    from the package, so `npm ci` installs exactly the pinned VM)."""
    import host_tools
    return Path(host_tools.home()) / ("node" if host_tools.INSTALLED else "")


def _how_to_install(where: Path) -> str:
    return (f"the virtual board needs the MicroPython WebAssembly VM (npm package {PKG}, "
            f"pinned in package-lock.json). With Node.js >= 18 and npm on PATH it is "
            f"installed on first use; to do it yourself: `npm ci` in {where}, or set "
            f"{NODE_MODULES_ENV} to a node_modules folder that holds {PKG}.")


def find_node() -> str:
    node = os.environ.get("PITBOSS_NODE") or shutil.which("node")
    if not node:
        raise VMError("node not found: the virtual board needs Node.js >= 18 on PATH "
                      "(or set PITBOSS_NODE)")
    return node


def ensure_node_modules() -> Path:
    """Return node_modules, running `npm ci` (from package-lock.json) if the VM or the
    Pico emulator (rp2040js) is absent.
    $PITBOSS_NODE_MODULES, if set, names a node_modules to use as it is."""
    env = os.environ.get(NODE_MODULES_ENV)
    if env:
        nm = Path(env)
        if not (nm / PKG / "micropython.mjs").exists():
            raise VMError(f"${NODE_MODULES_ENV}={env} does not hold {PKG}: "
                          + _how_to_install(node_dir()))
        return nm
    root = node_dir()
    nm = root / "node_modules"
    with _install_lock:
        if not (nm / PKG / "micropython.mjs").exists() or \
                not (nm / "rp2040js" / "package.json").exists():
            if root != repo_root():  # installed: the package's pinned manifest, copied out
                root.mkdir(parents=True, exist_ok=True)
                for name in ("package.json", "package-lock.json"):
                    shutil.copyfile(repo_root() / name, root / name)
            npm = shutil.which("npm")
            if not npm:
                raise VMError("npm not found: " + _how_to_install(root))
            cmd = [npm, "ci", "--no-audit", "--no-fund"]
            p = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
            if p.returncode or not (nm / PKG / "micropython.mjs").exists():
                raise VMError(f"`npm ci` failed in {root}:\n{p.stdout}\n{p.stderr}\n"
                              + _how_to_install(root))
    return nm


def node_env() -> dict:
    """The environment for node: run.mjs and bridge.mjs load the VM from
    $PITBOSS_NODE_MODULES (they cannot find it relative to themselves once installed)."""
    return dict(os.environ, **{NODE_MODULES_ENV: str(ensure_node_modules().resolve())})


MountSpec = Union[Mapping[str, str], Iterable[Sequence[str]]]


def _mount_args(mounts: MountSpec | None) -> list[str]:
    if not mounts:
        return []
    pairs = mounts.items() if isinstance(mounts, Mapping) else mounts
    out = []
    for host, vm in pairs:
        out += ["--mount", f"{os.fspath(host)}:{vm}"]
    return out


def run_script(script: Union[str, os.PathLike], mounts: MountSpec | None = None,
               args: Sequence[str] = (), stdin: Union[str, bytes, None] = None,
               timeout: float = 120, heap: int | None = None, check: bool = False,
               ) -> VMResult:
    """Run a MicroPython script in a fresh VM and return its result.

    script: a path to a .py file (str/PathLike that exists), or source text.
    mounts: {host_dir: vm_dir} or [(host_dir, vm_dir)], copied into the VM before the
            script starts, e.g. {"firmware": "/"} gives /main.py and /pitboss/.
    args:   sys.argv[1:]; stdin: text/bytes fed to sys.stdin (default: empty).
    heap:   initial GC heap in bytes (the port grows it on demand; see DEVELOPERS.md).
    check:  raise VMError on a non-zero exit.
    Exit codes: 0 ok, SystemExit's code, 1 uncaught exception, 2 usage, 3 VM failure.
    The sentinel line "PITBOSS-VM-EXIT <code>" that run.mjs puts last on stderr is removed.
    """
    env = node_env()
    cmd = [find_node(), str(RUN_MJS)] + _mount_args(mounts)
    if heap is not None:
        cmd += ["--heap", str(int(heap))]
    is_path = isinstance(script, os.PathLike) or (
        isinstance(script, str) and "\n" not in script and script.endswith(".py")
        and os.path.isfile(script))
    if is_path:
        cmd.append(os.fspath(script))
    else:
        cmd += ["-c", str(script)]
    cmd += [str(a) for a in args]
    data = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
    try:
        p = subprocess.run(cmd, input=data, capture_output=True, timeout=timeout,
                           cwd=repo_root(), env=env)
    except subprocess.TimeoutExpired as e:
        raise VMError(f"VM script timed out after {timeout}s: {cmd}") from e
    err = p.stderr.decode("utf-8", "replace")
    lines = err.splitlines(keepends=True)
    if lines and lines[-1].startswith(EXIT_SENTINEL):
        err = "".join(lines[:-1])
    res = VMResult(cmd, p.returncode, p.stdout.decode("utf-8", "replace"), err)
    if check:
        res.check_returncode()
    return res
