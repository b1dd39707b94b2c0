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
    def __init__(self, fb, width=128, height=64):
        self.fb = fb
        self.width = width
        self.height = height
        self.cols = width // _CHAR
        self.rows = height // _CHAR
        self._show = getattr(fb, "show", None)  # a real panel; a plain framebuf has none

    def _text(self, row, text, inverse=False):
        fb = self.fb
        y = row * _CHAR
        text = text[:self.cols]
        if inverse:
            fb.fill_rect(0, y, self.width, _CHAR, 1)
            fb.text(text, 0, y, 0)
        else:
            fb.text(text, 0, y, 1)

    def _done(self):
        if self._show is not None:
            self._show()

    def status(self, game, seats, round_no=None, phase="", notes=()):
        """Between rounds: game id, round, seats in play, phase, then free notes (shoe
        state, last card...), one row each."""
        self.fb.fill(0)
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
        self.fb.fill(0)
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
        self.fb.fill(0)
        self._text(0, title, inverse=True)
        for i, line in enumerate(lines):
            if 1 + i >= self.rows:
                break
            self._text(1 + i, line)
        self._done()

    def alarm(self, title, message=""):
        """An alarm the dealer must see: the whole screen inverted (lit, dark text), so it
        cannot pass for a status or result screen; title, then the message wrapped."""
        fb = self.fb
        fb.fill(1)
        fb.text(("! " + title.upper())[:self.cols], 0, 0, 0)
        for i, line in enumerate(wrap(message, self.cols)):
            if 1 + i >= self.rows:
                break
            fb.text(line, 0, (1 + i) * _CHAR, 0)
        self._done()
