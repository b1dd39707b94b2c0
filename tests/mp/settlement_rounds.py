# Runs on MicroPython and on CPython alike: seeded rounds of every table game, one line
# per round holding the whole settlement in a canonical text form (dict keys sorted, so
# no port's dict order leaks in). tests/vm/test_settlement_vm.py runs it on both and
# compares the lines hand by hand, amount by amount.
#   usage: settlement_rounds.py ROUNDS [GAME ...]
import sys

from pitboss import games
from pitboss.sim.rounds import simulate_round


def canon(o):
    if o is None:
        return "~"
    if o is True:
        return "T"
    if o is False:
        return "F"
    if isinstance(o, int):
        return str(o)
    if isinstance(o, str):
        return o
    if isinstance(o, (list, tuple)):
        return "[" + ",".join(canon(x) for x in o) + "]"
    if isinstance(o, dict):
        return "{" + ",".join(str(k) + ":" + canon(o[k]) for k in sorted(o)) + "}"
    raise TypeError("not plain data: %r" % (o,))


def main(argv):
    rounds = int(argv[0]) if argv else 200
    n = 0
    for game in argv[1:] or games.ids():
        seats = games.module(game).MAX_SEATS  # every seat taken
        for seed in range(1, rounds + 1):
            r = simulate_round(game, seats, seed)
            print("R", game, seed, canon(r))
            n += 1
    print("ROUNDS-DONE", n)


main(sys.argv[1:])
