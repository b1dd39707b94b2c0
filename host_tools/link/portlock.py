"""One command at a time on a port: an exclusive lock on every port the tool opens.

Two commands on one port read each other's replies (a `recall` beside a running `shoe`
took its sync line for a round's and hung, issue 29). Every way the host opens a port
(protocol lines, the raw REPL, a flash's mpremote steps under the command that runs
them) takes this lock first; a second command fails at once:

    port busy: /dev/ttyACM0 is held by pid 4711 (pitboss shoe --port /dev/ttyACM0 ...)

The lock is an flock on a small file named after the device's real path, in
$PITBOSS_LOCKS (default: <tmp>/pitboss-ports), holding the holder's pid and command
line. flock ends with the process, so a killed command leaves nothing to clean up. In
one process the lock is re-entrant: a command that probes, then talks, then restarts
the loop on the same port holds it once for all of it.
"""
import contextlib
import fcntl
import hashlib
import json
import os
import sys
import tempfile
import threading

from host_tools.output import BoardError

_held = {}  # real path -> [fd, count]
_mutex = threading.Lock()


class PortBusy(BoardError):
    """Another process holds the port; the message names it (pid and command line)."""


def lock_dir():
    d = os.environ.get("PITBOSS_LOCKS") or os.path.join(tempfile.gettempdir(),
                                                         "pitboss-ports")
    os.makedirs(d, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(d, 0o1777)  # shared by every user of the machine's ports
    return d


def _key(device):
    """What names a port for its lock: the device's real path, so that two names of one
    serial device (a /dev/serial/by-id link and /dev/ttyACM0) are one lock; but a pty
    (an emulated board's tty link) by the link itself, because the kernel hands a freed
    /dev/pts number to the next pty at once: a lock still held on a stopped board's pts
    (the test session's own process, in CI) made the next board's flash 'port busy'."""
    real = os.path.realpath(device)
    if real.startswith("/dev/pts/") and os.path.islink(device):
        return os.path.abspath(device)
    return real


def _path_for(real):
    return os.path.join(lock_dir(), hashlib.sha1(real.encode()).hexdigest()[:16] + ".lock")


def holder(device):
    """{pid, cmd, device} of whoever holds `device`'s lock, or None."""
    try:
        with open(_path_for(_key(device))) as f:
            return json.loads(f.read() or "null")
    except (OSError, ValueError):
        return None


def acquire(device):
    """Take `device`'s lock (again, in this process: counted). PortBusy if another
    process holds it."""
    real = _key(device)
    with _mutex:
        if real in _held:
            _held[real][1] += 1
            return
        fd = os.open(_path_for(real), os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            h = holder(device) or {}
            who = ("pid %s (%s)" % (h["pid"], h.get("cmd") or "?")) if h.get("pid") \
                else "another process"
            raise PortBusy("port busy: %s is held by %s" % (device, who)) from None
        except OSError:
            os.close(fd)
            raise
        info = json.dumps({"pid": os.getpid(), "cmd": _cmdline(), "device": device})
        os.ftruncate(fd, 0)
        os.pwrite(fd, info.encode(), 0)
        _held[real] = [fd, 1]


def release(device):
    real = _key(device)
    with _mutex:
        entry = _held.get(real)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] <= 0:
            del _held[real]
            with contextlib.suppress(OSError):
                os.ftruncate(entry[0], 0)
            os.close(entry[0])  # closing releases the flock


@contextlib.contextmanager
def held(device):
    acquire(device)
    try:
        yield device
    finally:
        release(device)


def _cmdline():
    try:
        with open("/proc/self/cmdline", "rb") as f:
            args = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        args = list(sys.argv)
    # `python -m host_tools ...` and the `pitboss` script both read as `pitboss ...`
    for i, a in enumerate(args):
        if a == "host_tools" and i and args[i - 1] == "-m":
            args = ["pitboss"] + args[i + 1:]
            break
        if os.path.basename(a) == "pitboss":
            args = ["pitboss"] + args[i + 1:]
            break
    text = " ".join(args)
    return text if len(text) <= 200 else text[:197] + "..."
