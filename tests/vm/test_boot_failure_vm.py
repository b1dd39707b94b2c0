"""A table that could not start says where (pitboss.loop._where), on the MicroPython 1.27
VM: the boot_failed reply of pitboss.loop's _Down carries the innermost frame of the
exception, so a MemoryError at a board's boot names the line that allocated."""
import os

from host_tools.emu.vm import run_script

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = '''
from pitboss import loop
def grow():
    raise MemoryError("memory allocation failed, allocating 4756 bytes")
try:
    grow()
except Exception as e:
    print("WHERE", repr(e)[:120] + loop._where(e))
'''


def test_the_boot_failure_names_the_innermost_frame(tmp_path):
    script = tmp_path / "where_check.py"
    script.write_text(SCRIPT)
    r = run_script(str(script), mounts={os.path.join(REPO, "firmware"): "/"}, timeout=120)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("WHERE ")]
    assert line, r.stdout + r.stderr
    assert "MemoryError" in line[0] and "line 4, in grow" in line[0], line[0]
