"""The evaluator's hot path allocates nothing on MicroPython: it ranks under heap_lock()."""
import os

from host_tools.emu.vm import run_script

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_score_allocates_nothing_on_micropython():
    r = run_script(os.path.join(HERE, "mp", "heap_lock_check.py"),
                   mounts={os.path.join(HERE, "..", "firmware"): "/"}, timeout=120)
    # An uncaught exception in the wasm port may still exit 0: trust only the sentinel.
    assert "HEAPLOCK-OK" in r.stdout, r.stdout + r.stderr
    assert r.returncode == 0
