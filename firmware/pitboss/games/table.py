# The round engine: one Table per game table. Everything a game decides for itself (its
# wagers, house rules, seats, deal order, what follows the deal, the decisions it takes,
# settlement) is in its module in pitboss.games, which this engine calls through one
# interface without knowing which game it runs.
#
#   t = Table({"game": "qc-caribbean", "seats": 7})      phase "configured"
#   t.wager(3, {"ante": 500})                             phase "wagers"
#   t.deal()                                              phase "dealing"
#   t.card_in(card_id, seq) ... (one card at a time, in casino deal order)
#     -> the game's AFTER_DEAL phase:
#        "setting" (Pai Gow: set_hand / set_house_way per seat)
#        "deciding" (Three Card Prime, Caribbean: decide(seat, play) per seat)
#        "ready" (showdown; or once every seat has set or decided)
#   t.settle() -> result dict                             phase "settled"
#   t.new_round()                                         phase "configured"
#
# Every refused input raises pitboss.errors.Refused, whose .code is a stable code and
# whose message names the culprit, and leaves the table exactly as it was: each method
# checks everything before it changes anything. Amounts are ints in the table's smallest
# unit. Results are plain dicts, lists, strs, ints and bools (the bench protocol sends
# them as JSON).
#
# Randomness (the Pai Gow dice) is injected: `rng(n)` returns an int in [0, n).
# Simulated rounds (host tools and tests) are in pitboss.sim.rounds, which no board imports.
from pitboss import games
from pitboss.rules.cards import JOKER, name, parse
from pitboss.compat import const, forget
from pitboss.errors import Refused
from pitboss.rules.profiles import get

CONFIGURED = "configured"
WAGERS = "wagers"
DEALING = "dealing"
SETTING = "setting"
DECIDING = "deciding"
READY = "ready"
SETTLED = "settled"

_MAX_WAGER = const(0x3FFFFFFF)  # < 2**30: a small int on every port


def _bad(message):
    return Refused("bad_config", message)


def _config(config):
    if not isinstance(config, dict):
        raise _bad("table config must be a dict, got %r" % (config,))
    for k in config:
        if k not in ("game", "seats", "house", "paytables"):
            raise _bad("unknown table setting %r (settings: game, seats, house, "
                       "paytables)" % (k,))
    game = config.get("game")
    g = games.module(game)  # Refused("unknown_game") for anything not in the registry
    p = get(game)
    most = g.MAX_SEATS
    seats = config.get("seats", most)
    if type(seats) is not int or not 1 <= seats <= most:
        raise _bad("seats must be an int in 1..%d for %s, got %r" % (most, game, seats))
    given = config.get("house")
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise _bad("house must be a dict of house rules, got %r" % (given,))
    for k in given:
        if k not in g.HOUSE:
            raise _bad("%r is not a house rule of %s (rules: %s)"
                       % (k, game, ", ".join(g.HOUSE) or "none"))
    # The paytable registry (every default with its source, the checks) is needed only
    # while a configuration is taken: imported here and dropped again, as the house
    # ways are (4.9 KB of a Pico's heap for good otherwise, measured; the survive
    # session went under its 64 KB floor). The games settle from the resolved tables;
    # Table.config() gives back the form kept here.
    from pitboss.rules import paytables

    pt = config.get("paytables")
    try:
        tables = paytables.resolve(g.PAYTABLES, pt)
        unverified = paytables.unverified(g.PAYTABLES, pt)
        shown = {}
        for k in tables:
            shown[k] = paytables.as_config(tables[k])
        for u in unverified:
            # an unverified default by its name (so a restored table stays one)
            k, _, n = u.partition(" ")
            shown[k] = n
    finally:
        forget("pitboss.rules.paytables")
    return {"game": game, "module": g, "profile": p, "seats": seats,
            "house": g.house(p, given), "paytables": tables, "unverified": unverified,
            "paytables_shown": shown}


def _who(r):
    return "the dealer" if r == 0 else "seat %d" % r


class Table:
    def __init__(self, config, rng=None):
        self._c = _config(config)  # raises Refused: nothing is built
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
        self._choices = {}    # seat -> the game's record of its decision (decide())
        self._rows = None     # the settled round, as the display shows it (settled_rows)

    def new_round(self):
        """Start a new round with the same configuration (also voids a round in play,
        e.g. after a misdeal)."""
        self._new()

    @property
    def game(self):
        return self._c["game"]

    @property
    def seat_count(self):
        """The seats configured (status()'s "seats" are those with wagers this round)."""
        return self._c["seats"]

    # What a game module reads (pitboss.games): the configuration in force and the round.
    @property
    def profile(self):
        return self._c["profile"]

    @property
    def house(self):
        """The validated house rules (keys starting "_" are derived, not configured)."""
        return self._c["house"]

    @property
    def paytables(self):
        return self._c["paytables"]

    @property
    def unverified(self):
        """The unverified default paytables in use ("KIND NAME"; paytables.unverified)."""
        return self._c["unverified"]

    @property
    def rng(self):
        return self._rng

    @property
    def dice(self):
        return self._dice

    @property
    def start(self):
        return self._start

    def seats_in_play(self):
        """Seats with a wager this round, in seat order."""
        return sorted(self._wagers)

    def in_play(self, seat):
        return seat in self._wagers

    def wagers(self, seat):
        return self._wagers[seat]

    def choice(self, seat):
        return self._choices[seat]

    def seat_head(self, s):
        """The first fields of a seat's settlement: seat, wagers, cards."""
        return {"seat": s, "wagers": dict(self._wagers[s]),
                "cards": [name(c) for c in self._hands[s]]}

    def decisions(self):
        """The decision verbs this game takes after the deal (choose())."""
        return self._c["module"].DECISIONS

    def config(self):
        """The configuration in force, as plain data."""
        h = {}
        for k in self._c["house"]:
            if k[0] != "_":
                h[k] = self._c["house"][k]
        return {"game": self.game, "seats": self._c["seats"], "house": h,
                "paytables": dict(self._c["paytables_shown"])}

    def status(self):
        nxt = self._order[self._next] if self.phase == DEALING else None
        return {"game": self.game, "round": self.round, "phase": self.phase,
                "seats": sorted(self._wagers), "dealt": self._next,
                "to_deal": len(self._order), "next": nxt}

    @property
    def dealt(self):
        """Cards dealt this round so far (status()'s "dealt", without building it)."""
        return self._next

    def recipients(self):
        """Who receives cards this round (0: the dealer or banker), in order."""
        return sorted(self._hands)

    def hand(self, seat):
        """Cards received so far by a seat (0: the dealer), in deal order."""
        return list(self._hands.get(seat, ()))

    def held(self, seat):
        """hand(), not copied: for a caller that only reads it (a settlement)."""
        return self._hands.get(seat, ())

    def shown(self, r, i):
        """Whether card i (0-based, in deal order) of recipient r may be shown before
        settlement: a playing seat's cards, and the dealer's cards its game deals face up
        (FACE_UP); never the dealer's or banker's others, nor the packets of empty Pai Gow
        positions. Everything is shown once the round is settled."""
        if self.phase == SETTLED:
            return True
        if r == 0:
            return i in self._c["module"].FACE_UP
        return r in self._wagers

    def shown_hand(self, r):
        """A recipient's cards as the bench may see them: names, None where hidden."""
        h = self._hands.get(r, ())
        return [name(h[i]) if self.shown(r, i) else None for i in range(len(h))]

    def _phase(self, *allowed):
        if self.phase not in allowed:
            raise Refused("wrong_phase", "not allowed in phase %s (only in %s)"
                          % (self.phase, ", ".join(allowed)))

    def _seat(self, seat, occupied=True):
        if type(seat) is not int or not 1 <= seat <= self._c["seats"]:
            raise Refused("unknown_seat", "seat must be an int in 1..%d, got %r"
                          % (self._c["seats"], seat))
        if occupied and seat not in self._wagers:
            raise Refused("empty_seat", "seat %d has no wager this round" % seat)
        return seat

    # ---- wagers --------------------------------------------------------------------
    def wager(self, seat, wagers):
        """Place (replace) a seat's wagers for this round: {kind: amount}; {} removes
        the seat from the round."""
        self._phase(CONFIGURED, WAGERS)
        self.check_wager(seat, wagers)
        if wagers:
            self._wagers[seat] = dict(wagers)
        elif seat in self._wagers:
            del self._wagers[seat]
        self.phase = WAGERS if self._wagers else CONFIGURED

    def check_wager(self, seat, wagers):
        """Everything wager() checks but the phase, changing nothing: the controller asks
        before it opens the next round for a wager after a settled one, so a refused
        wager opens nothing."""
        self._seat(seat, occupied=False)
        g = self._c["module"]
        if not isinstance(wagers, dict):
            raise Refused("bad_wager", "wagers must be a dict of kind -> amount, got %r"
                          % (wagers,))
        for k in wagers:
            if k not in g.WAGERS:
                raise Refused("bad_wager", "%r is not a wager of %s (wagers: %s)"
                              % (k, self.game, ", ".join(g.WAGERS)))
            v = wagers[k]
            if type(v) is not int or not 1 <= v <= _MAX_WAGER:
                raise Refused("bad_wager", "seat %d %s must be an int amount in 1..%d "
                              "(smallest units), got %r" % (seat, k, _MAX_WAGER, v))
        if wagers and g.MAIN not in wagers:
            raise Refused("bad_wager", "seat %d: the %s wager is required (side wagers "
                          "ride with it)" % (seat, g.MAIN))

    # ---- the deal ------------------------------------------------------------------
    def deal(self, dice=None):
        """Close the wagers and fix the deal order (the game's). A game dealt with dice
        (Pai Gow) takes their total (3..18); without it the injected rng rolls them."""
        self._phase(WAGERS)
        g = self._c["module"]
        if dice is not None and not g.DICE:
            raise Refused("bad_dice", "%s is dealt without dice" % self.game)
        order, start, dice = g.deal_order(self, dice)
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
        checked against the deal order. Returns who got it (card_reply)."""
        return self.card_reply(self.take_card(card, seq, seat))

    def card_reply(self, who):
        """The reply for the card take_card() just gave `who` (built after the shoe's
        acknowledgement on a card's path: a dict is three heap blocks, issue 27). A
        face-down card is not named (None): the reply is read on the bench port."""
        h = self._hands[who]
        return {"seq": self._next, "card": name(h[-1]) if self.shown(who, len(h) - 1)
                else None, "to": who, "count": len(h),
                "complete": self._next == len(self._order)}

    def take_card(self, card, seq=None, seat=None):
        """card_in's checks and state, with no reply: who got the card. Raises Refused,
        changing nothing."""
        if self.phase != DEALING:
            if self.phase in (SETTING, DECIDING, READY, SETTLED):
                # The card is not named: one the shoe sends after the deal is undealt.
                raise Refused("deal_complete", "the deal is complete (%d cards): a card "
                              "after it is refused" % len(self._order))
            raise Refused("wrong_phase", "no deal in progress (phase %s): deal() first"
                          % self.phase)
        # (an id: parse()'s call only for a name, or an id it refuses; a card's path)
        cid = card if type(card) is int and 0 <= card <= JOKER else parse(card)
        if cid == JOKER and not self._c["profile"].joker:
            raise Refused("joker_not_allowed", "%s is played without a joker" % self.game)
        n = self._next
        if seq is not None:
            if type(seq) is not int or seq < 1:
                raise Refused("bad_seq", "seq must be a positive int, got %r" % (seq,))
            if seq <= n:
                raise Refused("bad_seq", "card seq %d was already received (next is %d)"
                              % (seq, n + 1))
            if seq > n + 1:
                raise Refused("bad_seq", "card seq %d but %d expected: %d card(s) missed"
                              % (seq, n + 1, seq - n - 1))
        if self._seen[cid]:
            for r in self._hands:
                if cid in self._hands[r]:
                    if not self.shown(r, self._hands[r].index(cid)):
                        # Naming it would reveal a face-down card (issue 12, leaks).
                        raise Refused("duplicate_card", "card %d of the deal was already "
                                      "dealt this round, face down" % (n + 1))
                    raise Refused("duplicate_card", "card %s was already dealt this round"
                                  " (to %s)" % (name(cid), _who(r)))
        who = self._order[n]
        if seat is not None and (type(seat) is not int
                                 or not 0 <= seat <= self._c["seats"]):
            raise Refused("unknown_seat", "seat must be 0 (dealer) or 1..%d, got %r"
                          % (self._c["seats"], seat))
        if seat is not None and seat != who:
            if seat not in self._hands:
                raise Refused("empty_seat", "card %s read at seat %d, which has no wager "
                              "(card %d of the deal goes to %s)"
                              % (name(cid), seat, n + 1, _who(who)))
            raise Refused("wrong_seat", "card %s read at %s but card %d of the deal goes "
                          "to %s" % (name(cid), _who(seat), n + 1, _who(who)))
        self._seen[cid] = 1
        self._hands[who].append(cid)
        self._next = n + 1
        if self._next == len(self._order):
            self.phase = self._c["module"].AFTER_DEAL
        return who

    # ---- players' decisions --------------------------------------------------------
    def choose(self, seat, verb, ev=None):
        """One seat's decision after the deal: `verb` is one of decisions() ("set" and
        "hw" at Pai Gow, "decide" at Three Card Prime and Caribbean), `ev` its arguments
        (as journalled: {"high": .., "low": ..}, {"play": True}). Returns the game's
        reply."""
        g = self._c["module"]
        if verb not in g.DECISIONS:
            raise Refused("wrong_phase", "%s takes no %r decision (it takes: %s)"
                          % (self.game, verb, ", ".join(g.DECISIONS) or "none"))
        self._phase(g.AFTER_DEAL)
        self._seat(seat)
        choice, reply = g.decide(self, seat, verb, ev if ev is not None else {})
        self._choices[seat] = choice
        for s in self._wagers:
            if s not in self._choices:
                return reply
        self.phase = READY
        return reply

    # The decisions by name, for callers that know the game they run.
    def set_hand(self, seat, high, low):
        """Pai Gow: the player's setting (five-card high hand, two-card low hand)."""
        return self.choose(seat, "set", {"high": high, "low": low})

    def set_house_way(self, seat):
        """Pai Gow: set a player's hand the house way (a player may ask for it)."""
        return self.choose(seat, "hw")

    def decide(self, seat, play):
        """Three Card Prime / Caribbean: True plays (Play = ante; Call = 2 x ante),
        False folds."""
        return self.choose(seat, "decide", {"play": play})

    # ---- settlement ----------------------------------------------------------------
    def settle(self):
        """Settle every wager of the round: the result dict (what the display shows of
        it is kept: settled_rows())."""
        if self.phase == DEALING:
            raise Refused("wrong_count", "the deal is incomplete: %d of %d cards "
                          "received" % (self._next, len(self._order)))
        self._phase(READY)
        r = self._c["module"].settle_round(self)
        net = 0
        for s in r["seats"]:
            net += s["amount"]
        r["game"] = self.game
        r["round"] = self.round
        r["house_net"] = -net
        # Not the result itself: a settled six-seat Pai Gow round is ~5.4 KB of objects
        # on a Pico (measured, issue 11), held until the next round opens, which is where
        # exports and recalls run and the heap is lowest. Its journal record has it all.
        # What the display shows (settled_rows), worked out here (a function would be
        # one more name in the chip's qstr pools)
        # A low hand's ranks as the dealer reads them: "As Kd" / "Jk=A" -> "AK", each
        # card's first character after its last "=" (rfind and a one-character index:
        # no split lists, generator or join per hand; issue 27's settlement).
        b = r.get("banker")
        d = r.get("dealer")
        if b is not None:
            word = ""
            for c in b["low"]:
                word += c[c.rfind("=") + 1]
            head = (1, b["high_category"], word)
        elif d is not None:
            head = (0, d["category"], d["qualifies"])
        else:
            head = None
        seats = []
        for x in r["seats"]:
            if "low" in x:
                word = None
                if x.get("outcome") != "foul":
                    word = ""
                    for c in x["low"]:
                        word += c[c.rfind("=") + 1]
            else:
                word = x.get("category") or ""
            seats.append((x["seat"], x["amount"], word))
        self._rows = (head, tuple(seats))
        self.phase = SETTLED
        return r

    def settled_rows(self):
        """What the dealer's display shows after settlement (TableDisplay.result, the
        pay screen of issue 30): (head, seats). head: (1, banker's high category,
        banker's low hand's ranks) at Pai Gow, (0, dealer's category, qualifies) at the
        dealer games, None at showdown; seats: ((seat, net amount, word), ...), word the
        seat's low hand's ranks at Pai Gow (None for a foul), else its hand's category.
        None before settlement. (Not the result itself: issue 11's heap.)"""
        return self._rows
