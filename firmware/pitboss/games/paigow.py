# Pai Gow Poker (pr-pai-gow, pr-pai-gow-a5-low): the foul rule, the 21 ways to set seven
# cards, the house way that sets the banker's hand, and settlement.
#
# Rule texts: shared/rules/ (beside the repository) puerto-rico-pai-gow-poker-ranks.es.txt (PR A-E): the
# five-card high hand is ranked by the game's profile, the two-card low hand by the
# pr-pai-gow-low profile (PR B.10: a pair or not; PR A: the joker is an ace in it).
#
# The 21 ways, the foul rule and the house way engine are pitboss.games.houseway.
from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.games import houseway
from pitboss.games.houseway import SPLITS, check_setting, is_foul, low, outranks, settings  # noqa: F401
from pitboss.rules import evaluator
from pitboss.rules.cards import JOKER, RANKS, name, parse_hand
from pitboss.rules.profiles import HIGH, PAIR

_ACE = const(12)  # rank index (deuce = 0); the joker counts here (PR A)
_KING = const(11)
_RUNG = const(26)
_default_two_pair = None

#   Always split."
# `keep` names the singles that must be playable in the low hand to keep both pairs in
# the high hand: "K" = a king or better, "AJ" = an ace with a jack or better (as in
# Canterbury Park's "Ace with a Face"); None = always split.
TRUMP_PLAZA = {
    "name": "trump-plaza",
    "source": "Wizard of Odds, Pai Gow Poker, Appendix 2 (Trump Plaza house way)",
    "low_max": "6",
    "medium_max": "T",
    "keep": {"low-low": "K", "low-medium": "K", "low-high": "A", "medium-medium": "A",
             "medium-high": None, "high-high": None, "aces": None},
}
# per _PAIR_KEYS entry: the lower pair's class and the higher's (0 low, 1 medium, 2 high)
_TWO_PAIR_CLASSES = const(b"\x00\x00\x00\x01\x00\x02\x01\x01\x01\x02\x02\x02")
_PAIR_KEYS = ("low-low", "low-medium", "low-high", "medium-medium", "medium-high",
              "high-high", "aces")


def _rank(c):
    return _ACE if c == JOKER else c >> 2


def _bad(message):
    return Refused("bad_config", message)


def _rank_char(cfg, key, v):
    r = RANKS.find(v.upper()) if isinstance(v, str) and len(v) == 1 else -1
    if r < 0:
        raise _bad("two-pair rule %s: %s must be one rank of %s, got %r"
                          % (cfg, key, RANKS, v))
    return r


def two_pair_rule(cfg=None, way=None):
    """A two-pair rule of TRUMP_PLAZA's shape, validated, as the Gold Star house way
    (houseways.py) holding it: the way's bytes, for house_way(). `way`: the house way
    configured with it (None or gold-star; another is refused)."""
    global _default_two_pair
    if cfg is None:
        if way is None and _default_two_pair is not None:
            return _default_two_pair  # the default way, cached
        # A way by name or as data (None: the default, Gold Star with the Trump Plaza
        # rule), from houseways.py, which is dropped again once the way's bytes are made:
        # its code and tables are needed at configuration only (about 4 KB of a Pico's
        # heap while Pai Gow is played, measured in the survive session); the engine
        # here reads the bytes.
        import sys
        from pitboss.games import houseways
        try:
            w = houseways.way(way)
        finally:
            if sys.implementation.name == "micropython":
                sys.modules.pop("pitboss.games.houseways", None)
                pkg = sys.modules.get("pitboss.games")
                if pkg is not None and hasattr(pkg, "houseways"):
                    delattr(pkg, "houseways")
        if way is None:
            _default_two_pair = w
        return w
    if not isinstance(cfg, dict):
        raise _bad("two-pair rule must be a dict like paigow.TRUMP_PLAZA, got %r"
                          % (cfg,))
    for k in cfg:
        if k not in ("name", "source", "low_max", "medium_max", "keep"):
            raise _bad("two-pair rule has no setting %r" % (k,))
    label = cfg.get("name", "?")
    low_max = _rank_char(label, "low_max", cfg.get("low_max"))
    medium_max = _rank_char(label, "medium_max", cfg.get("medium_max"))
    if not low_max < medium_max < _ACE:
        raise _bad("two-pair rule %s: need low_max < medium_max < A" % label)
    keep_in = cfg.get("keep")
    if not isinstance(keep_in, dict):
        raise _bad("two-pair rule %s: keep must be a dict of %s"
                          % (label, ", ".join(_PAIR_KEYS)))
    for k in keep_in:
        if k not in _PAIR_KEYS:
            raise _bad("two-pair rule %s: unknown pair class %r (classes: %s)"
                              % (label, k, ", ".join(_PAIR_KEYS)))
    # The pair classes as rank ranges (low 0..low_max, medium, high up to the king);
    # each kept class becomes one rule "keep if the singles reach `need`", the rest
    # split (houseways.way(..., two_pair): (conditions, keep) pairs).
    ranges = ((0, low_max), (low_max + 1, medium_max), (medium_max + 1, _KING))
    rules = []
    for n in range(len(_PAIR_KEYS)):
        k = _PAIR_KEYS[n]
        if k not in keep_in:
            raise _bad("two-pair rule %s: missing %s" % (label, k))
        v = keep_in[k]
        if v is None:
            continue
        if not (isinstance(v, str) and 1 <= len(v) <= 2):
            raise _bad("two-pair rule %s: %s must be None or 1-2 ranks like "
                              "'K' or 'AJ', got %r" % (label, k, v))
        if k == "aces":
            conds = [(3, _ACE, _ACE)]
        else:
            lc, hc = _TWO_PAIR_CLASSES[2 * n], _TWO_PAIR_CLASSES[2 * n + 1]
            conds = [(4,) + ranges[lc], (3,) + ranges[hc]]
        for i in range(len(v)):
            conds.append((5 + i, _rank_char(label, k, v[i]), _ACE))
        rules.append((conds, True))
    rules.append(((), False))
    import sys
    from pitboss.games import houseways
    try:
        return houseways.way(way, rules)
    finally:
        if sys.implementation.name == "micropython":  # as above
            sys.modules.pop("pitboss.games.houseways", None)
            pkg = sys.modules.get("pitboss.games")
            if pkg is not None and hasattr(pkg, "houseways"):
                delattr(pkg, "houseways")



def house_way(p, cards, way=None):
    """Set seven cards the house way: (high, low, rule name) (houseway.house_way; way
    None: the default, Gold Star with the Trump Plaza two-pair rule)."""
    return houseway.house_way(p, cards, two_pair_rule() if way is None else way)


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
            hk = ladder[hs >> _RUNG]
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
    return [name(c) for c in cards]


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
    bh, bl, brule = house_way(p, t.hand(0), h["_two_pair"])
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
    seats = []
    for i in range(len(in_play)):
        high, lo, foul, set_by = choices[i]
        r = rows[i]
        d = t.seat_head(in_play[i])
        d.update({"high": evaluator.played(p, high), "low": evaluator.played(lp, lo),
                  "high_category": p.category(r[_HS]),
                  "low_category": lp.category(r[_LS]), "foul": foul, "set_by": set_by,
                  "outcome": r[_OUTCOME], "high_result": r[_HIGH],
                  "low_result": r[_LOW], "commission": r[_COMM],
                  "amount": r[_AMOUNT]})
        seats.append(d)
    discards = []
    for r in t.recipients():  # sorted: the same order on every port
        if r != 0 and not t.in_play(r):
            discards += _names(t.hand(r))
    banker = {"cards": _names(t.hand(0)),
              "high": evaluator.played(p, bh), "low": evaluator.played(lp, bl),
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
