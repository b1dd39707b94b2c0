"""The script-mode runner really runs MicroPython 1.27 and reports failures."""
import subprocess
import sys

import pytest

from host_tools.emu.vm import VMError, repo_root, run_script
from host_tools.emu.vm.runner import RUN_MJS, find_node


def test_script_runs_and_prints_with_mounts_args_and_stdin(tmp_path):
    pkg = tmp_path / "lib" / "demo"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("VALUE = 42\n")
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "junk.pyc").write_bytes(b"x")
    script = tmp_path / "main.py"
    script.write_text(
        "import sys, os, demo\n"
        "print('value', demo.VALUE, sys.argv[1:])\n"
        "print('pycache', '__pycache__' in os.listdir('/demo'))\n"
        "print('line', sys.stdin.readline().strip())\n")
    r = run_script(script, mounts={tmp_path / "lib": "/"}, args=["a", "b"],
                   stdin="hello\n", check=True)
    assert r.stdout.splitlines() == ["value 42 ['a', 'b']", "pycache False", "line hello"]


def test_uncaught_exception_fails():
    r = run_script("print('before')\nraise ValueError('boom')\n")
    assert r.returncode == 1
    assert r.stdout == "before\n"
    assert "ValueError: boom" in r.stderr
    assert "PITBOSS-VM-EXIT" not in r.stderr  # sentinel stripped by run_script
    with pytest.raises(VMError, match="boom"):
        run_script("raise ValueError('boom')", check=True)


def test_exit_codes_from_node_directly():
    # The bare CLI contract: non-zero exit and a sentinel line last on stderr.
    p = subprocess.run([find_node(), str(RUN_MJS), "-c", "import sys; sys.exit(5)"],
                       capture_output=True, text=True, timeout=60, cwd=repo_root())
    assert p.returncode == 5
    assert p.stderr.splitlines()[-1] == "PITBOSS-VM-EXIT 5"
    p = subprocess.run([find_node(), str(RUN_MJS), "-c", "x = 1"],
                       capture_output=True, text=True, timeout=60, cwd=repo_root())
    assert (p.returncode, p.stderr) == (0, "")


def test_heap_lock_works():
    # Inside a function (locals live on the stack): globals-dict stores could allocate.
    r = run_script(
        "import micropython\n"
        "def probe(a, b):\n"
        "    micropython.heap_lock()\n"
        "    n = a + b\n"                 # small-int arithmetic: no allocation, fine
        "    try:\n"
        "        x = [n] * 8\n"
        "        ok = False\n"
        "    except MemoryError:\n"
        "        ok = True\n"
        "    micropython.heap_unlock()\n"
        "    return ok, n\n"
        "ok, n = probe(1, 2)\n"
        "print('locked-alloc-refused', ok, n)\n", check=True)
    assert r.stdout == "locked-alloc-refused True 3\n"
    # A script that dies with the heap locked still gets its traceback out.
    r = run_script("import micropython\nmicropython.heap_lock()\nx = [1, 2]\n")
    assert r.returncode == 1 and "MemoryError" in r.stderr


def test_reports_micropython_1_27():
    r = run_script("import sys\nprint(sys.implementation.name, sys.implementation.version[:2])\n",
                   check=True)
    assert r.stdout == "micropython (1, 27)\n"
