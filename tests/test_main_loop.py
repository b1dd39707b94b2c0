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


def test_bytes_that_are_not_a_line_are_refused_and_the_loop_goes_on():
    """Production input is raw bytes: Ctrl-C, Ctrl-A, NUL, 0xFF, an escape sequence or an
    over-long line is refused whole (bad_format), never cut, decoded or run; the loop
    answers the next line (issue 12: Ctrl-C gave the REPL; issue 11: 0xFF ended it)."""
    import boards.virtual as hw
    from pitboss import app
    hw.reset()
    a = app.App(hw, root=tempfile.mkdtemp(), check_firmware=False)
    junk = [b"\x03", b"\x01", b"\x04", b"\x00abc", b"\xff\xfe", b"\x1b[A", b"\xc3\xa9",
            b"status\x03", b"y" * 513]
    data = b"status\n" + b"".join(j + b"\r\n" for j in junk) + b"version\n"
    rfd, wfd = os.pipe()
    os.write(wfd, data)
    os.close(wfd)
    out = []
    with os.fdopen(rfd, "rb") as stream:
        app.serve(a, stream, out.append, poll_ms=1)
    replies = [json.loads(x) for x in out]
    assert replies[0]["ok"] and replies[-1]["version"]
    assert [r["error"]["code"] for r in replies[1:-1]] == ["bad_format"] * len(junk)
    r = app.LineReader()
    assert [r.feed(b) for b in b"ok\n"] == [None, None, "ok"]
    assert [r.feed(b) for b in b"\n\r"] == [None, None]  # empty lines are not commands
