"""The bench protocol on a board's serial port, as a production board speaks it: one
command line in, one JSON reply line out (docs/protocol.md). No REPL, no mpremote.

Also tells the two modes apart (pitboss.service): a production board answers a protocol
line with JSON; a board in service mode is at MicroPython's REPL and answers with its
prompt or a traceback.
"""
import json
import time

PRODUCTION = "production"
SERVICE = "service"

PRODUCTION_HINT = ("the board on %s is in production mode (no REPL): hold the service "
                   "switch and reset the board, then run this again")


class LinkError(RuntimeError):
    pass


class ProtocolLink:
    def __init__(self, port, baudrate=115200):
        import serial  # pyserial, installed with mpremote

        try:
            self.s = serial.Serial(port, baudrate, timeout=0.05)
        except (OSError, serial.SerialException) as e:
            raise LinkError("cannot open %s: %s" % (port, e)) from e
        self.port = port
        self._rx = b""

    def write(self, data):
        self.s.write(data)
        self.s.flush()

    def read_for(self, seconds):
        """Everything that arrives within `seconds` (for probes and raw-byte tests)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._rx += self.s.read(4096)
        out, self._rx = self._rx, b""
        return out

    def reply(self, timeout=30.0):
        """The next JSON reply line."""
        end = time.monotonic() + timeout
        while True:
            i = self._rx.find(b"\n")
            if i >= 0:
                line, self._rx = self._rx[:i].strip(), self._rx[i + 1:]
                if line.startswith(b"{"):
                    try:
                        return json.loads(line)
                    except ValueError:
                        pass
                continue
            if time.monotonic() > end:
                raise LinkError("no reply from %s within %.0f s (got %r)"
                                % (self.port, timeout, self._rx[-200:]))
            self._rx += self.s.read(4096)

    def request(self, line, timeout=30.0):
        self.write(line.encode() + b"\n")
        return self.reply(timeout)

    def close(self):
        self.s.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def probe(port, wait=2.0):
    """PRODUCTION if the port answers a protocol line with JSON, SERVICE if it shows a
    REPL, None if nothing answered. Harmless either way: Ctrl-B leaves a raw REPL, and
    `version` is a refused line or a NameError at worst."""
    with ProtocolLink(port) as link:
        link.write(b"\x02\r\nversion\r\n")
        got = b""
        end = time.monotonic() + wait
        while time.monotonic() < end:
            got += link.s.read(4096)
            mode = _mode_of(got)
            if mode:
                return mode
    return None


def _mode_of(got):
    for line in got.splitlines():
        line = line.strip()
        if line.startswith(b"{") and b'"version"' in line:
            return PRODUCTION
    if b"NameError" in got:
        return SERVICE
    return None
