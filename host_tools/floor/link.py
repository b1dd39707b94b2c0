"""One table's protocol line on asyncio: a serial port (a board's USB serial, a kept
virtual board's or emulated Pico's pty), read and written without blocking so that one
event loop follows hundreds of tables.

The board's main loop answers one JSON line per command line (docs/protocol.md); lines it
writes on its own (a shoe card, "src": "shoe") are skipped, as host_tools.link.protolink does.
A reply line that does not parse is a damaged line (bytes lost on the wire): it raises
GarbledReply, and the caller syncs again before the next command.
"""
import asyncio
import json
import os
import termios
import tty

from host_tools.link import portlock
from host_tools.output import BoardError

LINE_MAX = 1 << 20  # a reply longer than this is not one the firmware writes


class LinkError(RuntimeError):
    """The line is gone or silent: the table is off the line."""


class GarbledReply(LinkError):
    """A reply arrived damaged (not JSON): it is reported and the line is synced again."""


class SerialLine:
    def __init__(self, path, baudrate=115200):
        self.path = path
        self.baudrate = baudrate
        self.fd = None
        self._buf = bytearray()
        self._lines = asyncio.Queue()
        self._closed = None  # the reason, once the line is gone

    async def open(self):
        # One command at a time on a port (host_tools.link.portlock, issue 29): while the
        # collector follows a table, a `pitboss recall` on its port is refused as busy,
        # naming the collector, instead of reading the collector's replies; and a port a
        # command holds shows the table offline, "port busy", until it is let go.
        try:
            portlock.acquire(self.path)
        except BoardError as e:
            raise LinkError(str(e)) from None
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError as e:
            portlock.release(self.path)
            raise LinkError("cannot open %s: %s" % (self.path, e.strerror)) from e
        try:
            tty.setraw(fd)
            attrs = termios.tcgetattr(fd)
            speed = getattr(termios, "B%d" % self.baudrate, termios.B115200)
            attrs[4] = attrs[5] = speed
            termios.tcsetattr(fd, termios.TCSANOW, attrs)
            termios.tcflush(fd, termios.TCIFLUSH)  # what a previous reader left unread
        except termios.error:
            pass  # not a tty (a FIFO in a test): raw bytes anyway
        self.fd = fd
        asyncio.get_running_loop().add_reader(fd, self._readable)
        return self

    def _readable(self):
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        except OSError as e:  # EIO: the other side of the pty is gone (a board's power)
            self._gone("read failed: %s" % e.strerror)
            return
        if not data:
            self._gone("end of file")
            return
        self._buf += data
        while True:
            i = self._buf.find(b"\n")
            if i < 0:
                if len(self._buf) > LINE_MAX:
                    self._buf.clear()
                    self._lines.put_nowait(b"\x00garbled: an endless line")
                return
            line = bytes(self._buf[:i]).strip()
            del self._buf[:i + 1]
            if line:
                self._lines.put_nowait(line)

    def _gone(self, why):
        if self._closed is None:
            self._closed = "%s: %s" % (self.path, why)
            self._detach()
            self._lines.put_nowait(None)

    def _detach(self):
        if self.fd is not None:
            try:
                asyncio.get_running_loop().remove_reader(self.fd)
            except RuntimeError:
                pass
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None
            portlock.release(self.path)

    def close(self):
        if self._closed is None:
            self._closed = "%s: closed" % self.path
        self._detach()

    async def write(self, data):
        view = memoryview(data)
        while view:
            if self.fd is None:
                raise LinkError(self._closed or "%s: not open" % self.path)
            try:
                n = os.write(self.fd, view)
            except BlockingIOError:
                await asyncio.sleep(0.01)
                continue
            except OSError as e:
                self._gone("write failed: %s" % e.strerror)
                raise LinkError(self._closed) from e
            view = view[n:]

    async def _next_line(self, timeout):
        try:
            line = await asyncio.wait_for(self._lines.get(), timeout)
        except asyncio.TimeoutError:
            raise LinkError("%s: no reply within %.0f s" % (self.path, timeout)) from None
        if line is None:
            self._lines.put_nowait(None)  # stays gone for every later reader
            raise LinkError(self._closed)
        return line

    async def reply(self, timeout=20.0):
        """The next JSON reply line (unasked lines skipped)."""
        while True:
            line = await self._next_line(timeout)
            if line.startswith(b"\x00garbled"):
                raise GarbledReply("%s: %s" % (self.path, line[1:].decode()))
            if not line.startswith(b"{"):
                continue  # noise: a boot banner, a REPL prompt
            try:
                obj = json.loads(line)
            except ValueError:
                raise GarbledReply("%s: a damaged reply line (%d bytes)"
                                   % (self.path, len(line))) from None
            if isinstance(obj, dict) and obj.get("src") == "shoe":
                continue
            if not isinstance(obj, dict):
                raise GarbledReply("%s: a reply that is not an object" % self.path)
            return obj

    async def request(self, line, timeout=20.0):
        await self.write(line.encode() + b"\n")
        return await self.reply(timeout)

    async def sync(self, timeout=20.0):
        """Until the loop answers, with nothing left over: each try sends a line of its
        own (an unknown command naming a fresh token); only its answer ends the wait, and
        every answer before it (to lines a previous reader sent) is dropped."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            token = "sync-%s" % os.urandom(6).hex()
            await self.write(("\n%s\n" % token).encode())
            step = min(3.0, max(0.1, end - loop.time()))
            t_step = loop.time() + step
            while True:
                left = t_step - loop.time()
                if left <= 0:
                    break
                try:
                    r = await self.reply(left)
                except GarbledReply:
                    continue
                except LinkError:
                    if self._closed is not None:
                        raise
                    break
                if token in json.dumps(r):
                    return
            if loop.time() > end:
                raise LinkError("%s does not answer protocol lines (no firmware? at the "
                                "REPL?)" % self.path)
