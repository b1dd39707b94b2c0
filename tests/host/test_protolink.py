"""The protocol link's wait for a board's loop (ProtocolLink.ready) on a pseudo-terminal
that plays the board. A loop whose table could not start (pitboss.loop's _Down) answers
every line with boot_failed and never with the wait's token: the wait ends at once with
the board's reason, instead of after its whole timeout (900 s in the image bench)."""
import json
import os
import threading
import time

import pytest

from host_tools.link.protolink import LinkError, ProtocolLink


@pytest.fixture
def board(tmp_path, monkeypatch):
    """A pty whose far end answers each line it gets with `answer(line)`."""
    monkeypatch.setenv("PITBOSS_LOCKS", str(tmp_path / "locks"))
    monkeypatch.setenv("PITBOSS_QUIET", "1")
    master, slave = os.openpty()
    stop = threading.Event()
    state = {"answer": None, "lines": []}

    def serve():
        buf = b""
        while not stop.is_set():
            try:
                buf += os.read(master, 4096)
            except OSError:
                return
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                line = line.strip().decode()
                if line:
                    state["lines"].append(line)
                    os.write(master, (json.dumps(state["answer"](line)) + "\n").encode())

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield os.ttyname(slave), state
    stop.set()
    os.close(slave)
    os.close(master)


def test_a_table_that_did_not_start_ends_the_wait_with_its_reason(board):
    port, state = board
    state["answer"] = lambda line: {"ok": False, "error": {
        "code": "boot_failed",
        "message": "MemoryError('memory allocation failed, allocating 4756 bytes',)"}}
    t0 = time.monotonic()
    with ProtocolLink(port) as link:
        with pytest.raises(LinkError) as e:
            link.ready(timeout=60)
    assert time.monotonic() - t0 < 10
    assert "did not start: MemoryError" in str(e.value) and port in str(e.value)


def test_a_loop_that_answers_is_ready(board):
    port, state = board

    def answer(line):
        if line == "version":
            return {"ok": True, "version": "x"}
        return {"ok": False, "error": {"code": "unknown_command",
                                       "message": "unknown command %r" % line}}
    state["answer"] = answer
    with ProtocolLink(port) as link:
        assert link.ready(timeout=30)["version"] == "x"


def test_the_last_card_ends_the_wait_for_cards_at_once(board):
    """wait_events returns as soon as the n-th unasked line ("src": "shoe") is parsed, not
    after one more read that waits out the port's 50 ms timeout for nothing (a six-seat
    Pai Gow round dealt 7 frames at a time waited 350 ms so)."""
    port, _state = board
    with ProtocolLink(port) as link:
        reads = []
        real = link._read

        def counted():
            got = real()
            reads.append(len(got))
            return got
        link._read = counted
        # Two cards already received (the loop writes them between a shoe's frames).
        link._rx = b"".join((json.dumps({"src": "shoe", "ok": True, "seq": i}) + "\n").encode()
                            for i in range(2))
        got = link.wait_events(2, timeout=5)
        assert [e["seq"] for e in got] == [0, 1]
        assert reads == []  # no read after the last card
        link._rx = (json.dumps({"src": "shoe", "ok": True, "seq": 2}) + "\n").encode()
        t0 = time.monotonic()
        got = link.wait_events(1, timeout=5)
        assert [e["seq"] for e in got] == [2] and reads == []
        assert time.monotonic() - t0 < 0.04
