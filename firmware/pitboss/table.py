# The round engine: one Table per game table; games are profiles plus the few rules of
# their own (paigow, threecard, caribbean, showdown).
#
#   t = Table({"game": "qc-caribbean", "seats": 7})      phase "configured"
#   t.wager(3, {"ante": 500})                             phase "wagers"
#   t.deal()                                              phase "dealing"
#   t.card_in(card_id, seq) ... (one card at a time, in casino deal order)
#     -> "setting" (Pai Gow: set_hand / set_house_way per seat)
#     -> "deciding" (Three Card Prime, Caribbean: decide(seat, play) per seat)
#     -> "ready" (showdown; or once every seat has set or decided)
#   t.settle() -> result dict                             phase "settled"
#   t.new_round()                                         phase "configured"
#
# Every refused input raises a CardError (TableError for table rules, ConfigError for
# configuration) whose .kind is a stable code and whose message names the culprit, and
# leaves the table exactly as it was: each method checks everything before it changes
# anything. Amounts are ints in the table's smallest unit. Results are plain dicts,
# lists, strs, ints and bools (the bench protocol sends them as JSON).
#
# Randomness (the Pai Gow dice) is injected: `rng(n)` returns an int in [0, n).
# simulate_round() uses pitboss.rng's xorshift32 so CPython and MicroPython shuffle alike.
from pitboss import caribbean, evaluator, paigow, paytables, showdown, threecard
from pitboss.cards import CardError, JOKER, name, parse, parse_hand
from pitboss.compat import const
from pitboss.paytables import ConfigError
from pitboss.profiles import get
from pitboss.rng import XorShift32

CONFIGURED = "configured"
WAGERS = "wagers"
DEALING = "dealing"
SETTING = "setting"
DECIDING = "deciding"
READY = "ready"
SETTLED = "settled"

_MAX_SEATS = const(7)
_PAIGOW_SEATS = const(6)  # positions 2-7; position 1 is the banker's
_MAX_WAGER = const(0x3FFFFFFF)  # < 2**30: a small int on every port

GAMES = ("pr-pai-gow", "pr-pai-gow-a5-low", "pa-three-card-prime", "qc-caribbean",
         "nj-5card", "nj-3card")
_FAMILY = {"pr-pai-gow": "paigow", "pr-pai-gow-a5-low": "paigow",
           "pa-three-card-prime": "threecard", "qc-caribbean": "caribbean",
           "nj-5card": "showdown", "nj-3card": "showdown"}
_WAGERS = {"paigow": ("wager",), "threecard": threecard.WAGERS,
           "caribbean": caribbean.WAGERS, "showdown": showdown.WAGERS}
_MAIN = {"paigow": "wager", "threecard": "ante", "caribbean": "ante", "showdown": "ante"}
_PAYTABLES = {"paigow": (), "threecard": threecard.PAYTABLES,
              "caribbean": caribbean.PAYTABLES, "showdown": showdown.PAYTABLES}
_HOUSE = {
    "paigow": ("commission_bps", "commission_rounding", "commission_unit", "foul",
               "two_pair"),
    "threecard": ("bad_beat",),
    "caribbean": (),
    "showdown": ("hole",),
}


class TableError(CardError):
    """A table rule refused the input: .kind names which (see docs/games.md)."""


def family(game):
    if game not in _FAMILY:
        raise CardError("unknown_game", "%r is not a table game (games: %s)"
                        % (game, ", ".join(GAMES)))
    return _FAMILY[game]


def _int_in(what, v, lo, hi):
    if type(v) is not int or not lo <= v <= hi:
        raise ConfigError("%s must be an int in %d..%d, got %r" % (what, lo, hi, v))
    return v


def _choice(what, v, options):
    if v not in options:
        raise ConfigError("%s must be one of %s, got %r" % (what, ", ".join(options), v))
    return v


def _house(fam, p, given):
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise ConfigError("house must be a dict of house rules, got %r" % (given,))
    allowed = _HOUSE[fam]
    for k in given:
        if k not in allowed:
            raise ConfigError("%r is not a house rule of %s (rules: %s)"
                              % (k, p.id, ", ".join(allowed) or "none"))
    h = {}
    if fam == "paigow":
        h["commission_bps"] = _int_in("commission_bps", given.get("commission_bps", 500),
                                      0, 10000)
        h["commission_rounding"] = _choice("commission_rounding",
                                           given.get("commission_rounding", "down"),
                                           ("down", "up"))
        h["commission_unit"] = _int_in("commission_unit", given.get("commission_unit", 1),
                                       1, 1000000)
        h["foul"] = _choice("foul", given.get("foul", "lose"),
                            ("lose", "house_way", "reject"))
        h["two_pair"] = given.get("two_pair", paigow.TRUMP_PLAZA)
        h["_two_pair"] = paigow.two_pair_rule(h["two_pair"])
    elif fam == "threecard":
        h["bad_beat"] = _choice("bad_beat", given.get("bad_beat", "straight"),
                                ("straight", "flush", "none"))
    elif fam == "showdown":
        # 7 seats x 7 cards = 49: a 52-card deck always suffices
        h["hole"] = _int_in("hole", given.get("hole", p.size), p.size, 7)
    return h


def _config(config):
    if not isinstance(config, dict):
        raise ConfigError("table config must be a dict, got %r" % (config,))
    for k in config:
        if k not in ("game", "seats", "house", "paytables"):
            raise ConfigError("unknown table setting %r (settings: game, seats, house, "
                              "paytables)" % (k,))
    game = config.get("game")
    fam = family(game)
    p = get(game)
    most = _PAIGOW_SEATS if fam == "paigow" else _MAX_SEATS
    seats = config.get("seats", most)
    if type(seats) is not int or not 1 <= seats <= most:
        raise ConfigError("seats must be an int in 1..%d for %s, got %r"
                          % (most, game, seats))
    return {"game": game, "family": fam, "profile": p, "seats": seats,
            "house": _house(fam, p, config.get("house")),
            "paytables": paytables.resolve(_PAYTABLES[fam], config.get("paytables"))}


def _who(r):
    return "the dealer" if r == 0 else "seat %d" % r


class Table:
    def __init__(self, config, rng=None):
        self._c = _config(config)  # raises ConfigError / CardError: nothing is built
        self._rng = rng
        self.round = 0
        self._new()

    # ---- state ---------------------------------------------------------------------
    def _new(self):
        self.phase = CONFIGURED
        self.round += 1
        self._wagers = {}     # seat -> {kind: amount}
        self._order = []      # recipient of each card in deal order (0 = dealer)
        self._hands = {}      # recipient -> card ids in the order received
        self._seen = bytearray(53)
        self._next = 0
        self._dice = None
        self._start = None
        self._set = {}        # Pai Gow: seat -> (high, low, foul, set_by)
        self._decided = {}    # Three Card Prime / Caribbean: seat -> bool
        self._result = None

    def new_round(self):
        """Start a new round with the same configuration (also voids a round in play,
        e.g. after a misdeal)."""
        self._new()

    @property
    def game(self):
        return self._c["game"]

    def config(self):
        """The configuration in force, as plain data."""
        h = {}
        for k in self._c["house"]:
            if k[0] != "_":
                h[k] = self._c["house"][k]
        pt = {}
        for k in self._c["paytables"]:
            pt[k] = paytables.as_config(self._c["paytables"][k])
        return {"game": self.game, "seats": self._c["seats"], "house": h,
                "paytables": pt}

    def status(self):
        nxt = self._order[self._next] if self.phase == DEALING else None
        return {"game": self.game, "round": self.round, "phase": self.phase,
                "seats": sorted(self._wagers), "dealt": self._next,
                "to_deal": len(self._order), "next": nxt}

    def recipients(self):
        """Who receives cards this round (0: the dealer or banker), in order."""
        return sorted(self._hands)

    def hand(self, seat):
        """Cards received so far by a seat (0: the dealer), in deal order."""
        return list(self._hands.get(seat, ()))

    def _phase(self, *allowed):
        if self.phase not in allowed:
            raise TableError("wrong_phase", "not allowed in phase %s (only in %s)"
                             % (self.phase, ", ".join(allowed)))

    def _seat(self, seat, occupied=True):
        if type(seat) is not int or not 1 <= seat <= self._c["seats"]:
            raise TableError("unknown_seat", "seat must be an int in 1..%d, got %r"
                             % (self._c["seats"], seat))
        if occupied and seat not in self._wagers:
            raise TableError("empty_seat", "seat %d has no wager this round" % seat)
        return seat

    # ---- wagers --------------------------------------------------------------------
    def wager(self, seat, wagers):
        """Place (replace) a seat's wagers for this round: {kind: amount}; {} removes
        the seat from the round."""
        self._phase(CONFIGURED, WAGERS)
        self._seat(seat, occupied=False)
        fam = self._c["family"]
        if not isinstance(wagers, dict):
            raise TableError("bad_wager", "wagers must be a dict of kind -> amount, got %r"
                             % (wagers,))
        kinds = _WAGERS[fam]
        for k in wagers:
            if k not in kinds:
                raise TableError("bad_wager", "%r is not a wager of %s (wagers: %s)"
                                 % (k, self.game, ", ".join(kinds)))
            v = wagers[k]
            if type(v) is not int or not 1 <= v <= _MAX_WAGER:
                raise TableError("bad_wager", "seat %d %s must be an int amount in 1..%d "
                                 "(smallest units), got %r" % (seat, k, _MAX_WAGER, v))
        if wagers and _MAIN[fam] not in wagers:
            raise TableError("bad_wager", "seat %d: the %s wager is required (side wagers "
                             "ride with it)" % (seat, _MAIN[fam]))
        if wagers:
            self._wagers[seat] = dict(wagers)
        elif seat in self._wagers:
            del self._wagers[seat]
        self.phase = WAGERS if self._wagers else CONFIGURED

    # ---- the deal ------------------------------------------------------------------
    def deal(self, dice=None):
        """Close the wagers and fix the deal order. Pai Gow: `dice` is the three dice's
        total (3..18); without it the injected rng rolls them."""
        self._phase(WAGERS)
        fam = self._c["family"]
        seats = sorted(self._wagers)
        order = []
        start = None
        if fam == "paigow":
            if dice is None:
                if self._rng is None:
                    raise TableError("no_dice", "Pai Gow needs the dice total (deal(dice=))"
                                     " or an injected rng")
                dice = self._rng(6) + self._rng(6) + self._rng(6) + 3
            if type(dice) is not int or not 3 <= dice <= 18:
                raise TableError("bad_dice", "dice total must be an int in 3..18, got %r"
                                 % (dice,))
            # Positions 1-7 counted counter-clockwise from the banker's (1); the dice
            # total counted from the banker's position picks the first packet's
            # position; seven packets of seven follow in position order, empty positions
            # included (their packets go to the discards); four cards are left over.
            start = (dice - 1) % 7 + 1
            for i in range(7):
                pos = (start - 1 + i) % 7 + 1
                order += [pos - 1] * 7  # position 1 -> 0 (banker), k -> seat k-1
        elif dice is not None:
            raise TableError("bad_dice", "%s is dealt without dice" % self.game)
        elif fam == "showdown":
            # One card at a time to each seat in seat order, `hole` rounds; no dealer.
            for _ in range(self._c["house"]["hole"]):
                order += seats
        else:
            # One card at a time to each seat in seat order, then the dealer, until each
            # has three (Three Card Prime) or five (Caribbean).
            for _ in range(self._c["profile"].size):
                order += seats + [0]
        self._order = order
        self._hands = {}
        for r in order:
            self._hands[r] = []
        self._dice = dice
        self._start = start
        self.phase = DEALING
        return {"order": list(order), "start": start, "dice": dice}

    def card_in(self, card, seq=None, seat=None):
        """One card from the shoe. seq: the shoe's 1-based count for this round (a
        repeat or a gap is refused); seat: where a reader saw it land (0 = dealer),
        checked against the deal order. Returns who got it."""
        if self.phase != DEALING:
            if self.phase in (SETTING, DECIDING, READY, SETTLED):
                raise TableError("deal_complete", "the deal is complete (%d cards): card "
                                 "%r refused" % (len(self._order), card))
            raise TableError("wrong_phase", "no deal in progress (phase %s): deal() first"
                             % self.phase)
        cid = parse(card)
        if cid == JOKER and not self._c["profile"].joker:
            raise CardError("joker_not_allowed", "%s is played without a joker" % self.game)
        n = self._next
        if seq is not None:
            if type(seq) is not int or seq < 1:
                raise TableError("bad_seq", "seq must be a positive int, got %r" % (seq,))
            if seq <= n:
                raise TableError("bad_seq", "card seq %d was already received (next is %d)"
                                 % (seq, n + 1))
            if seq > n + 1:
                raise TableError("bad_seq", "card seq %d but %d expected: %d card(s) "
                                 "missed" % (seq, n + 1, seq - n - 1))
        if self._seen[cid]:
            for r in self._hands:
                if cid in self._hands[r]:
                    raise CardError("duplicate_card", "card %s was already dealt this round"
                                    " (to %s)" % (name(cid), _who(r)))
        who = self._order[n]
        if seat is not None and (type(seat) is not int
                                 or not 0 <= seat <= self._c["seats"]):
            raise TableError("unknown_seat", "seat must be 0 (dealer) or 1..%d, got %r"
                             % (self._c["seats"], seat))
        if seat is not None and seat != who:
            if seat not in self._hands:
                raise TableError("empty_seat", "card %s read at seat %d, which has no wager "
                                 "(card %d of the deal goes to %s)"
                                 % (name(cid), seat, n + 1, _who(who)))
            raise TableError("wrong_seat", "card %s read at %s but card %d of the deal goes "
                             "to %s" % (name(cid), _who(seat), n + 1, _who(who)))
        self._seen[cid] = 1
        self._hands[who].append(cid)
        self._next = n + 1
        done = self._next == len(self._order)
        if done:
            self._dealt()
        return {"seq": n + 1, "card": name(cid), "to": who,
                "count": len(self._hands[who]), "complete": done}

    def _dealt(self):
        fam = self._c["family"]
        if fam == "paigow":
            self.phase = SETTING
        elif fam == "showdown":
            self.phase = READY
        else:
            self.phase = DECIDING

    # ---- players' choices ----------------------------------------------------------
    def set_hand(self, seat, high, low):
        """Pai Gow: the player's setting (five-card high hand, two-card low hand)."""
        self._phase(SETTING)
        self._seat(seat)
        p = self._c["profile"]
        high = parse_hand(high)  # "As Kd ..." or a sequence of names / ids
        low = parse_hand(low)
        paigow.check_setting(self._hands[seat], high, low)
        foul = paigow.is_foul(p, high, low)
        set_by = "player"
        rule = self._c["house"]["foul"]
        if foul and rule == "reject":
            raise TableError("foul", "seat %d: the high hand %s does not outrank the low "
                             "hand %s" % (seat, " ".join(name(c) for c in high),
                                          " ".join(name(c) for c in low)))
        if foul and rule == "house_way":
            high, low, _ = paigow.house_way(p, self._hands[seat],
                                            self._c["house"]["_two_pair"])
            set_by = "house_way"
        self._set[seat] = (high, low, foul, set_by)
        self._maybe_ready(self._set)
        return {"seat": seat, "foul": foul, "set_by": set_by,
                "high": [name(c) for c in high], "low": [name(c) for c in low]}

    def set_house_way(self, seat):
        """Pai Gow: set a player's hand the house way (a player may ask for it)."""
        self._phase(SETTING)
        self._seat(seat)
        high, low, rule = paigow.house_way(self._c["profile"], self._hands[seat],
                                           self._c["house"]["_two_pair"])
        self._set[seat] = (high, low, False, "house_way")
        self._maybe_ready(self._set)
        return {"seat": seat, "foul": False, "set_by": "house_way", "rule": rule,
                "high": [name(c) for c in high], "low": [name(c) for c in low]}

    def decide(self, seat, play):
        """Three Card Prime / Caribbean: True plays (Play = ante; Call = 2 x ante),
        False folds."""
        self._phase(DECIDING)
        self._seat(seat)
        if type(play) is not bool:
            raise TableError("bad_decision", "seat %d: play must be True (play/call) or "
                             "False (fold), got %r" % (seat, play))
        self._decided[seat] = play
        self._maybe_ready(self._decided)
        return {"seat": seat, "play": play}

    def _maybe_ready(self, done):
        for s in self._wagers:
            if s not in done:
                return
        self.phase = READY

    # ---- settlement ----------------------------------------------------------------
    def settle(self):
        """Settle every wager of the round: the result dict (also kept: result())."""
        if self.phase == DEALING:
            raise CardError("wrong_count", "the deal is incomplete: %d of %d cards "
                            "received" % (self._next, len(self._order)))
        self._phase(READY)
        fam = self._c["family"]
        if fam == "paigow":
            r = self._settle_paigow()
        elif fam == "showdown":
            r = self._settle_showdown()
        else:
            r = self._settle_dealer(fam)
        net = 0
        for s in r["seats"]:
            net += s["amount"]
        r["game"] = self.game
        r["round"] = self.round
        r["house_net"] = -net
        self._result = r
        self.phase = SETTLED
        return r

    def result(self):
        return self._result

    def _seat_head(self, s):
        return {"seat": s, "wagers": dict(self._wagers[s]),
                "cards": [name(c) for c in self._hands[s]]}

    def _settle_paigow(self):
        p = self._c["profile"]
        low = paigow.LOW
        h = self._c["house"]
        bh, bl, brule = paigow.house_way(p, self._hands[0], h["_two_pair"])
        bhs = evaluator.score(p, bh)
        bls = evaluator.score(low, bl)
        seats = []
        for s in sorted(self._wagers):
            high, lo, foul, set_by = self._set[s]
            hs = evaluator.score(p, high)
            ls = evaluator.score(low, lo)
            # A foul hand reset by the house way is settled as reset (foul rule
            # "house_way"); under "lose" it loses whatever it holds.
            lose = foul and h["foul"] == "lose"
            x = paigow.settle(self._wagers[s]["wager"], hs, ls, bhs, bls, lose,
                              h["commission_bps"], h["commission_rounding"],
                              h["commission_unit"])
            d = self._seat_head(s)
            d.update({"high": evaluator.played(p, high), "low": evaluator.played(low, lo),
                      "high_category": p.category(hs), "low_category": low.category(ls),
                      "foul": foul, "set_by": set_by})
            d.update(x)
            seats.append(d)
        discards = []
        for r in sorted(self._hands):  # the same order on every port
            if r != 0 and r not in self._wagers:
                discards += [name(c) for c in self._hands[r]]
        banker = {"cards": [name(c) for c in self._hands[0]],
                  "high": evaluator.played(p, bh), "low": evaluator.played(low, bl),
                  "high_category": p.category(bhs), "low_category": low.category(bls),
                  "rule": brule}
        return {"dice": self._dice, "start": self._start, "banker": banker,
                "discards": discards, "seats": seats}

    def _settle_dealer(self, fam):
        p = self._c["profile"]
        dealer = self._hands[0]
        ds = evaluator.score(p, dealer)
        mod = threecard if fam == "threecard" else caribbean
        seats = []
        for s in sorted(self._wagers):
            cards = self._hands[s]
            if fam == "threecard":
                x = threecard.settle(self._wagers[s], cards, dealer, self._decided[s],
                                     self._c["paytables"], self._c["house"]["bad_beat"])
            else:
                x = caribbean.settle(self._wagers[s], cards, dealer, self._decided[s],
                                     self._c["paytables"])
            d = self._seat_head(s)
            d["hand"] = evaluator.played(p, cards)
            d["decision"] = "play" if self._decided[s] else "fold"
            d.update(x)
            seats.append(d)
        return {"dealer": {"cards": [name(c) for c in dealer],
                           "hand": evaluator.played(p, dealer),
                           "category": p.category(ds), "qualifies": mod.qualifies(ds)},
                "seats": seats}

    def _settle_showdown(self):
        p = self._c["profile"]
        hands = {}
        antes = {}
        for s in self._wagers:
            hands[s] = self._hands[s]
            antes[s] = self._wagers[s]["ante"]
        x = showdown.settle(p, hands, antes)
        seats = []
        for s in sorted(self._wagers):
            d = self._seat_head(s)
            d.update(x["seats"][s])
            seats.append(d)
        return {"pot": x["pot"], "winners": x["winners"], "seats": seats}


# ---- deterministic simulation --------------------------------------------------------

def shuffled(n, rng):
    """Cards 0..n-1 shuffled by an rng.XorShift32 (Fisher-Yates from the end)."""
    return rng.shuffle(list(range(n)))


def sim_wagers(fam, rng):
    # Odd amounts on purpose: they exercise the rounding of commission and odds.
    if fam == "paigow":
        return {"wager": 5 + rng.below(996)}
    if fam == "threecard":
        return {"ante": 5 + rng.below(496), "pair_bonus": 1 + rng.below(100),
                "prime": 1 + rng.below(100), "all_six": 1 + rng.below(100)}
    return {"ante": 5 + rng.below(496)}


def simulate_round(game, seats, seed, config=None):
    """Shuffle (rng.XorShift32 seeded with `seed`), deal, play and settle one round.

    seats: a count (seats 1..n), a list of seat numbers (wagers drawn from the rng), or
    {seat: wagers}. Pai Gow players are set the house way; Three Card Prime players play
    Q-6-4 or better, Caribbean players call with ace-king or better. Returns settle()."""
    fam = family(game)
    rng = XorShift32(seed)
    cfg = {}
    if config:
        for k in config:
            cfg[k] = config[k]
    cfg["game"] = game
    if isinstance(seats, int):
        seat_list = list(range(1, seats + 1))
        given = None
    elif isinstance(seats, dict):
        seat_list = sorted(seats)
        given = seats
    else:
        seat_list = sorted(seats)
        given = None
    t = Table(cfg, rng=rng.below)
    for s in seat_list:
        t.wager(s, given[s] if given else sim_wagers(fam, rng))
    p = get(game)
    deck = shuffled(p.deck, rng)
    t.deal()
    i = 0
    while t.phase == DEALING:
        t.card_in(deck[i], seq=i + 1)
        i += 1
    if t.phase == SETTING:
        for s in seat_list:
            t.set_house_way(s)
    elif t.phase == DECIDING:
        for s in seat_list:
            t.decide(s, plays(game, t.hand(s)))
    return t.settle()


def plays(game, hand):
    """The simulated player's decision: Three Card Prime plays Q-6-4 or better, Caribbean
    calls with ace-king or better."""
    at = threecard.PLAY_AT if family(game) == "threecard" else caribbean.CALL_AT
    return evaluator.score(get(game), hand) >= at
