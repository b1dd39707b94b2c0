"""The main loop a real board runs (pitboss.app.main/serve): protocol lines in on stdin,
one JSON reply per line out, shoe polled in between; on MicroPython (stdin piped into
the VM in script mode, as USB serial would feed it) and on CPython through a pipe."""
import json
import os
import tempfile

from host_tools.vm import run_script

HERE = os.path.dirname(os.path.abspath(__file__))
LINES = "status\nrank nj-5card As Ks Qs Js Ts\r\nbogus\n\n" + "x" * 600 + "\n"


def check(replies):
    assert replies[0]["phase"] == "unconfigured" and replies[0]["ok"]
    assert replies[1]["category"] == "royal_flush"
    assert replies[2]["error"]["code"] == "unknown_command"
    assert replies[3]["ok"] is False  # an over-long line is cut, then refused
    assert len(replies) == 4  # the empty line and the lone \r are not commands


def test_main_loop_on_micropython():
    r = run_script(os.path.join(HERE, "mp", "main_loop.py"),
                   mounts={os.path.join(HERE, "..", "firmware"): "/",
                           os.path.join(HERE, "..", "boards"): "/repo/boards"},
                   stdin=LINES, timeout=60)
    out = r.stdout.splitlines()
    assert out[-1] == "MAIN-RETURNED", r.stdout + r.stderr
    check([json.loads(x) for x in out[:-1]])


def test_main_loop_on_cpython():
    import boards.virtual as hw
    from pitboss import app
    hw.reset()
    a = app.App(hw, root=tempfile.mkdtemp(), check_firmware=False)
    rfd, wfd = os.pipe()
    os.write(wfd, LINES.encode())
    os.close(wfd)
    out = []
    with os.fdopen(rfd) as stream:
        app.serve(a, stream, out.append, poll_ms=1)
    check([json.loads(x) for x in out])
