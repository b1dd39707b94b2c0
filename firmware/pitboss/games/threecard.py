# Three Card Prime (pa-three-card-prime; All-Six Bonus pa-all-six): dealer qualification,
# Ante and Play, and the Pair Bonus, Prime and All-Six Bonus side wagers.
#
# Ranks: shared/rules/ (beside the repository) pennsylvania-three-card-prime-ranks.txt (PA (a)-(d)).
# Round procedure: 58 Pa. Code § 679a.1 ("Qualify": the dealer's hand is a queen high or
# better; "Bad Beat Bonus": a payout on the Play Wager when the player's hand is a flush
# or higher, or a straight or higher, depending on the paytable, but loses to the
# dealer's) and § 679a.7(d) (Ante then a Play Wager equal to it; Prime wins when all
# three of the player's cards are of one colour; Pair Bonus on a pair or better), with
# the settlement order of the Wizard of Odds' Three Card Prime rules 7-14 (quoted below).
from pitboss.rules import evaluator
from pitboss.rules.cards import parse_hand
from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.games import dealer
from pitboss.games.dealer import deal_order, decide  # noqa: F401 (the interface)
from pitboss.games.dealer import pays
from pitboss.rules.profiles import get

GAME = "pa-three-card-prime"
WAGERS = ("ante", "pair_bonus", "prime", "all_six")  # "play" is added when playing
MAIN = "ante"
PAYTABLES = ("play", "pair_bonus", "prime", "all_six")
HOUSE = ("bad_beat",)
MAX_SEATS = const(7)
DICE = False
AFTER_DEAL = "deciding"
FACE_UP = ()  # the dealer's three cards stay face down until settlement
DECISIONS = ("decide",)

# The thresholds are scores of hands, computed by the evaluator on first use (nothing is
# ranked at import): [QUALIFY, bad beat "straight", bad beat "flush", PLAY_AT].
# QUALIFY: "The dealer needs a queen high or better to qualify": the lowest such hand
# is Q-3-2. Bad beat: the lowest hands that earn the Bad Beat payout (PA (a): A-2-3 is
# the lowest straight; 2-3-5 suited the lowest flush, 2-3-4 suited being a straight
# flush). PLAY_AT, simulation only: the player plays Q-6-4 or better (the usual Three
# Card Poker advice).
_LOWEST = ("Qs 3h 2d", "As 2h 3d", "2s 3s 5s", "Qs 6h 4d")
_at = None
_NO_BAD_BEAT = const(0x40000000)  # 1 << 30: above every score


def profile():
    return get(GAME)


def _thresholds():
    global _at
    if _at is None:
        p = profile()
        _at = [evaluator.score(p, parse_hand(h)) for h in _LOWEST]
    return _at


def bad_beat_at(rule):
    """The lowest score paid by the Bad Beat rule "straight", "flush" or "none"."""
    if rule == "none":
        return _NO_BAD_BEAT
    return _thresholds()[1 if rule == "straight" else 2]


def play_at():
    return _thresholds()[3]


def qualifies(dealer_score):
    return dealer_score >= _thresholds()[0]


def red(c):
    return (c & 3) in (1, 2)  # suits s h d c: hearts and diamonds are red


def _one_colour(cards):
    first = red(cards[0])
    for c in cards:
        if red(c) != first:
            return False
    return True


def prime_line(player, dealer):
    """Prime: "pays at least 3 to 1 if the player's three cards are the same color. If
    all six cards between the player and dealer hands are the same color, then it pays
    4 to 1" (Wizard of Odds, Three Card Prime, rule 14)."""
    if not _one_colour(player):
        return None
    if _one_colour(list(player) + list(dealer)):
        return "six_same_colour"
    return "three_same_colour"


def _wager(amount, outcome, line=None, odds=None):
    if outcome == "win":
        won = pays(amount, odds) if odds is not None else amount
    elif outcome == "lose":
        won = -amount
    else:
        won = 0
    out = {"wager": amount, "outcome": outcome, "amount": won}
    if line is not None:
        out["line"] = line
    return out


def _side(amount, table, line):
    """A side wager paid from its paytable; a line not on the table loses."""
    if line is not None and line in table:
        return _wager(amount, "win", line, table[line])
    return _wager(amount, "lose", line)


def settle(wagers, player, dealer, played, tables, bad_beat="straight"):
    """Settle one seat. wagers: {"ante": a, optional side wagers}; player, dealer: three
    card ids each; played: True (Play Wager = ante) or False (fold); tables: validated
    paytables by kind. Returns {"results": {wager: {...}}, "amount": net}."""
    p3 = profile()
    ps = evaluator.score(p3, player)
    ds = evaluator.score(p3, dealer)
    cat = p3.category(ps)
    ante = wagers["ante"]
    res = {}
    if not played:
        # Rule 4: "If the player folds, then he forfeits his Ante wager."
        res["ante"] = _wager(ante, "lose")
    else:
        play = tables["play"]
        if not qualifies(ds):
            # Rule 8: "Ante will push and the Play bet will pay according to the pay
            # table."
            res["ante"] = _wager(ante, "push")
            res["play"] = _wager(ante, "win", cat, play[cat])
        elif ps > ds:
            # Rule 10: "the Ante will pay even money and the Play according to the pay
            # table."
            res["ante"] = _wager(ante, "win", None, (1, 1))
            res["play"] = _wager(ante, "win", cat, play[cat])
        elif ps < ds:
            # Rule 11: "the Ante will lose. If the player has flush or less, the Play
            # will also lose" -- unless the hand earns the Bad Beat payout.
            res["ante"] = _wager(ante, "lose")
            if ps >= bad_beat_at(bad_beat):
                # the Bad Beat Bonus (§ 679a.1): "a payout on the player's Play Wager"
                # from the Play paytable; marked ("rule") so the journal and display say why
                res["play"] = _wager(ante, "win", cat, play[cat])
                res["play"]["rule"] = "bad_beat"
            else:
                res["play"] = _wager(ante, "lose", cat)
        else:
            # Rule 12: "If the player and dealer tie, then the Ante will push and the
            # Play will pay according to the pay table."
            res["ante"] = _wager(ante, "push")
            res["play"] = _wager(ante, "win", cat, play[cat])
    # Side wagers are decided by the cards alone, played or folded (Galaxy Gaming: "If
    # the player folds, their hand is still used to determine the outcome of any side
    # bet wagers").
    if "pair_bonus" in wagers:
        # "high_card" is on no Pair Bonus table: it loses (a pair or better wins)
        res["pair_bonus"] = _side(wagers["pair_bonus"], tables["pair_bonus"], cat)
    if "prime" in wagers:
        res["prime"] = _side(wagers["prime"], tables["prime"], prime_line(player, dealer))
    if "all_six" in wagers:
        six = list(player) + list(dealer)
        p6 = get("pa-all-six")
        s6 = evaluator.score(p6, six)
        # "no_qualifying_hand" (below three of a kind, PA (d)) is on no table: it loses
        r = _side(wagers["all_six"], tables["all_six"], p6.category(s6))
        r["hand"] = evaluator.played(p6, six)
        res["all_six"] = r
    net = 0
    for k in res:
        net += res[k]["amount"]
    return {"category": cat, "results": res, "amount": net}


# ---- the game interface (pitboss.games) ----------------------------------------------
def house(p, given):
    """bad_beat: which hands earn the Bad Beat payout (default "straight")."""
    v = given.get("bad_beat", "straight")
    if v not in ("straight", "flush", "none"):
        raise Refused("bad_config", "bad_beat must be one of straight, flush, none, got %r"
                      % (v,))
    return {"bad_beat": v}


def settle_round(t):
    return dealer.settle_round(t, qualifies, _seat)


def _seat(t, s, dealer_cards):
    return settle(t.wagers(s), t.hand(s), dealer_cards, t.choice(s), t.paytables,
                  t.house["bad_beat"])


def sim_wagers(rng):
    # Odd amounts on purpose: they exercise the rounding of the odds.
    return {"ante": 5 + rng.below(496), "pair_bonus": 1 + rng.below(100),
            "prime": 1 + rng.below(100), "all_six": 1 + rng.below(100)}


def sim_decision(t, seat):
    return "decide", {"play": evaluator.score(t.profile, t.hand(seat)) >= play_at()}
