# Pai Gow Poker (pr-pai-gow, pr-pai-gow-a5-low): settlement and the game's interface
# (pitboss.games). Setting seven cards is pitboss.games.paigow_rules (the 21 ways, the
# foul rule, the two-pair rule) and pitboss.games.paigow_way (the house way).
#
# Rule texts: shared/rules/ (beside the repository) puerto-rico-pai-gow-poker-ranks.es.txt (PR A-E): the
# five-card high hand is ranked by the game's profile, the two-card low hand by the
# pr-pai-gow-low profile (PR B.10: a pair or not; PR A: the joker is an ace in it).
#
# HOUSE WAY. The "standard house ways" published by the Gold Star School of Gaming, Las
# Vegas (goldstarschool.com/house-ways/, "the standard house ways we teach at our dealing
# school for setting hands in Pai Gow Poker"), bullet by bullet. That page says casinos
# vary their two-pair rule and that it "typically trumps other rules"; the two-pair rule
# is therefore configuration, by default the Trump Plaza rule as published by the Wizard
# of Odds (Pai Gow Poker, Appendix 2: "This is very typical. Most other casinos use this
# exact rule or something similar"). Each rule below quotes its bullet; the rule name it
# returns is what results and tests cite. docs/games.md lists every reading we chose.
from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.games.paigow_rules import (RUNG, _bad, check_setting, is_foul, low, outranks,
                                         two_pair_rule)
from pitboss.games.paigow_way import house_way
from pitboss.rules import evaluator
from pitboss.rules.asplayed import as_played
from pitboss.rules.cards import NAMES, parse_hand
from pitboss.rules.profiles import HIGH, PAIR

# ---- settlement ----------------------------------------------------------------------

def commission(win, bps, rounding="down", unit=1):
    """Commission on a win of `win` units at `bps` basis points (500 = 5%), rounded to
    a multiple of the table's `unit`: "down" (default: never more than the posted rate)
    or "up" (never less)."""
    exact = win * bps  # in units / 10000
    step = unit * 10000
    if rounding == "up":
        return -(-exact // step) * unit
    return exact // step * unit


def hand_result(mine, banker):
    """One hand against the banker's: copies (equal hands, PR E) go to the banker."""
    return "win" if mine > banker else ("copy" if mine == banker else "lose")


# settle_seats()' rows: one preallocated list per seat, reused every round (made on the
# first settlement, not at import). Their slots (const: inlined, not looked up):
_HS = const(0)  # the high hand's score
_LS = const(1)  # the low hand's score
_LOSE = const(2)  # the seat lost on a foul
_OUTCOME = const(3)  # then what settle() returns, in its order
_HIGH = const(4)
_LOW = const(5)
_COMM = const(6)
_AMOUNT = const(7)
_rows = None  # type: list[list] | None


def seat_rows():
    global _rows
    if _rows is None:
        _rows = [[0] * 8 for _ in range(MAX_SEATS)]
    return _rows


def settle_seats(p, seats, bhs, bls, bps=500, rounding="down", unit=1):
    """Every seat against the banker's hands (scores bhs, bls) in one call: seats is
    [(wager, high, low, lose)], lose True (a foul that loses), False, or None (check the
    setting here: it loses if the high hand does not outrank the low, PR's foul rule).
    Returns seat_rows(), row i filled for seat i: the hands' scores, lose, and what
    settle() returns. Why one call: a call per seat to settle() (9 arguments) takes a
    frame too large for the C stack, which MicroPython then allocates on the heap: 500
    to 800 us a seat on a Pico's fragmented heap (issue 13). Nothing is allocated here."""
    rows = seat_rows()
    lp = low()
    score = evaluator.score  # looked up once, not per seat
    ladder = p.ladder
    i = 0
    for wager, high, lo, lose in seats:
        r = rows[i]
        hs = score(p, high)
        ls = score(lp, lo)
        if lose is None:
            # outranks(), its first answer inline: a high hand above one pair outranks
            # every low hand (a call per seat is most of a seat's time on a board)
            hk = ladder[hs >> RUNG]
            lose = (hk == HIGH or hk == PAIR) and not outranks(p, hs, ls)
        r[_HS] = hs
        r[_LS] = ls
        r[_LOSE] = lose
        if lose:
            r[_OUTCOME] = "foul"
            r[_HIGH] = r[_LOW] = "lose"
            r[_COMM] = 0
            r[_AMOUNT] = -wager
        else:
            # settle() below, inline
            r[_HIGH] = "win" if hs > bhs else ("copy" if hs == bhs else "lose")
            r[_LOW] = "win" if ls > bls else ("copy" if ls == bls else "lose")
            if hs > bhs and ls > bls:
                c = commission(wager, bps, rounding, unit)
                r[_OUTCOME] = "win"
                r[_COMM] = c
                r[_AMOUNT] = wager - c
            elif hs > bhs or ls > bls:
                r[_OUTCOME] = "push"
                r[_COMM] = r[_AMOUNT] = 0
            else:
                r[_OUTCOME] = "lose"
                r[_COMM] = 0
                r[_AMOUNT] = -wager
        i += 1
    return rows


def settle(wager, hs, ls, bhs, bls, foul, bps=500, rounding="down", unit=1):
    """One player's wager against the banker. A foul hand loses. Both hands win: paid
    even money less commission; one wins: push; none: lose (copies count as lost)."""
    if foul:
        return {"outcome": "foul", "high_result": "lose", "low_result": "lose",
                "commission": 0, "amount": -wager}
    # hand_result() inline (a call each costs as much as the rest on a board)
    h = "win" if hs > bhs else ("copy" if hs == bhs else "lose")
    lw = "win" if ls > bls else ("copy" if ls == bls else "lose")
    if hs > bhs and ls > bls:
        c = commission(wager, bps, rounding, unit)
        out, amount = "win", wager - c
    elif hs > bhs or ls > bls:
        c, out, amount = 0, "push", 0
    else:
        c, out, amount = 0, "lose", -wager
    return {"outcome": out, "high_result": h, "low_result": lw, "commission": c,
            "amount": amount}


# ---- the game interface (pitboss.games) ----------------------------------------------
WAGERS = ("wager",)
MAIN = "wager"
PAYTABLES = ()
HOUSE = ("commission_bps", "commission_rounding", "commission_unit", "foul", "two_pair",
         "way")
MAX_SEATS = const(6)  # positions 2-7; position 1 is the banker's
DICE = True
AFTER_DEAL = "setting"
FACE_UP = ()  # the banker's seven cards stay face down while players set their hands
DECISIONS = ("set", "hw")  # the player's own setting; the house way, asked for


def _int_in(what, v, lo, hi):
    if type(v) is not int or not lo <= v <= hi:
        raise _bad("%s must be an int in %d..%d, got %r" % (what, lo, hi, v))
    return v


def _choice(what, v, options):
    if v not in options:
        raise _bad("%s must be one of %s, got %r" % (what, ", ".join(options), v))
    return v


def house(p, given):
    """The house rules with their defaults: 5% commission rounded down to the unit of 1,
    a foul hand loses, the house way "way" (houseways._WAYS, or a casino's own as data;
    None, the default: gold-star with the Trump Plaza two-pair rule, "two_pair" its
    configurable rule as in issue 7); "_two_pair": the checked way's bytes (the key issue 7 gave the
    two-pair rule, which the way now holds: one interned name less)."""
    h = {"commission_bps": _int_in("commission_bps", given.get("commission_bps", 500),
                                   0, 10000),
         "commission_rounding": _choice("commission_rounding",
                                        given.get("commission_rounding", "down"),
                                        ("down", "up")),
         "commission_unit": _int_in("commission_unit", given.get("commission_unit", 1),
                                    1, 1000000),
         "foul": _choice("foul", given.get("foul", "lose"), ("lose", "house_way", "reject"))}
    # The way as configured (None: the default), kept so a restored or replayed
    # configuration builds the same way again; issue 7's two-pair rule, if given, goes
    # into the Gold Star way (houseways.way refuses it with another way).
    way = given.get("way")
    h["way"] = way
    if "two_pair" in given:
        h["two_pair"] = given["two_pair"]
        h["_two_pair"] = two_pair_rule(given["two_pair"], way)
    else:
        h["_two_pair"] = two_pair_rule(None, way)
    return h


def deal_order(t, dice):
    """Positions 1-7 counted counter-clockwise from the banker's (1); the dice total
    counted from the banker's position picks the first packet's position; seven packets
    of seven follow in position order, empty positions included (their packets go to the
    discards); four cards are left over. Without `dice` the table's rng rolls them."""
    if dice is None:
        rng = t.rng
        if rng is None:
            raise Refused("no_dice", "Pai Gow needs the dice total (deal(dice=)) or an "
                          "injected rng")
        dice = rng(6) + rng(6) + rng(6) + 3
    if type(dice) is not int or not 3 <= dice <= 18:
        raise Refused("bad_dice", "dice total must be an int in 3..18, got %r" % (dice,))
    start = (dice - 1) % 7 + 1
    order = []
    for i in range(7):
        pos = (start - 1 + i) % 7 + 1
        order += [pos - 1] * 7  # position 1 -> 0 (banker), k -> seat k-1
    return order, start, dice


def _names(cards):
    # A loop, not a comprehension (on a Pico that is a function object and a heap frame
    # more per call), and the names by id without a call of cards.name() each: the ids
    # of a hand are checked as they come in (a settlement names 49 cards; issue 27).
    out = []
    for c in cards:
        out.append(NAMES[c])
    return out


def decide(t, seat, verb, ev):
    """"set": the player's setting (ev: "high" five cards, "low" two, as names or ids);
    "hw": the house way, asked for. A foul setting is refused, reset by the house way or
    kept to lose, as the house rule "foul" says."""
    p = t.profile
    h = t.house
    seven = t.hand(seat)
    if verb == "hw":
        high, lo, rule = house_way(p, seven, h["_two_pair"])
        return ((high, lo, False, "house_way"),
                {"seat": seat, "foul": False, "set_by": "house_way", "rule": rule,
                 "high": _names(high), "low": _names(lo)})
    high = parse_hand(ev.get("high", ()))  # "As Kd ..." or a sequence of names / ids
    lo = parse_hand(ev.get("low", ()))
    check_setting(seven, high, lo)
    foul = is_foul(p, high, lo)
    set_by = "player"
    if foul and h["foul"] == "reject":
        raise Refused("foul", "seat %d: the high hand %s does not outrank the low hand %s"
                      % (seat, " ".join(_names(high)), " ".join(_names(lo))))
    if foul and h["foul"] == "house_way":
        high, lo, _ = house_way(p, seven, h["_two_pair"])
        set_by = "house_way"
    return ((high, lo, foul, set_by),
            {"seat": seat, "foul": foul, "set_by": set_by, "high": _names(high),
             "low": _names(lo)})


def settle_round(t):
    """The banker's hand set the house way; each seat against it (settle())."""
    p = t.profile
    lp = low()
    h = t.house
    seven = t.hand(0)
    bh, bl, brule = house_way(p, seven, h["_two_pair"])
    bhs = evaluator.score(p, bh)
    bls = evaluator.score(lp, bl)
    in_play = t.seats_in_play()
    choices = [t.choice(s) for s in in_play]
    # A foul hand reset by the house way is settled as reset (foul rule "house_way");
    # under "lose" it loses whatever it holds.
    lose_foul = h["foul"] == "lose"
    rows = settle_seats(p, [(t.wagers(s)["wager"], c[0], c[1], c[2] and lose_foul)
                            for s, c in zip(in_play, choices)], bhs, bls,
                        h["commission_bps"], h["commission_rounding"], h["commission_unit"])
    played = as_played
    seats = []
    for i in range(len(in_play)):
        high, lo, foul, set_by = choices[i]
        r = rows[i]
        s = in_play[i]
        # Table.seat_head()'s fields, and the rest, in one dict built at its size (a
        # dict grown by update() is rebuilt at each doubling). The hands as played reuse
        # the seat's card names and the scores settle_seats() took (issue 27: a six-seat
        # settlement on a Pico).
        ids = t.held(s)
        cards = _names(ids)
        seats.append({"seat": s, "wagers": dict(t.wagers(s)), "cards": cards,
                      "high": played(p, high, r[_HS], ids, cards),
                      "low": played(lp, lo, r[_LS], ids, cards),
                      "high_category": p.category(r[_HS]),
                      "low_category": lp.category(r[_LS]), "foul": foul,
                      "set_by": set_by, "outcome": r[_OUTCOME], "high_result": r[_HIGH],
                      "low_result": r[_LOW], "commission": r[_COMM],
                      "amount": r[_AMOUNT]})
    discards = []
    for r in t.recipients():  # sorted: the same order on every port
        if r != 0 and not t.in_play(r):
            discards += _names(t.held(r))
    cards = _names(seven)
    banker = {"cards": cards,
              "high": played(p, bh, bhs, seven, cards),
              "low": played(lp, bl, bls, seven, cards),
              "high_category": p.category(bhs), "low_category": lp.category(bls),
              "rule": brule}
    return {"dice": t.dice, "start": t.start, "banker": banker, "discards": discards,
            "seats": seats}


def sim_wagers(rng):
    # Odd amounts on purpose: they exercise the rounding of commission.
    return {"wager": 5 + rng.below(996)}


def sim_decision(t, seat):
    """The simulated player takes the house way."""
    return "hw", {}
