# The settled round as the dealer pays it, on the 128x64 panel (issue 30): 8 rows of 16
# characters, no paging needed (at most 7 seats at a dealer game, 6 at Pai Gow):
#
#   Pai Gow                          Three Card Prime / Caribbean
#   R12 PAI GOW       (inverse)      R7 D PAIR QUAL      (inverse: the dealer's hand and
#   B FULL HSE AK     banker: high   1   +30 PAIR         whether it qualifies: QUAL/NQ)
#   1   +950 WIN  KQ    hand, low    2   -20 HIGH
#   2      0 PUSH J9    hand ranks   3  +410 STRAIGHT
#   ...                              ...
#
# Each seat row: seat, its net amount in the table's units (what to pay, or take, for all
# of its wagers together, commission included), then at Pai Gow the outcome and the
# seat's low hand's ranks (FOUL for a fouled hand), else the seat's hand. Drawn through
# pitboss.display.TableDisplay (its font cell and rows); the SSD1306 driver then sends only
# the pages that changed. Drawn after settlement only, never while a card comes in.
from pitboss.compat import const
from pitboss.display import short_category

# The screen's words, as one const tuple: strings in it are objects, not names interned
# for good in the chip's qstr pools (a string constant of up to 10 characters would be)
_S = const(("R%d ", "POT", "PAI GOW", " QUAL", " NQ", "D ", "%+d", "WIN", "PUSH", "LOSE",
            "FOUL"))


def draw(t, round_no, rows):
    """Draw the pay screen `rows` (table.settled_pay()) on TableDisplay t. (Argument
    names that are interned anyway: each new name costs the chip's qstr pools.)"""
    d = t
    w = _S
    head, seats = rows
    d.fb.fill(0)
    r = w[0] % round_no if round_no is not None else ""
    if head is None:  # showdown: no dealer, the pot
        d._text(0, r + w[1], inverse=True)
        first = 1
    elif head[0]:  # Pai Gow's banker
        d._text(0, r + w[2], inverse=True)
        d._text(1, "B %-8s %s" % (short_category(head[1]), head[2]))
        first = 2
    else:
        q = w[3] if head[2] else w[4]
        cat = short_category(head[1])[:d.cols - len(r) - 2 - len(q)]
        d._text(0, r + w[5] + cat + q, inverse=True)
        first = 1
    room = d.rows - first
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
            line = "%d%6s %s" % (seat, a, short_category(word))  # 16 columns
        d._text(first + i, line)
    if len(shown) < len(seats):
        d._text(d.rows - 1, "+%d MORE" % (len(seats) - len(shown)))
    d._done()
