# Simulated rounds: shuffle, deal, play and settle one round from a seed. Host tools and
# tests only (the VM tests run it on MicroPython too): nothing a board imports at boot
# imports this module.
from pitboss import games
from pitboss.rules.profiles import get
from pitboss.sim.rng import XorShift32
from pitboss.games.table import DEALING, READY, Table


def shuffled(n, rng):
    """Cards 0..n-1 shuffled by an rng.XorShift32 (Fisher-Yates from the end)."""
    return rng.shuffle(list(range(n)))


def sim_wagers(game, rng):
    """The simulated seat's wagers (the game module's sim_wagers)."""
    return games.module(game).sim_wagers(rng)


def simulate_round(game, seats, seed, config=None):
    """Shuffle (rng.XorShift32 seeded with `seed`), deal, play and settle one round.

    seats: a count (seats 1..n), a list of seat numbers (wagers drawn from the rng), or
    {seat: wagers}. Players decide as the game module's sim_decision() says (Pai Gow:
    the house way; Three Card Prime: play Q-6-4 or better; Caribbean: call with ace-king
    or better). Returns settle()."""
    g = games.module(game)
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
        t.wager(s, given[s] if given else g.sim_wagers(rng))
    deck = shuffled(get(game).deck, rng)
    t.deal()
    i = 0
    while t.phase == DEALING:
        t.card_in(deck[i], seq=i + 1)
        i += 1
    if t.phase != READY:
        for s in seat_list:
            d = g.sim_decision(t, s)
            t.choose(s, d[0], d[1])
    return t.settle()
