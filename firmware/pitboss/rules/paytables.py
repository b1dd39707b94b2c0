# Default paytables (configuration data) and the check every override goes through.
#
# A paytable maps a line (a hand category, or a named event such as "three_same_colour")
# to odds. Odds are written N (N to 1) or [N, D] (N to D); validate() turns both into the
# tuple (N, D). A payout is amount * N // D: integer arithmetic, rounded down, so a player
# is never paid more than the posted odds (no floats anywhere in settlement).
#
# Where a default could not be taken from a posted table, its `verified` flag is False
# and docs/games.md says so: such a default is a placeholder until the casino configures
# the table it actually posts. A table that uses an unverified default refuses to open
# in production (pitboss.controller: bad_config naming the table) and every status says
# so in service mode (Table.status()["unverified"]).
#
# Every table has a name; a configuration may name a published table instead of listing
# its lines ("paytables": {"call": "pa-671a.12d"}). Only tables whose text we hold are
# here: 58 Pa. Code § 679a.12's lettered Three Card Prime tables (Pair Bonus, Play with
# its Bad Beat Bonus, All-Six) were not available to us (docs/games.md, Paytables), so
# those kinds keep their unverified placeholders until the casino configures its own.
from pitboss.compat import const
from pitboss.errors import Refused

_MAX_NUM = const(1000000)  # odds above 1,000,000 to 1 are a typo, not a paytable
_MAX_DEN = const(1000)


def _bad(message):
    """A wrong configuration value: refused with code bad_config, the message naming it."""
    return Refused("bad_config", message)


# Every line a paytable of each kind may hold, highest first. `REQUIRED` kinds must list
# all of them: a winning Caribbean call or Three Card Prime play is always paid something.
# In the other (side-wager) kinds a line left out is a losing hand.
LINES = {
    "call": ("royal_flush", "straight_flush", "four_of_a_kind", "full_house", "flush",
             "straight", "three_of_a_kind", "two_pair", "one_pair", "ace_king"),
    "play": ("mini_royal", "straight_flush", "three_of_a_kind", "straight", "flush",
             "one_pair", "high_card"),
    "pair_bonus": ("mini_royal", "straight_flush", "three_of_a_kind", "straight", "flush",
                   "one_pair"),
    "prime": ("six_same_colour", "three_same_colour"),
    "all_six": ("six_card_royal_flush", "royal_flush", "straight_flush", "four_of_a_kind",
                "full_house", "flush", "straight", "three_of_a_kind"),
}
REQUIRED = ("call", "play")

DEFAULTS = {
    # Caribbean Poker call wager (qc-caribbean). The classic Caribbean Stud schedule; the
    # identical table is posted in regulation as 58 Pa. Code § 671a.12(d) (Lunar Poker,
    # Bet Wager). Loto-Québec's own posted table was not retrievable: configure yours.
    "call": {
        "name": "pa-671a.12d",
        "source": "classic Caribbean Stud call schedule = 58 Pa. Code § 671a.12(d)",
        "verified": True,
        "lines": {"royal_flush": 100, "straight_flush": 50, "four_of_a_kind": 20,
                  "full_house": 7, "flush": 5, "straight": 4, "three_of_a_kind": 3,
                  "two_pair": 2, "one_pair": 1, "ace_king": 1},
    },
    # Three Card Prime Play wager. The game's posted Play paytable (58 Pa. Code § 679a.12)
    # was not available to us: this placeholder pays even money on every line.
    "play": {
        "name": "placeholder-even",
        "source": "placeholder: even money (posted Three Card Prime Play table not "
                  "available)",
        "verified": False,
        "lines": {"mini_royal": 1, "straight_flush": 1, "three_of_a_kind": 1,
                  "straight": 1, "flush": 1, "one_pair": 1, "high_card": 1},
    },
    # Pair Bonus: the widely posted Three Card Poker Pair Plus schedule (40/30/6/4/1);
    # the mini-royal pays as a straight flush unless configured. Three Card Prime's
    # fourth "Pair Bonus card" (a deuce raises the win) is not modelled.
    "pair_bonus": {
        "name": "tcp-pair-plus-40-30-6-4-1",
        "source": "Three Card Poker Pair Plus schedule 40/30/6/4/1 (not Three Card "
                  "Prime's own)",
        "verified": False,
        "lines": {"mini_royal": 40, "straight_flush": 40, "three_of_a_kind": 30,
                  "straight": 6, "flush": 4, "one_pair": 1},
    },
    # Prime: the player's three cards of one colour 3 to 1; all six (player's and
    # dealer's) of one colour 4 to 1 (Wizard of Odds, Three Card Prime, rule 14;
    # 58 Pa. Code § 679a.7(d)(2)).
    "prime": {
        "name": "woo-prime-4-3",
        "source": "Wizard of Odds, Three Card Prime, rule 14",
        "verified": True,
        "lines": {"six_same_colour": 4, "three_same_colour": 3},
    },
    # All-Six Bonus (pa-all-six, PA (d)): the widely published Three Card Poker 6-Card
    # Bonus schedule; the six-card royal, which that schedule lacks, pays as a royal.
    "all_six": {
        "name": "tcp-6-card-bonus-1000",
        "source": "Three Card Poker 6-Card Bonus schedule 1000/200/50/25/20/10/5",
        "verified": False,
        "lines": {"six_card_royal_flush": 1000, "royal_flush": 1000,
                  "straight_flush": 200, "four_of_a_kind": 50, "full_house": 25,
                  "flush": 20, "straight": 10, "three_of_a_kind": 5},
    },
}


def _odds(kind, line, v):
    """N or [N, D] -> (N, D); anything else raises naming the line."""
    if type(v) is int:
        num, den = v, 1
    elif isinstance(v, (list, tuple)) and len(v) == 2 and type(v[0]) is int \
            and type(v[1]) is int:
        num, den = v[0], v[1]
    else:
        raise _bad("paytable %s line %s: odds must be an int N (N to 1) or "
                          "[N, D] (N to D), got %r" % (kind, line, v))
    if not 0 <= num <= _MAX_NUM or not 1 <= den <= _MAX_DEN:
        raise _bad("paytable %s line %s: odds %d to %d out of range (0..%d to "
                          "1..%d)" % (kind, line, num, den, _MAX_NUM, _MAX_DEN))
    return (num, den)


def validate(kind, lines):
    """A paytable override: dict line -> odds. Returns {line: (N, D)}; raises
    Refused (bad_config) naming the first wrong kind, line or value (nothing is changed)."""
    if kind not in LINES:
        raise _bad("unknown paytable %r (paytables: %s)"
                          % (kind, ", ".join(sorted(LINES))))
    known = LINES[kind]
    if isinstance(lines, (list, tuple)) and len(lines) == len(known):
        # The short form, one odds per line in LINES order (None: a line not on the
        # table, it loses): an authenticated command is at most 512 characters, and
        # Three Card Prime's three tables written as dicts do not fit one (issue 30).
        d = {}
        for i in range(len(known)):
            if lines[i] is not None:
                d[known[i]] = lines[i]
        lines = d
    if not isinstance(lines, dict) or not lines:
        raise _bad("paytable %s must be a non-empty dict of line -> odds, or a list of "
                   "%d odds in the order %s" % (kind, len(known), ", ".join(known)))
    out = {}
    for line in lines:
        if line not in known:
            raise _bad("paytable %s has no line %r (lines: %s)"
                              % (kind, line, ", ".join(known)))
        out[line] = _odds(kind, line, lines[line])
    if kind in REQUIRED:
        for line in known:
            if line not in out:
                raise _bad("paytable %s is missing line %s (every line is paid)"
                                  % (kind, line))
    return out


def default(kind):
    return validate(kind, DEFAULTS[kind]["lines"])


def unverified(kinds, overrides):
    """The tables in use (of `kinds`, given `overrides` as resolve() takes them) that are
    unverified defaults, as "KIND NAME" strings (empty: every table is verified or the
    casino's own)."""
    out = []
    for kind in kinds:
        v = overrides.get(kind) if isinstance(overrides, dict) else None
        d = DEFAULTS[kind]
        if (v is None or v == d["name"]) and not d["verified"]:
            out.append("%s %s" % (kind, d["name"]))
    return out


def resolve(kinds, overrides):
    """The paytables of one game: each of `kinds` from `overrides` if given there (a
    posted table replaces the default whole, never line by line), else the default."""
    if overrides is None:
        overrides = {}
    if not isinstance(overrides, dict):
        raise _bad("paytables must be a dict of kind -> lines, got %r"
                          % (overrides,))
    for kind in overrides:
        if kind not in kinds:
            raise _bad("paytable %r is not used by this game (it uses: %s)"
                              % (kind, ", ".join(kinds) or "none"))
    out = {}
    for kind in kinds:
        if kind in overrides:
            v = overrides[kind]
            if isinstance(v, str):
                # a published table by name (its kind's default is the only one we hold
                # of each kind: see the header)
                d = DEFAULTS[kind]
                if d["name"] != v:
                    raise _bad("paytable %s has no published table %r (published: %s; "
                               "or give its lines)" % (kind, v, d["name"]))
                v = d["lines"]
            out[kind] = validate(kind, v)
        else:
            out[kind] = default(kind)
    return out


def as_config(table):
    """Validated table -> plain data (odds N or [N, D]) for a JSON reply."""
    out = {}
    for line in table:
        n, d = table[line]
        out[line] = n if d == 1 else [n, d]
    return out
