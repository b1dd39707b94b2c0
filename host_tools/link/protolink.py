"""The bench protocol on a board's serial port, as a production board speaks it: one
command line in, one JSON reply line out (docs/protocol.md). No REPL, no mpremote.

Both modes run the table's main loop (pitboss.run), so the host's table commands are
protocol lines in both; `version` says which mode the board booted in. A board in service
mode whose loop was broken into (Ctrl-C: mpremote, to flash or verify) sits at the REPL
until it is soft-reset (`restart_loop`), which runs /main.py and so the loop again.

Lines the loop writes on its own, not as a reply (a card the shoe delivered: "src":
"shoe"), are kept in `events` and never taken for the reply to a command.
"""
import json
import os
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

        from host_tools.link import portlock
        try:
            portlock.acquire(port)  # one command at a time on a port (PortBusy)
        except portlock.PortBusy as e:
            raise LinkError(str(e)) from None
        try:
            self.s = serial.Serial(port, baudrate, timeout=0.05)
        except (OSError, serial.SerialException) as e:
            portlock.release(port)
            raise LinkError("cannot open %s: %s" % (port, e)) from e
        self.port = port
        self._rx = b""
        self.events = []  # unsolicited lines: the shoe's cards as the loop dealt them

    def write(self, data):
        self.s.write(data)
        self.s.flush()

    def _read(self):
        """What has arrived: up to the port's timeout for a first byte, then whatever
        waits behind it. (pyserial's read(4096) waits the whole timeout for bytes that
        never come: 50 ms more on every reply, most of a short line's round trip.)"""
        got = self.s.read(1)
        n = self.s.in_waiting if got else 0
        return got + self.s.read(n) if n else got

    def read_for(self, seconds):
        """Everything that arrives within `seconds` (for probes and raw-byte tests)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._rx += self._read()
        out, self._rx = self._rx, b""
        return out

    def _line(self):
        """The next complete JSON object line from what has arrived, or None when no line
        is complete yet. Unasked lines ("src": "shoe") go to `events`, and None is
        returned for them too only when nothing else follows; noise lines are skipped."""
        while True:
            i = self._rx.find(b"\n")
            if i < 0:
                return None
            line, self._rx = self._rx[:i].strip(), self._rx[i + 1:]
            if not line.startswith(b"{"):
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("src") == "shoe":
                self.events.append(obj)
                continue
            return obj

    def reply(self, timeout=30.0):
        """The next JSON reply line."""
        end = time.monotonic() + timeout
        while True:
            obj = self._line()
            if obj is not None:
                return obj
            if time.monotonic() > end:
                raise LinkError("no reply from %s within %.0f s (got %r)"
                                % (self.port, timeout, self._rx[-200:]))
            self._rx += self._read()

    def request(self, line, timeout=30.0):
        self.write(line.encode() + b"\n")
        return self.reply(timeout)

    def wait_events(self, n, timeout=30.0, strict=True):
        """Until `n` unsolicited lines (shoe cards) have arrived; returns and clears them.
        strict=False: what arrived within `timeout` (a frame the shoe's own checks set
        aside, a duplicate, is acknowledged but dealt to no one, so writes no line)."""
        end = time.monotonic() + timeout
        while len(self.events) < n:
            if self._line() is not None:
                continue  # a reply nobody waits for here: dropped (_line keeps the cards)
            if len(self.events) >= n:
                # The last card was in what _line() just parsed: reading again waited out
                # the port's 50 ms timeout for nothing (350 ms of each six-seat Pai Gow
                # round dealt 7 frames at a time, issue 27).
                break
            if time.monotonic() > end:
                if not strict:
                    break
                raise LinkError("%d of %d shoe cards reported by %s within %.0f s"
                                % (len(self.events), n, self.port, timeout))
            self._rx += self._read()
        out, self.events = self.events[:n], self.events[n:]
        return out

    def ready(self, timeout=None, repl_ends=False):
        """The `version` reply, once the loop answers (after a reset it may be booting).
        repl_ends=True: a board found waiting at the friendly REPL's prompt (its main.py
        ended, or there is none) raises LinkError at once, instead of being waited for:
        no loop will answer there.

        Lines sent while the board boots may all be answered later, so each try sends a
        line of its own (an unknown command naming a fresh token), and it returns once
        the answer to the last try has come: every earlier answer has arrived by then
        (one loop, in order), and no reply is left over to be taken for the next
        command's."""
        if timeout is None:
            # An emulated Pico boots at a fraction of a real chip's speed (the firmware's
            # import alone is ~13 s of chip time): it is given longer.
            from host_tools.emu.vboard_state import board_kind
            timeout = 180.0 if board_kind(self.port) == "pico" else 30.0
        begin = time.monotonic()
        end = begin + timeout
        said = False
        sent = []       # tokens whose answers have not arrived yet, oldest first
        answered = False
        resend = 0.0
        while True:
            now = time.monotonic()
            if not said and now - begin > 2.0 and not os.environ.get("PITBOSS_QUIET"):
                said = True  # the one line while it waits: why this takes time
                import sys
                sys.stderr.write("pitboss: waiting for %s to answer (a board that is "
                                 "booting or resetting answers once its loop runs; up to "
                                 "%.0f s)\n" % (self.port, timeout))
                sys.stderr.flush()
            # A new try every 3 s until the loop has answered one, then every 10 s (a
            # try lost in a reset is made up by a later one's answer); the answers to
            # the tries still out are awaited: a loaded emulator can take longer than
            # 3 s a line, and taking only the newest try's answer then never matched
            # (the demo's Pico at load 15, 2026-12-03).
            if now >= resend:
                token = "sync-%s" % os.urandom(6).hex()
                self.write(("\n%s\n" % token).encode())
                sent.append(token)
                resend = now + (10.0 if answered else 3.0)
            try:
                r = self.reply(max(0.05, min(resend, end) - time.monotonic()))
            except LinkError:
                r = None
            if repl_ends and r is None and self._rx.endswith(b">>> "):
                raise LinkError("%s is at the REPL: no table loop runs (its main.py "
                                "ended)" % self.port)
            if r is not None and (r.get("error") or {}).get("code") == "boot_failed":
                # The loop runs but its table could not start (pitboss.loop: _Down): it
                # answers every line so, never with a try's token, so waiting is futile.
                raise LinkError("%s answers, but its table did not start: %s (in "
                                "service mode the REPL shows more; `pitboss flash` "
                                "reinstalls the firmware)"
                                % (self.port, r["error"].get("message", "")[:200]))
            if r is not None:
                text = json.dumps(r)
                for i, token in enumerate(sent):
                    if token in text:
                        del sent[:i + 1]
                        answered = True
                        break
                if answered and not sent:
                    return self.request("version")
            if time.monotonic() > end:
                raise LinkError("%s does not answer protocol lines after %.0f s (at the "
                                "REPL? `pitboss reset` restarts the loop; no firmware? "
                                "`pitboss flash` installs it)" % (self.port, timeout)) \
                    from None

    def close(self):
        from host_tools.link import portlock

        if self.s is not None:
            self.s.close()
            self.s = None
            portlock.release(self.port)

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
            try:
                mode = json.loads(line).get("mode")
            except ValueError:
                mode = None
            # The loop runs in both modes; firmware older than that ran it in production only
            return SERVICE if mode == SERVICE else PRODUCTION
    if b"NameError" in got:
        return SERVICE
    return None


def restart_loop(port, timeout=30.0):
    """After the raw REPL (flash, verify, provisioning in service mode): leave it and
    soft-reset at the friendly REPL, which runs /main.py, so the table's loop runs again.
    True once the board said it rebooted. Harmless on a board whose loop already runs:
    a production loop refuses the control bytes as a bad line."""
    with ProtocolLink(port) as link:
        link.write(b"\r\x03\x03\r\x02")
        time.sleep(0.2)
        link.s.reset_input_buffer()
        link.write(b"\x04")
        end = time.monotonic() + timeout
        got = b""
        while time.monotonic() < end:
            got += link.s.read(4096)
            if b"soft reboot" in got:
                break
        else:
            link.write(b"\n")  # ends the refused line, should a loop have been running
            return False
        # On the emulated Pico, until the loop answers: the boot (the pitboss image
        # hashes its program first) runs with Ctrl-C off and takes seconds of wall time
        # there, so a host breaking in sooner would have its Ctrl-C read as a line later,
        # not get the REPL (2026-12-03). Not on other boards: one whose main.py is not
        # the table's (a test tree) would be waited for to the timeout every time.
        from host_tools.emu.vboard_state import board_kind
        if board_kind(port) == "pico":
            try:
                link.ready(timeout, repl_ends=True)
            except LinkError:
                pass  # no loop came up (no firmware): the caller finds out by itself
    return True
