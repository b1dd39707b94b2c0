# Three Card Prime (pa-three-card-prime; All-Six Bonus pa-all-six): dealer qualification,
# Ante and Play, and the Pair Bonus, Prime and All-Six Bonus side wagers.
#
# Ranks: /work/shared/rules/pennsylvania-three-card-prime-ranks.txt (PA (a)-(d)).
# Round procedure: 58 Pa. Code § 679a.1 ("Qualify": the dealer's hand is a queen high or
# better; "Bad Beat Bonus": a payout on the Play Wager when the player's hand is a flush
# or higher, or a straight or higher, depending on the paytable, but loses to the
# dealer's) and § 679a.7(d) (Ante then a Play Wager equal to it; Prime wins when all
# three of the player's cards are of one colour; Pair Bonus on a pair or better), with
# the settlement order of the Wizard of Odds' Three Card Prime rules 7-14 (quoted below).
from pitboss import evaluator
from pitboss.cards import parse_hand
from pitboss.paytables import pays
from pitboss.profiles import get

GAME = "pa-three-card-prime"
P3 = get(GAME)
P6 = get("pa-all-six")
WAGERS = ("ante", "pair_bonus", "prime", "all_six")  # "play" is added when playing
PAYTABLES = ("play", "pair_bonus", "prime", "all_six")

# "The dealer needs a queen high or better to qualify": the lowest such hand is Q-3-2.
QUALIFY = evaluator.score(P3, parse_hand("Qs 3h 2d"))
# Lowest hands that earn the Bad Beat payout (PA (a): A-2-3 is the lowest straight;
# 2-3-5 suited the lowest flush, 2-3-4 suited being a straight flush).
BAD_BEAT = {
    "straight": evaluator.score(P3, parse_hand("As 2h 3d")),
    "flush": evaluator.score(P3, parse_hand("2s 3s 5s")),
    "none": 1 << 30,  # above every score: no bad beat payout
}
# Simulation only: the player plays Q-6-4 or better (the usual Three Card Poker advice).
PLAY_AT = evaluator.score(P3, parse_hand("Qs 6h 4d"))


def qualifies(dealer_score):
    return dealer_score >= QUALIFY


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
    ps = evaluator.score(P3, player)
    ds = evaluator.score(P3, dealer)
    cat = P3.category(ps)
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
            if ps >= BAD_BEAT[bad_beat]:
                res["play"] = _wager(ante, "win", cat, play[cat])
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
        s6 = evaluator.score(P6, six)
        # "no_qualifying_hand" (below three of a kind, PA (d)) is on no table: it loses
        r = _side(wagers["all_six"], tables["all_six"], P6.category(s6))
        r["hand"] = evaluator.played(P6, six)
        res["all_six"] = r
    net = 0
    for k in res:
        net += res[k]["amount"]
    return {"category": cat, "results": res, "amount": net}
