"""The I/O modules on MicroPython 1.27 (the VM) give exactly the CPython results.

tests/mp/io_check.py runs the shoe decoder on a faulted stream, registers/saves/loads a
deck map, renders the display screens (the VM's built-in framebuf against CPython's
host_tools.emu.framebuf_shim, compared by SHA-256 of the buffers), reads UIDs through the MFRC522 driver
and the simulated chip, and draws from the RNG; both runs must print the same JSON.
"""
import json
import os
import shutil
import subprocess
import sys

from host_tools.emu.vm import run_script

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(HERE)
SCRIPT = os.path.join(HERE, "mp", "io_check.py")


def _result(stdout):
    lines = stdout.splitlines()
    assert lines[-1] == "IO-CHECK-OK", stdout
    return json.loads(lines[0]), lines[1:-1]


def test_io_modules_agree_on_micropython_and_cpython(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(os.path.join(HERE, "support", "fake_mfrc522.py"), lib)
    vm = run_script(SCRIPT, mounts={os.path.join(REPO, "firmware"): "/", lib: "/lib"},
                    args=["/"], timeout=120)
    assert vm.returncode == 0, vm.stderr
    mp, extra = _result(vm.stdout)

    cp_dir = tmp_path / "cpython"
    cp_dir.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(REPO, "firmware"),
                                                        os.path.join(HERE, "support"), REPO]))
    p = subprocess.run([sys.executable, SCRIPT, str(cp_dir)], capture_output=True,
                       text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    cp, _ = _result(p.stdout)

    for part in ("rng", "shoe", "deckmap", "display", "rfid"):
        assert mp[part] == cp[part], part
    # and the results are the intended ones, not just equal
    sh = mp["shoe"]
    assert [e[:2] for e in sh["events"]] == [
        ["dropped", 0xFFFC], ["malformed", -1], ["dropped", 0xFFFE], ["garbage", -1],
        ["malformed", -1], ["bad_crc", -1], ["dropped", 2], ["repeat", 3], ["bad_card", 12],
        ["duplicate", 13]]
    assert len(sh["cards"]) == 20 - 3 and sh["cards"][0] == [sh["deck"][0], 0xFFF8]
    assert [c for c, _ in sh["cards"]] == [c for i, c in enumerate(sh["deck"][:20])
                                           if i not in (3, 5, 9)]
    dm = mp["deckmap"]
    assert dm["deck"] == 1 and dm["dup"][0] == "duplicate_uid"
    assert dm["unknown"] == ["unknown_uid", "unknown RFID tag 01020304 (in no registered deck)"]
    assert dm["corrupt"][0] == "bad_file" and "checksum" in dm["corrupt"][1]
    assert mp["rfid"][:6] == ["deadbeef", None, "01020304050607", None,
                              "0102030405060708090a", None]
    assert mp["rfid"][6] == "collision" and mp["rfid"][7][0] == "crc"
    assert extra == ["noalloc 10"]  # the decoder allocates nothing per byte on MicroPython
