"""The virtual board behind a pty, driven by the real mpremote, keeps its flash like a board."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from host_tools.emu import vboard
from host_tools.emu import vboard_state
from host_tools.link.ports import resolve_port


def mpremote(port, *args, timeout=30):
    p = subprocess.run([sys.executable, "-m", "mpremote", "connect", port, *args],
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"mpremote {args} failed:\n{p.stdout}\n{p.stderr}"
    return p.stdout


@pytest.fixture
def board_dirs(tmp_path):
    state, flash = tmp_path / "state", tmp_path / "flash"
    yield state, flash
    # Whatever happened, leave no daemon or node behind.
    st = vboard_state.read_state(state)
    vboard_state.stop(state)
    if st:
        vboard_state.kill_group(st["pid"], signal.SIGKILL)


def test_mpremote_session_soft_reset_and_power_cycle(board_dirs, tmp_path):
    state, flash = board_dirs
    st = vboard.start(flash, state_dir=state)
    port = st["port"]
    assert st["running"] and os.path.realpath(port).startswith("/dev/pts/")

    out = mpremote(port, "exec", "import sys, pitboss_board; "
                   "print(sys.implementation.name, sys.implementation.version[:2], "
                   "sys.platform, pitboss_board.NAME)")
    assert out.split() == ["micropython", "(1,", "27)", "webassembly", "virtual"]

    src = tmp_path / "hello.py"
    src.write_text("GREETING = 'hi from flash'\n")
    script = tmp_path / "script.py"
    script.write_text("import hello\nprint(hello.GREETING)\n")
    mpremote(port, "fs", "cp", str(src), ":hello.py")
    assert "hello.py" in mpremote(port, "fs", "ls")
    assert mpremote(port, "run", str(script)).strip() == "hi from flash"
    # errno rewrite: a missing file is reported as ENOENT, which mpremote understands
    p = subprocess.run([sys.executable, "-m", "mpremote", "connect", port, "fs", "cat",
                        ":missing.py"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 1 and "No such file or directory" in p.stderr

    # Soft reset: Python state is gone, files are not.
    out = mpremote(port, "exec", "x = 42", "soft-reset", "exec",
                   "import os; print('x' in globals(), 'hello.py' in os.listdir('/'))")
    assert out.split() == ["False", "True"]
    assert (flash / "hello.py").read_text() == src.read_text()

    # Power cut: SIGKILL the whole board (daemon and node) right after a write.
    mpremote(port, "exec", "f = open('/late.txt', 'w'); f.write('written last'); f.close()")
    os.killpg(st["pid"], signal.SIGKILL)
    deadline = time.monotonic() + 5            # SIGKILL is delivered asynchronously
    while vboard_state.alive(st["pid"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert (state / "pid").exists()            # nobody cleaned up: a stale pid file...
    assert not vboard_state.status(state)["running"]  # ...which status detects and clears
    assert not (state / "pid").exists()

    st2 = vboard.start(flash, state_dir=state)
    assert st2["pid"] != st["pid"]
    assert mpremote(st2["port"], "fs", "cat", ":late.txt") == "written last"
    assert mpremote(st2["port"], "exec", "import hello; print(hello.GREETING)").strip() \
        == "hi from flash"

    assert vboard_state.stop(state) is True
    assert vboard_state.status(state)["running"] is False
    assert vboard_state.stop(state) is False


def test_resolve_port_gives_throwaway_board_and_passes_others_through():
    with resolve_port("/dev/ttyUSB7") as port:
        assert port == "/dev/ttyUSB7"
    with resolve_port("virtual") as port:
        assert mpremote(port, "exec", "print(6 * 7)").strip() == "42"
        pid = int(open(os.path.join(os.path.dirname(port), "pid")).read())
    time.sleep(0.1)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_cli_start_status_stop(tmp_path):
    env = dict(os.environ, PITBOSS_STATE=str(tmp_path))
    run = lambda *a: subprocess.run([sys.executable, "-m", "host_tools.emu.vboard", *a],  # noqa: E731
                                    capture_output=True, text=True, timeout=60, env=env)
    try:
        p = run("start", "--flash-dir", str(tmp_path / "f"))
        assert p.returncode == 0, p.stderr
        st = json.loads(p.stdout)
        assert st["running"] and st["port"] == str(tmp_path / "virtual" / "tty")
        assert run("start").returncode == 2            # one board per state dir (an error)
        assert json.loads(run("status").stdout)["flash_dir"] == str(tmp_path / "f")
        assert json.loads(run("stop").stdout) == {"stopped": True}
        p = run("status")
        assert p.returncode == 3 and json.loads(p.stdout)["running"] is False
    finally:
        vboard_state.stop(tmp_path / "virtual")
