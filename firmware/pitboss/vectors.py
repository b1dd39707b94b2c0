# Test vectors: one case per line, the same files on CPython, the MicroPython VM and a
# board over serial. Runs on the board itself, so what is checked is the firmware.
#
#   game | cards | check | source
#
# checks:  category NAME        the hand ranks as NAME
#          plays C1 C2 ...      the hand as played (joker written Jk=Qh, Jk=K, Jk=A)
#          beats CARDS          outranks another hand of the same game
#          loses-to CARDS       is outranked by it
#          ties CARDS           equal score (a tie, a copy hand in Pai Gow)
#          error KIND           rejected with Refused.code == KIND
#          best-error KIND      `best` of these cards rejected with that kind
#          best NAME            best hand of the game's size out of these cards is NAME
#          best-plays C1 ...    and it is played as these cards
#          houseway WAY R1 R2   Pai Gow: house way WAY (games/houseways.py) puts ranks
#                               R1 R2 in front (A K ... 2; the joker counts as A)
# '#' starts a comment line; blank lines are skipped.
from pitboss.rules import evaluator
from pitboss.rules.cards import parse_hand
from pitboss.errors import Refused
from pitboss.rules.profiles import get


def parse(line):
    """'game | cards | check | source' -> (game, cards, op, arg, source) or None."""
    line = line.strip()
    if not line or line[0] == "#":
        return None
    parts = [f.strip() for f in line.split("|")]
    if len(parts) != 4:
        raise ValueError("vector needs 4 fields separated by '|': %r" % line)
    words = parts[2].split(None, 1)
    op = words[0] if words else ""
    arg = words[1].strip() if len(words) > 1 else ""
    return parts[0], parts[1], op, arg, parts[3]


def _outcome(p, text, more=False):
    """What the firmware says of a hand: (score, played) or the refusal's code."""
    try:
        ids = parse_hand(text)
        if more:
            return evaluator.best(p, ids)
        s = evaluator.rank(p, ids)
        return s, evaluator.played(p, ids)
    except Refused as e:
        return e.code


def check(case):
    """Run one parsed case: returns None if it passes, else what went wrong."""
    game, text, op, arg, _ = case
    try:
        p = get(game)
    except Refused as e:
        return None if op == "error" and arg == e.code else str(e)
    if op == "houseway":
        return _houseway(p, text, arg)
    got = _outcome(p, text, op in ("best", "best-plays", "best-error"))
    if op in ("error", "best-error"):
        return None if got == arg else "expected error %s, got %r" % (arg, got)
    if isinstance(got, str):
        return "unexpected error %s" % got
    s, hand = got
    if op in ("category", "best"):
        cat = p.category(s)
        return None if cat == arg else "expected %s, got %s" % (arg, cat)
    if op in ("plays", "best-plays"):
        want = arg.split()
        return None if hand == want else "expected %s, played %s" % (arg, " ".join(hand))
    other = _outcome(p, arg)
    if isinstance(other, str):
        return "the other hand is bad: %s" % other
    o = other[0]
    ok = {"beats": s > o, "loses-to": s < o, "ties": s == o}.get(op)
    if ok is None:
        return "unknown check %r" % op
    return None if ok else "%s %s failed: %s (%d) vs %s (%d)" % (
        op, arg, p.category(s), s, p.category(o), o)


def _houseway(p, text, arg):
    """The house way named first in `arg` sets the seven cards: are the ranks in front
    the ones `arg` lists? (Imported here only: a vector file of house ways is Pai Gow.)"""
    from pitboss.rules.cards import JOKER, RANKS
    from pitboss.games import houseways, paigow_way

    words = arg.split()
    try:
        high, low, rule = paigow_way.house_way(p, parse_hand(text), houseways.way(words[0]))
    except Refused as e:
        return "refused: %s" % e.code
    got = sorted(RANKS[12 if c == JOKER else c >> 2] for c in low)  # joker: ace (PR A)
    want = sorted(words[1:])
    return None if got == want else "expected %s in front, got %s (%s)" % (
        " ".join(want), " ".join(got), rule)


def run(lines, report=print):
    """Check every case; report each failure. Returns {game: [passed, failed]}."""
    tally = {}
    for n, line in enumerate(lines, 1):
        try:
            case = parse(line)
        except ValueError as e:
            tally.setdefault("?", [0, 0])[1] += 1
            report("line %d: %s" % (n, e))
            continue
        if case is None:
            continue
        why = check(case)
        t = tally.setdefault(case[0], [0, 0])
        if why is None:
            t[0] += 1
        else:
            t[1] += 1
            report("line %d: %s | %s | %s %s: %s" % (n, case[0], case[1], case[2], case[3], why))
    return tally


def run_files(paths, report=print):
    """Each file (one game's vectors) in turn; the five-card tables it loaded are dropped
    before the next (issue 11: a Pico's heap holds one game's table at a time)."""
    from pitboss.rules import profiles

    total = {}
    for path in paths:
        profiles.release()
        with open(path) as f:
            for game, (ok, bad) in run(f, lambda m, p=path: report(p + " " + m)).items():
                t = total.setdefault(game, [0, 0])
                t[0] += ok
                t[1] += bad
    return total


def main(folder="/vectors"):
    """Board/VM entry: check every *.vec file in `folder`, print one summary line per
    game and a last line the host reads: VECTORS <passed> <failed>."""
    import os

    paths = sorted(folder + "/" + f for f in os.listdir(folder) if f.endswith(".vec"))
    tally = run_files(paths, lambda m: print("FAIL " + m))
    passed = failed = 0
    for game in sorted(tally):
        ok, bad = tally[game]
        passed += ok
        failed += bad
        print("GAME %s %d %d" % (game, ok, bad))
    print("VECTORS %d %d" % (passed, failed))
    return failed
