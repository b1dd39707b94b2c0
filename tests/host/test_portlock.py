"""Issue 29 item 3: one command at a time on a port. With `shoe` running, `recall` and
`verify` on the same port once read each other's replies and hung; now the second
command fails at once, naming who holds the port (pid and command line). The port here
is a pseudo-terminal nobody answers on: no board is needed to show the lock."""
import os
import subprocess
import sys
import time

import pytest

from host_tools.link import portlock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def pty_port(tmp_path, monkeypatch):
    monkeypatch.setenv("PITBOSS_LOCKS", str(tmp_path / "locks"))
    master, slave = os.openpty()
    yield os.ttyname(slave)
    os.close(master)
    os.close(slave)


def _hold(port, env):
    """Another `pitboss` command holding the port: `table` waiting for an answer."""
    p = subprocess.Popen([sys.executable, "-m", "host_tools", "table", "--port", port,
                          "status"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while (portlock.holder(port) or {}).get("pid") != p.pid:
        assert p.poll() is None and time.monotonic() < deadline, p.communicate()
        time.sleep(0.05)
    return p


@pytest.mark.parametrize("second", [["table", "--port", "{p}", "status"],
                                    ["recall", "--port", "{p}", "3"],
                                    ["vectors", "--port", "{p}"],
                                    ["flash", "--port", "{p}"]])
def test_a_second_command_on_a_busy_port_fails_at_once_naming_the_holder(pty_port,
                                                                         second):
    env = dict(os.environ)
    first = _hold(pty_port, env)
    try:
        args = [a.format(p=pty_port) for a in second]
        r = subprocess.run([sys.executable, "-m", "host_tools", *args], cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, (r.stdout, r.stderr)
        err = r.stderr.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert "port busy: %s is held by pid %d (pitboss table --port %s status)" % (
            pty_port, first.pid, pty_port) in err, err
    finally:
        first.kill()
        first.wait()


def test_the_lock_is_reentrant_in_a_process_and_ends_with_it(pty_port):
    with portlock.held(pty_port):
        with portlock.held(pty_port):
            assert portlock.holder(pty_port)["pid"] == os.getpid()
        assert portlock.holder(pty_port)["pid"] == os.getpid()
    # released: another process takes it
    r = subprocess.run([sys.executable, "-c", "import sys; sys.path[:0] = [%r]; "
                        "from host_tools.link import portlock; portlock.acquire(%r); "
                        "print('ok')" % (REPO, pty_port)], capture_output=True, text=True,
                       env=dict(os.environ), timeout=60)
    assert r.stdout.strip() == "ok", r.stderr


def test_waiting_for_a_silent_board_says_so_and_names_the_fixes(pty_port, capsys):
    # Issue 29 item 5: a Pico still rebooting answered, after 30 s of silence, "does not
    # answer protocol lines (no firmware? at the REPL? ...)". The wait says what it
    # waits for while it waits, and the failure names `pitboss reset` too.
    from host_tools.link.protolink import LinkError, ProtocolLink
    with ProtocolLink(pty_port) as link:
        with pytest.raises(LinkError) as e:
            link.ready(4)
    err = capsys.readouterr().err
    assert "waiting for %s to answer" % pty_port in err and "booting" in err, err
    assert "pitboss reset" in str(e.value) and "4 s" in str(e.value)


def test_the_floor_collector_holds_each_port_it_follows(pty_port, tmp_path, monkeypatch):
    """The collector's line (host_tools.floor.link) takes the same lock: a table whose
    port another command holds is offline with that command named (and tried again), a
    `pitboss recall` beside the collector is refused naming it, and closing the line lets
    the port go. A kept board's board:NAME is looked up as the line opens."""
    import asyncio

    from host_tools.floor import link as linkmod
    from host_tools.floor.puller import _open_serial
    env = dict(os.environ)
    first = _hold(pty_port, env)
    try:
        with pytest.raises(linkmod.LinkError, match="port busy: %s is held by pid %d "
                           r"\(pitboss table" % (pty_port, first.pid)):
            asyncio.run(linkmod.SerialLine(pty_port).open())
    finally:
        first.kill()
        first.wait()

    async def follow():
        line = await _open_serial(pty_port)
        try:
            return subprocess.run([sys.executable, "-m", "host_tools", "recall", "--port",
                                   pty_port], cwd=REPO, env=env, capture_output=True,
                                  text=True, timeout=60)
        finally:
            line.close()
    r = asyncio.run(follow())
    assert r.returncode == 2 and "port busy: %s is held by pid %d" % (
        pty_port, os.getpid()) in r.stderr, r.stderr
    assert portlock.holder(pty_port) is None  # let go with the line

    monkeypatch.setenv("PITBOSS_STATE", str(tmp_path / "state"))
    with pytest.raises(linkmod.LinkError, match="no kept board named 'bench9' is running"):
        asyncio.run(_open_serial("board:bench9"))
