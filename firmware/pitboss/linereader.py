# Bytes in, protocol lines out (pitboss.loop's input): a line ends at CR or LF, and one
# holding a byte outside printable ASCII or longer than LINE_MAX is refused whole, never
# cut and run.
from pitboss.compat import const

LINE_MAX = const(512)  # a longer line is refused whole (bad_format), never cut and run


class LineReader:
    """Bytes in, protocol lines out. A line ends at CR or LF; one holding a byte outside
    printable ASCII (Ctrl-C, NUL, 0xFF, invalid UTF-8...) or longer than LINE_MAX is
    refused whole, never cut and run: the rest of a long line is discarded up to its
    newline. feed(byte) -> None (no line yet), a str line, or False (refused). The line
    buffer is allocated once."""

    def __init__(self):
        self.buf = bytearray(LINE_MAX)
        self.n = 0
        self.bad = False

    def feed(self, b):
        if b == 10 or b == 13:
            n = self.n
            self.n = 0
            if self.bad:
                self.bad = False
                return False
            if not n:
                return None
            return bytes(self.buf[:n]).decode()  # printable ASCII only: cannot fail
        if self.bad:
            return None
        if b < 32 or b > 126 or self.n >= LINE_MAX:
            self.bad = True
        else:
            self.buf[self.n] = b
            self.n += 1
        return None

    def extend(self, buf, n, line):
        """feed() over buf[0:n], calling line(result) for each line or refusal. The rest
        of a refused line is skipped in bulk, find() of its end, not a byte at a time
        (issue 29: a 1 MB junk line cost ~62 us a byte on a Pico)."""
        i = 0
        while i < n:
            if self.bad:
                j = buf.find(b"\n", i, n)
                k = buf.find(b"\r", i, n if j < 0 else j)
                if k >= 0:
                    j = k
                if j < 0:
                    return
                self.bad = False
                self.n = 0
                line(False)
                i = j + 1
                continue
            r = self.feed(buf[i])
            i += 1
            if r is not None:
                line(r)
