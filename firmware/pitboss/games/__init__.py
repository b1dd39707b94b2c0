# The table games: one module per family behind one interface, and the registry that
# maps a game id to its module. pitboss.games.table drives a round through this interface
# without knowing which game it runs; only the configured game's module is imported
# (lazily, by module()), so a board never loads the families it does not play, and
# release() drops the others' modules and tables when the configured game changes.
#
# A game module defines (docs/games.md describes each game's rules):
#   WAGERS       the wager kinds a seat may place; MAIN, the one every seat must place
#   PAYTABLES    the paytable kinds it pays from (pitboss.rules.paytables)
#   HOUSE        the house-rule names; house(p, given) -> the rules with defaults filled
#                in, each validated (given holds only names from HOUSE)
#   MAX_SEATS    seats 1..MAX_SEATS
#   DICE         True if the deal takes a dice total
#   AFTER_DEAL   the phase once every card is in: "setting", "deciding" or "ready"
#   DECISIONS    the verbs a seat may take in that phase (() for none); each is also the
#                controller's event name
#   deal_order(t, dice) -> (order, start, dice): who gets each card (0 = the dealer or
#                banker), in casino deal order
#   decide(t, seat, verb, ev) -> (choice, reply): check one seat's decision (ev holds
#                its arguments as in the journalled event) and return what settle_round
#                needs of it (t.choice(seat)) and the reply (Table.choose)
#   settle_round(t) -> {"seats": [...], ...}: every wager of the round. Each seat's dict
#                starts with t.seat_head(seat) (seat, wagers, cards) and has "amount", the
#                seat's net in the table's smallest unit; the game adds its own fields
#                (banker, dealer, pot ...). pitboss.games.table adds game, round and house_net.
#   sim_wagers(rng), sim_decision(t, seat) -> (verb, ev) or None: the simulated
#                player (host tools and tests only; pitboss.sim.rounds)
# Every function raises pitboss.errors.Refused for input it refuses, changing nothing;
# `t` is the pitboss.games.table.Table, read through its public accessors.
from pitboss.errors import Refused

# game id -> family module, the one place this is written.
_REGISTRY = (
    ("pr-pai-gow", "paigow"),
    ("pr-pai-gow-a5-low", "paigow"),
    ("pa-three-card-prime", "threecard"),
    ("qc-caribbean", "caribbean"),
    ("nj-5card", "showdown"),
    ("nj-3card", "showdown"),
)


def ids():
    """Every table game id, in registry order."""
    return tuple(g for g, _ in _REGISTRY)


def family(game):
    """The family (module name) of a game id; Refused('unknown_game') if it is none."""
    for g, fam in _REGISTRY:
        if g == game:
            return fam
    raise Refused("unknown_game", "%r is not a table game (games: %s)"
                  % (game, ", ".join(ids())))


def module(game):
    """The game module of a game id, imported on first use."""
    fam = family(game)
    full = "pitboss.games." + fam
    return __import__(full, None, None, (fam,))


# Modules a family imports beside itself (released with the last family that uses them).
_HELPERS = (("dealer", ("caribbean", "threecard")), ("paigow_rules", ("paigow",)),
            ("paigow_way", ("paigow",)))


def release(game):
    """Drop every game module the configured `game` does not use, and the five-card
    tables of every profile but its own (pitboss.rules.profiles.release), then collect.

    Issue 11, measured on the emulated Pico (246 KB heap): each family's bytecode and
    table stay allocated once imported (Pai Gow 10.0 KB + a 5.0 KB table, Three Card
    Prime 3.9 KB, Caribbean 1.7 + 5.0 KB, the showdown games 1.8 + 4.9 KB, A-5 low's
    table 5.1 KB), so a table that plays every game in turn held ~45 KB of games it no
    longer plays. Released here, a game configured again is imported again (its module
    and table come back on first use)."""
    import sys

    from pitboss.rules import profiles

    fam = family(game)
    profiles.release((game,))
    if sys.implementation.name != "micropython":
        # CPython (host tools, tests) has no heap to fit, and its callers hold game
        # modules (plan_round, monkeypatched tests): a second copy would split them.
        return
    pkg = sys.modules.get("pitboss.games")
    names = [f for _, f in _REGISTRY if f != fam]
    for helper, users in _HELPERS:
        if fam not in users:
            names.append(helper)
    for name in names:
        if sys.modules.pop("pitboss.games." + name, None) is not None:
            if pkg is not None and hasattr(pkg, name):
                delattr(pkg, name)
    import gc

    gc.collect()
