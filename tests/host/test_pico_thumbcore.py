"""The emulated Pico's core in WebAssembly (host_tools/emu/pico/thumbcore.c ->
thumbcore.wasm, fix 8) computes what rp2040js's core computes: random instruction
sequences run on both from the same state, every register, flag, cycle, memory byte,
clock step, peripheral access and alarm compared (tests/support/thumbcore_check.mjs);
and the committed module is what its source builds to, where clang is installed."""
import json
import os
import shutil
import subprocess

import pytest

from host_tools.emu.pico import FirmwareError, find_firmware
from host_tools.emu.vm.runner import ensure_node_modules, find_node, repo_root

HERE = repo_root() / "host_tools" / "emu" / "pico"
CHECK = repo_root() / "tests" / "support" / "thumbcore_check.mjs"


def _bootrom():
    """The B1 bootrom where the Pico finds it (its own routines run in some trials), else
    None: those trials then run from SRAM and flash."""
    try:
        return str(find_firmware()[1])
    except FirmwareError:
        return None


def _check(**env):
    e = dict(os.environ, PITBOSS_NODE_MODULES=str(ensure_node_modules()), **env)
    rom = _bootrom()
    if rom:
        e["PITBOSS_PICO_BOOTROM"] = rom
    p = subprocess.run([find_node(), str(CHECK)], capture_output=True, text=True, env=e,
                       timeout=300)
    lines = p.stdout.strip().splitlines()
    assert lines, p.stderr[-2000:]
    return json.loads(lines[-1]), p.returncode


def test_the_module_runs_as_rp2040js_core():
    got, rc = _check(THUMBCORE_TRIALS="40000")
    assert got["ok"], got["error"]
    assert rc == 0
    assert got["trials"] == 40000
    # the trials reach every kind of exit: the module's batches, rp2040js's core, a
    # peripheral access ending a batch, an alarm inside one, handler mode
    assert got["module"] > 200000 and got["javascript"] > 100000
    assert got["io"] > 10000 and got["alarms"] > 1000 and got["handler"] > 5000


def test_a_wrong_module_is_caught(tmp_path):
    """The check can fail: a module whose ADCS forgets the carry differs from rp2040js."""
    if not (shutil.which("clang") and shutil.which("wasm-ld")):
        pytest.skip("no clang/wasm-ld to build a wrong module (apt-get install -y clang lld)")
    src = (HERE / "thumbcore.c").read_text()
    bad = src.replace("(int64_t)a + flags[2]); break;  // ADCS", "(int64_t)a); break;  // ADCS")
    assert bad != src
    (tmp_path / "thumbcore.c").write_text(bad)
    shutil.copy(HERE / "build_thumbcore.sh", tmp_path)
    subprocess.run(["bash", str(tmp_path / "build_thumbcore.sh"), str(tmp_path / "bad.wasm")],
                   check=True, capture_output=True)
    got, rc = _check(THUMBCORE_TRIALS="20000", THUMBCORE_WASM=str(tmp_path / "bad.wasm"))
    assert not got["ok"] and rc == 1
    assert got["error"].startswith("trial "), got  # a disagreement found, not a crash


def test_the_committed_module_is_its_source_built(tmp_path):
    if not (shutil.which("clang") and shutil.which("wasm-ld")):
        pytest.skip("no clang/wasm-ld (apt-get install -y clang lld): the committed module runs")
    version = subprocess.run(["clang", "--version"], capture_output=True, text=True).stdout
    if "clang version 14." not in version:
        pytest.skip("the module is built with Debian's clang 14, not %s" % version.split("\n")[0])
    out = tmp_path / "thumbcore.wasm"
    subprocess.run(["bash", str(HERE / "build_thumbcore.sh"), str(out)], check=True,
                   capture_output=True)
    assert out.read_bytes() == (HERE / "thumbcore.wasm").read_bytes(), \
        "thumbcore.wasm is not what thumbcore.c builds to: run host_tools/emu/pico/build_thumbcore.sh"
