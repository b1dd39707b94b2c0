"""Issue 29 item 3: a kept emulated board is reachable by name (`--port board:NAME`),
`--port auto` finds the one board attached, and `pitboss ports` lists what is there."""
import json
import os
import shutil
import subprocess
import sys

from host_tools.link import ports

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


def test_pitboss_reset_restarts_a_loop_left_at_the_repl(tmp_path, vb_flash):
    # Issue 29 item 5: plain mpremote use leaves a service board at its REPL; there was
    # no `pitboss reset` (only `verify` restarted the loop as a side effect).
    from host_tools.link.protolink import LinkError, ProtocolLink
    from host_tools.emu.vboard import virtual_board
    env = dict(os.environ, PITBOSS_LOCKS=str(tmp_path / "locks"))
    flash = tmp_path / "flash"
    shutil.copytree(vb_flash, flash)
    with virtual_board(flash, service=True) as st:
        p = st["port"]
        r = subprocess.run([sys.executable, "-m", "mpremote", "connect", p, "exec",
                            "print(6 * 7)"], capture_output=True, text=True, timeout=120)
        assert r.stdout.strip() == "42", r.stderr
        with ProtocolLink(p) as link:
            try:
                link.ready(3)
                at_repl = False
            except LinkError:
                at_repl = True
        assert at_repl  # the loop is not running: the REPL has the port
        r = subprocess.run([sys.executable, "-m", "host_tools", "reset", "--port", p],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert "loop" in r.stdout
        r = subprocess.run([sys.executable, "-m", "host_tools", "table", "--port", p,
                            "status"], cwd=REPO, env=env, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0 and json.loads(r.stdout)["ok"], r.stderr
