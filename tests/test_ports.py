"""Issue 29 item 3: a kept emulated board is reachable by name (`--port board:NAME`),
`--port auto` finds the one board attached, and `pitboss ports` lists what is there."""
import json
import os
import shutil
import subprocess
import sys

from host_tools import ports

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_kept_board_by_name_auto_and_the_list(tmp_path, vb_flash):
    env = dict(os.environ, PITBOSS_STATE=str(tmp_path / "state"),
               PITBOSS_LOCKS=str(tmp_path / "locks"))

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "host_tools", *args], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=300)

    flash = tmp_path / "flash"
    shutil.copytree(vb_flash, flash)
    r = cli("board", "start", "--name", "bench2", "--flash-dir", str(flash))
    assert r.returncode == 0, r.stderr
    try:
        port = json.loads(r.stdout)["port"]
        r = cli("ports", "--json")
        assert r.returncode == 0, r.stderr
        rows = json.loads(r.stdout)
        kept = [x for x in rows if x["kind"] != "serial"]
        assert kept == [{"port": port, "name": "board:bench2", "kind": "virtual",
                         "description": kept[0]["description"]}]
        r = cli("table", "--port", "board:bench2", "status")
        assert r.returncode == 0 and json.loads(r.stdout)["ok"], r.stderr
        if len(rows) == 1:  # no USB serial device on this machine: auto is the board
            r = cli("table", "--port", "auto", "status")
            assert r.returncode == 0 and json.loads(r.stdout)["ok"], r.stderr
        r = cli("table", "--port", "board:nope", "status")
        assert r.returncode == 2 and "board:bench2" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
        assert cli("board", "status", "--name", "bench2").returncode == 0
    finally:
        cli("board", "stop", "--name", "bench2")
    r = cli("table", "--port", "auto", "status")
    if not ports.serial_devices():
        assert r.returncode == 2 and "no board attached" in r.stderr, r.stderr
