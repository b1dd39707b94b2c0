"""One raw-REPL connection to a board (real or virtual), kept open for many commands.

mpremote's own transport does the raw-REPL work; spawning `mpremote exec` per command
would reconnect (and soft-reset) every time, which is slow and loses board state.
"""
import contextlib
import io
import json
import types

# BoardError is defined once, in host_tools.output: a virtual board that will not start
# is the same failure to a caller as a board that cannot be reached.
from host_tools.emu.vboard_state import board_kind, is_virtual
from host_tools.output import BoardError

# Seconds without output before a raw-REPL command counts as lost. mpremote's own 10 s is
# too short for a Pico's first operations (a cold `import pitboss.app` is ~13 s of chip
# time, and the emulated chip runs 2.5-5x slower than a real one).
TIMEOUT_VIRTUAL = 30.0
TIMEOUT_SERIAL = 120.0


def _mpremote():
    # Imported on first use: `pitboss rank/census/games` need only the standard library.
    from mpremote import transport, transport_serial
    return transport, transport_serial.SerialTransport


def _open_error(device):
    """Why mpremote could not open `device` ("failed to access" says nothing): the port
    missing, or held by another program (mpremote locks the port it opens), e.g.
    " (Could not exclusively lock port ...)"; "" if it opens now."""
    import serial  # pyserial, installed with mpremote

    try:
        serial.Serial(device, exclusive=True).close()
    except (OSError, ValueError) as e:
        return " (%s)" % e
    return ""


class _Pushback:
    """The transport's serial port with a pushback buffer: bytes read past what a caller
    asked for are handed to the next read. All of mpremote's reads (its own and
    _read_until's) go through here, so none is lost or reordered."""

    def __init__(self, port):
        self.orig_serial = port
        self.buf = b""

    def read(self, n=1):
        if self.buf:
            out, self.buf = self.buf[:n], self.buf[n:]
            return out
        return self.orig_serial.read(n)

    def inWaiting(self):
        return len(self.buf) + self.orig_serial.inWaiting()

    in_waiting = property(inWaiting)

    def __getattr__(self, name):  # write, close, dtr, rts, isOpen, ...
        return getattr(self.orig_serial, name)


def _read_until(self, min_num_bytes, ending, timeout=10, data_consumer=None,
                timeout_overall=None):
    """mpremote's SerialTransport.read_until, reading what is waiting in one call
    instead of a byte at a time (a 700 KB export took ~10 s of host CPU in pyserial's
    one-byte reads) and keeping what follows `ending` for the next read."""
    import time

    sp = self.serial
    data = b""
    begin = last = time.monotonic()
    while True:
        n = sp.inWaiting()
        new = sp.read(n) if n else (sp.read(1) if self.is_pty else b"")
        if new:
            start = max(0, len(data) - len(ending) + 1)  # an ending split across reads
            data += new
            last = time.monotonic()
            i = data.find(ending, start)
            if data_consumer is not None:
                # (mpremote: with a consumer the ending is one byte and the data is
                # passed on, not returned: hand over what precedes the ending)
                if i < 0:
                    data_consumer(data)
                    data = b""
                    continue
                if i:
                    data_consumer(data[:i])
                data, i = data[i:], 0
            if i >= 0:
                cut = i + len(ending)
                sp.buf = data[cut:] + sp.buf
                data = data[:cut]
                break
        else:
            now = time.monotonic()
            if timeout is not None and now >= last + timeout:
                break
            if timeout_overall is not None and now >= begin + timeout_overall:
                break
            time.sleep(0.01)
    return data


class Board:
    def __init__(self, device, timeout=None):
        self.device = device
        # An emulated board's pty takes bulk input (see exec(fast=True)).
        self.device_is_virtual = is_virtual(device)
        self.kind = board_kind(device)     # 'virtual', 'pico' or None (a real port)
        if timeout is None:
            if self.kind == "pico":
                from host_tools.emu.pico import TIMEOUT as timeout
            else:
                timeout = TIMEOUT_VIRTUAL if self.kind else TIMEOUT_SERIAL
        self.timeout = timeout
        self._tr, serial_transport = _mpremote()
        from host_tools.link import portlock
        portlock.acquire(device)  # one command at a time on a port (PortBusy)
        self._locked = True
        try:
            self._connect(serial_transport, timeout)
        except BaseException:
            self._unlock()
            raise

    def _unlock(self):
        from host_tools.link import portlock
        if self._locked:
            self._locked = False
            portlock.release(self.device)

    def _connect(self, serial_transport, timeout):
        device = self.device
        self._refuse_production()
        for attempt in (1, 2):
            try:
                self._t = serial_transport(device, baudrate=115200)
                self._t.serial = _Pushback(self._t.serial)
                self._t.read_until = types.MethodType(_read_until, self._t)
                # mpremote prints what it got instead of a raw REPL prompt (the loop's
                # banner, a refused line) before raising; the error below says it better.
                with contextlib.redirect_stdout(io.StringIO()):
                    self._t.enter_raw_repl(soft_reset=False, timeout_overall=timeout)
                break
            except self._tr.TransportError as e:
                with contextlib.suppress(Exception):
                    self._t.close()
                mode = self._loop_mode(timeout)
                # No raw REPL: a production board (its main loop owns the port) says so.
                from host_tools.link.protolink import PRODUCTION, PRODUCTION_HINT, SERVICE
                if mode == PRODUCTION:
                    raise BoardError(PRODUCTION_HINT % device) from None
                # A service-mode board whose loop was still booting when mpremote's one
                # Ctrl-C came (main.py turns Ctrl-C off until the service switch is read,
                # so that byte became part of a refused line): its loop answers now, with
                # Ctrl-C on, so a second try breaks in.
                if mode != SERVICE or attempt == 2:
                    raise BoardError("cannot reach a board on %s: %s%s"
                                     % (device, e, _open_error(device))) from e

    def _refuse_production(self):
        """A production board has no raw REPL: say so at once, before mpremote spends
        its whole timeout (10-19 s, issue 29) breaking in for nothing. The loop answers
        `version` with its mode in a fraction of a second; a board that says nothing
        within the probe's 2 s goes on to mpremote's own attempt."""
        from host_tools.link.protolink import PRODUCTION, PRODUCTION_HINT, probe

        try:
            mode = probe(self.device)
        except Exception:  # noqa: BLE001  (mpremote's attempt says what is wrong)
            return
        if mode == PRODUCTION:
            raise BoardError(PRODUCTION_HINT % self.device)

    def _loop_mode(self, timeout):
        """The mode of the table loop on the port: probe(), and on an emulated board
        (slow to boot) the loop's own answer once it is up."""
        from host_tools.link.protolink import PRODUCTION, SERVICE, ProtocolLink, probe

        mode = None
        with contextlib.suppress(Exception):
            mode = probe(self.device)
        if mode is None and self.kind:
            with contextlib.suppress(Exception):
                with ProtocolLink(self.device) as link:
                    r = link.ready(min(timeout, 300))
                mode = SERVICE if r.get("mode") == SERVICE else PRODUCTION
        return mode

    def exec(self, code, fast=False):
        """Run code on the board; its printed output, or BoardError with its traceback.

        fast=True writes the code in one go instead of mpremote's 256 bytes every 10 ms
        (which protects a real UART's small receive buffer): for the virtual board,
        whose pty and bridge take bulk input, e.g. a soak test's 100,000 lines."""
        tr = self._tr
        try:
            if fast:
                out = self._exec_fast(code)
            else:
                out, err = self._t.exec_raw(code, timeout=self.timeout)
                if err:
                    raise tr.TransportExecError(out, err.decode())
        except tr.TransportExecError as e:
            raise BoardError("board raised:\n" + e.error_output.strip()) from e
        except tr.TransportError as e:
            raise BoardError("lost the board on %s: %s" % (self.device, e)) from e
        return out.decode("utf-8", "replace").replace("\r\n", "\n")

    def _exec_fast(self, code):
        t, tr, timeout = self._t, self._tr, max(self.timeout, 600)
        if not t.read_until(1, b">").endswith(b">"):
            raise tr.TransportError("could not enter raw repl")
        t.serial.write(code.encode() + b"\x04")
        if t.serial.read(2) != b"OK":
            raise tr.TransportError("could not exec command")
        out, err = t.follow(timeout)
        if err:
            raise tr.TransportExecError(out, err.decode())
        return out

    def call_lines(self, code):
        """Run code that prints JSON lines; return them decoded."""
        return [json.loads(ln) for ln in self.exec(code).splitlines() if ln.strip()]

    def write_file(self, path, data):
        self._t.fs_writefile(path, data)

    def close(self):
        """Leave the raw REPL and soft-reset at the friendly REPL: /main.py runs, and with
        it the table's loop, as after `pitboss flash` (the REPL is for service work only,
        never where a board is left)."""
        with contextlib.suppress(Exception):
            self._t.exit_raw_repl()
            self._t.serial.write(b"\x04")
            self._t.read_until(1, b"soft reboot\r\n", timeout=10)
        with contextlib.suppress(Exception):
            self._t.close()
        self._unlock()
