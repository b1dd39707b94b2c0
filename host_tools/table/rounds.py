"""Seeded rounds: planned once (wagers, dice, the shoe's frames, each player's decision),
played on a target (host_tools.table.targets), and a settled round described as text.
"""
from host_tools.emu import shoe_sim
from host_tools.output import BoardError
from host_tools.table.targets import BoardTarget, ProtoTarget
from pitboss import games
from pitboss.games.table import Table
from pitboss.rules import profiles
from pitboss.rules.cards import names, parse_hand
from pitboss.sim.rng import Rng


def play_many(target, game, seats, rounds, seed):
    """Like play_rounds, batched where the target can: the settle replies in order."""
    plans = [plan_round(game, seats, seed + i) for i in range(rounds)]
    if isinstance(target, (BoardTarget, ProtoTarget)):   # PicoTarget too
        return target.rounds(plans)
    return [target.round(*pl)[-1] for pl in plans]


def stand_in_paytables(game):
    """A test table's own paytables where the game's defaults are unverified (which a
    production table refuses, issue 30): the default lines, given explicitly, as the
    table a casino configures. {} when every default is verified."""
    from pitboss.rules import paytables
    g = games.module(game)
    # the short form (odds in LINES order): the three tables as dicts make a config
    # line longer than the 512 characters an authenticated command may hold
    return {k: [paytables.DEFAULTS[k]["lines"].get(ln) for ln in paytables.LINES[k]]
            for k in g.PAYTABLES if not paytables.DEFAULTS[k]["verified"]}


def plan_round(game, seats, seed):
    """(before, frames, after) protocol lines and shoe bytes for one seeded round.

    Deterministic in the seed: wagers from pitboss.sim.rng, the dice rolled here (sent with
    `deal` to a game dealt with dice), the deck shuffled by host_tools.emu.shoe_sim; each
    player decides as the game module's sim_decision() says. The game is asked through
    the registry (pitboss.games): nothing here knows which game it plans."""
    p = profiles.get(game)
    g = games.module(game)
    rng = Rng(seed)
    # A throw-away Table of the same firmware gives the casino deal order, and is dealt
    # the same cards so the simulated players see their hands.
    t = Table({"game": game, "seats": seats})
    before = []
    for s in range(1, seats + 1):
        w = g.sim_wagers(rng)
        t.wager(s, w)
        before.append("wager %d %s" % (s, " ".join("%s=%d" % (k, w[k]) for k in sorted(w))))
    dice = rng.below(6) + rng.below(6) + rng.below(6) + 3
    before.append("deal %d" % dice if g.DICE else "deal")
    order = t.deal(dice if g.DICE else None)["order"]
    deck = shoe_sim.shuffled_deck(seed, p.deck)[:len(order)]
    for c in deck:
        t.card_in(c)
    frames = shoe_sim.frames(deck)
    after = []
    for s in range(1, seats + 1):
        d = g.sim_decision(t, s)
        if d is not None:
            after.append(decision_line(s, d[0], d[1]))
    after.append("settle")
    return before, frames, after


def decision_line(seat, verb, ev):
    """The bench-protocol line for a seat's decision (an event of Table.decisions())."""
    if verb == "hw":
        return "houseway %d" % seat
    if verb == "decide":
        return "decide %d %s" % (seat, "play" if ev["play"] else "fold")
    if verb == "set":
        return "hand %d %s / %s" % (seat, " ".join(names(parse_hand(ev["high"]))),
                                    " ".join(names(parse_hand(ev["low"]))))
    raise ValueError("no protocol line for the decision %r" % (verb,))


def play_rounds(target, game, seats, rounds, seed, config=None):
    """Play `rounds` seeded rounds on a configured target; yields each settle reply."""
    for i in range(rounds):
        before, frames, after = plan_round(game, seats, seed + i)
        replies = target.round(before, frames, after)
        bad = [r for r in replies if not r.get("ok")]
        if bad:
            raise BoardError("round %d refused: %s" % (i + 1, bad[0]["error"]))
        yield replies[-1]


def describe_round(r):
    """Human-readable lines for one settled round."""
    out = ["round %d  %s" % (r["round"], r["game"])]
    if "banker" in r:
        b = r["banker"]
        out.append("  banker   %-20s | %-6s  %s / %s" % (
            " ".join(b["high"]), " ".join(b["low"]), b["high_category"], b["low_category"]))
    if "dealer" in r:
        d = r["dealer"]
        out.append("  dealer   %-20s  %s%s" % (" ".join(d["hand"]), d["category"],
                                              "" if d["qualifies"] else " (does not qualify)"))
    for s in r["seats"]:
        if "high" in s:
            hand = "%s | %s" % (" ".join(s["high"]), " ".join(s["low"]))
            cat = "%s / %s" % (s["high_category"], s["low_category"])
        else:
            hand = " ".join(s.get("hand") or s["cards"])
            cat = s.get("category", "")
        wag = ",".join("%s=%d" % (k, v) for k, v in sorted(s["wagers"].items()))
        out.append("  seat %d   %-27s %-28s %-22s %+d" % (
            s["seat"], hand, cat, wag, s["amount"]))
    out.append("  house net %+d" % r["house_net"])
    return out
