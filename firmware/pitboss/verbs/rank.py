# The stateless verbs: rank and best (a hand of a game, as its rule text ranks it) and
# games (what this firmware knows). They need no table: the host's `pitboss rank` prints
# the same fields, and pitboss.verbs.batch runs them over the raw REPL.
from pitboss.errors import Refused
from pitboss.rules import profiles
from pitboss.rules.cards import names, parse_hand


def rank_reply(gid, cards, best=False):
    """The reply to `rank`/`best`; the host's `pitboss rank` prints the same fields."""
    # Imported here: a board boots without the evaluator until a game or `rank` needs it.
    from pitboss.rules import evaluator

    p = profiles.get(gid)
    ids = parse_hand(cards)
    if best:
        s, hand = evaluator.best(p, ids)
    else:
        s = evaluator.rank(p, ids)
        hand = evaluator.played(p, ids)
    return {"game": gid, "cards": names(ids), "category": p.category(s), "score": s,
            "hand": hand}


def rank(ctl, args):
    if not args:
        raise Refused("bad_args", "usage: rank GAME CARD...")
    return rank_reply(args[0], args[1:])


def best(ctl, args):
    if not args:
        raise Refused("bad_args", "usage: rank GAME CARD...")
    return rank_reply(args[0], args[1:], True)


def games(ctl, args):
    return {"games": [{"game": g, "cards": profiles.peek(g).size,
                       "source": profiles.peek(g).source} for g in profiles.GAMES]}
