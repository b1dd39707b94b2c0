# What the table shows on its 128x64 display: a few fixed screens of 8 text rows of 16
# characters (framebuf's 8x8 font), drawn on any framebuf.FrameBuffer:
#   - the SSD1306 itself on a board (pitboss.hw.ssd1306, whose show() sends the frame),
#   - a plain MONO_VLSB buffer on the virtual board and on CPython (framebuffer() below),
#     which host_tools/emu/screenshot.py turns into a PNG.
# Screens are pure functions of their arguments: redrawing the same state gives the same
# bytes, so tests compare buffers and the VM test compares MicroPython with CPython.
# Built into MicroPython. On CPython the host installs its stand-in first
# (host_tools.emu.framebuf_shim.install()): the firmware itself carries no host code.
import framebuf

from pitboss.compat import const

_CHAR = const(8)  # font cell, pixels
_STYLE_PLAIN = const(0)  # a row's style: lit text on dark (0 is also the background)
_STYLE_INVERSE = const(1)  # dark text on a lit bar (the alarm screen is all such rows)
# The pay screen's words (_pay), as one const tuple: strings in it are objects, not names
# interned for good in the chip's qstr pools (a string constant of up to 10 characters
# would be)
_PAY = const(("R%d ", "POT", "PAI GOW", " QUAL", " NQ", "D ", "%+d", "WIN", "PUSH",
              "LOSE", "FOUL", "B %-8s %s", "%d%6s %s"))

# Hand categories (pitboss.rules.profiles names) in at most 8 characters, so a result row
# "S  CATEGORY OUTC" fits 16 columns. Unknown names are shortened mechanically.
SHORT = {
    "high_card": "HIGH", "one_pair": "PAIR", "two_pair": "2 PAIR",
    "three_of_a_kind": "TRIPS", "straight": "STRAIGHT", "flush": "FLUSH",
    "full_house": "FULL HSE", "four_of_a_kind": "QUADS", "straight_flush": "STR FLSH",
    "royal_flush": "ROYAL", "mini_royal": "MINI RYL", "five_aces": "5 ACES",
    "six_card_royal_flush": "6C ROYAL", "no_qualifying_hand": "NO QUAL",
}


def short_category(category):
    s = SHORT.get(category)
    return s if s is not None else category.replace("_", " ").upper()[:8]


def framebuffer(width=128, height=64):
    """(fb, buf): a FrameBuffer over a fresh MONO_VLSB bytearray (the SSD1306's layout)."""
    buf = bytearray(((height + 7) >> 3) * width)
    return framebuf.FrameBuffer(buf, width, height, framebuf.MONO_VLSB), buf


def wrap(text, width):
    """Greedy word wrap into lines of at most `width` characters; a longer word is cut."""
    lines = []
    line = ""
    for word in text.split():
        while len(word) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:width])
            word = word[width:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


class TableDisplay:
    """Screens of text rows. Each 8-pixel row is one page of the SSD1306, and a screen
    is only rows: each row's text and style are kept, and a redraw draws and sends only
    the rows whose text or style changed (issue 27: a wager's redraw changes one row;
    drawn and checksummed whole, it left ~2 KB of garbage a line on the chip). The
    buffer holds the same pixels as if every screen were drawn from blank."""

    def __init__(self, fb, width=128, height=64):
        self.fb = fb
        self.width = width
        self.height = height
        self.cols = width // _CHAR
        self.rows = height // _CHAR
        # a real panel takes the changed pages (pitboss.hw.ssd1306); a plain framebuf
        # (the virtual board, CPython) has no show
        self._show = getattr(fb, "show_pages", None)
        # What each row holds: its text (None: unknown, so the first screen draws every
        # row) and style (_STYLE_*), and the rows this screen drew or left as they were.
        self._txt = [None] * self.rows
        self._sty = bytearray(self.rows)
        self._put = bytearray(self.rows)
        self._lo = self.rows  # the changed rows, _lo.._hi (none while _lo > _hi)
        self._hi = -1

    def _begin(self):
        put = self._put
        for r in range(self.rows):
            put[r] = 0
        self._lo = self.rows
        self._hi = -1

    def _text(self, row, text, inverse=False):
        """Row `row` shows `text` (clipped at the right edge by framebuf), dark on lit
        if inverse. Drawn only if the row held something else."""
        style = _STYLE_INVERSE if inverse else _STYLE_PLAIN
        self._put[row] = 1
        if self._sty[row] == style and self._txt[row] == text:
            return
        fb = self.fb
        y = row * _CHAR
        fb.fill_rect(0, y, self.width, _CHAR, style)  # the style is the row's background
        if text:
            fb.text(text, 0, y, 1 - style)
        self._txt[row] = text
        self._sty[row] = style
        if row < self._lo:
            self._lo = row
        if row > self._hi:
            self._hi = row

    def _done(self, blank=_STYLE_PLAIN):
        """The rows this screen did not write are blank (lit ones on the alarm screen);
        then the changed rows go to the panel."""
        for r in range(self.rows):
            if not self._put[r]:
                self._text(r, "", blank == _STYLE_INVERSE)
        if self._show is not None:
            # (After a failure the rows kept here still match the buffer; the panel's
            # driver sends every page at its next show.)
            self._show(self._lo, self._hi)

    def status(self, game, seats, round_no=None, phase="", notes=()):
        """Between rounds: game id, round, seats in play, phase, then free notes (shoe
        state, last card...), one row each."""
        self._begin()
        self._text(0, game, inverse=True)
        self._text(1, "ROUND %d" % round_no if round_no is not None else "ROUND -")
        labels = " ".join(str(s) for s in seats)
        if 6 + len(labels) > self.cols:  # too many to list: count them
            labels = "%d" % len(seats)
        self._text(2, "SEATS " + (labels or "-"))
        self._text(3, phase.upper())
        for i, note in enumerate(notes):
            if 4 + i >= self.rows:
                break
            self._text(4 + i, note)
        self._done()

    def result(self, game, rows, round_no=None):
        """After settlement, the pay screen (issue 30): what to pay. rows: (head, seats)
        as Table.settled_rows() gives them; 8 rows of 16 characters, no paging needed
        (at most 7 seats at a dealer game, 6 at Pai Gow; more end with '+N MORE'):

          Pai Gow                    Three Card Prime / Caribbean / showdown
          R12 PAI GOW    (inverse)   R7 D PAIR QUAL   (inverse: the dealer's hand
          B FULL HSE AK  banker:     1   +30 PAIR      and whether it qualifies,
          1   +950 WIN  KQ  high     2   -20 HIGH      QUAL / NQ; showdown: R7 POT)
          2      0 PUSH J9  and low  3  +410 STRAIGHT

        Each seat row: seat, its net amount in the table's units (what to pay or take
        for all of its wagers, commission included), then at Pai Gow the outcome and
        the seat's low hand's ranks (FOUL for a fouled hand), else the seat's hand.
        Drawn after settlement only, never while a card comes in; the SSD1306 driver
        sends only the pages that changed. (The per-seat WIN/LOSE screen it replaced
        is gone from the firmware: the board carries only what a table shows.)"""
        w = _PAY
        head, seats = rows
        self._begin()
        r = w[0] % round_no if round_no is not None else ""
        if head is None:  # showdown: no dealer, the pot
            self._text(0, r + w[1], inverse=True)
            first = 1
        elif head[0]:  # Pai Gow's banker
            self._text(0, r + w[2], inverse=True)
            self._text(1, w[11] % (short_category(head[1]), head[2]))
            first = 2
        else:
            q = w[3] if head[2] else w[4]
            cat = short_category(head[1])[:self.cols - len(r) - 2 - len(q)]
            self._text(0, r + w[5] + cat + q, inverse=True)
            first = 1
        room = self.rows - first
        shown = seats if len(seats) <= room else seats[:room - 1]
        for i in range(len(shown)):
            seat, amount, word = shown[i]
            a = w[6] % amount if amount else "0"
            if head is not None and head[0]:
                out = w[7] if amount > 0 else (w[8] if amount == 0 else w[9])
                if word is None:
                    out, word = w[10], ""
                line = "%d%7s %-4s %s" % (seat, a, out, word)  # 16 columns
            else:
                line = w[12] % (seat, a, short_category(word))  # 16 columns
            self._text(first + i, line)
        if len(shown) < len(seats):
            self._text(self.rows - 1, "+%d MORE" % (len(seats) - len(shown)))
        self._done()

    def message(self, title, lines=()):
        """Anything else the dealer needs to read (deck registration prompts, the shoe's
        state): an inverted title row, then one row per line."""
        self._begin()
        self._text(0, title, inverse=True)
        for i, line in enumerate(lines):
            if 1 + i >= self.rows:
                break
            self._text(1 + i, line)
        self._done()

    def alarm(self, title, message=""):
        """An alarm the dealer must see: the whole screen inverted (lit, dark text), so it
        cannot pass for a status or result screen; title, then the message wrapped."""
        self._begin()
        self._text(0, "! " + title.upper(), True)
        for i, line in enumerate(wrap(message, self.cols)):
            if 1 + i >= self.rows:
                break
            self._text(1 + i, line, True)
        self._done(_STYLE_INVERSE)
