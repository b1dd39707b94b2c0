# CPython only (imported by pitboss.evaluator when not on MicroPython; never on a board):
# a cache in front of the one evaluator. Every value in it was computed by
# evaluator._eval() (or the five-card fast path, which is _eval's own tables), so it is
# not a second evaluator: it only remembers.
#
# A hand's score depends on its rank multiset (the joker as a fourteenth rank), and, when
# one suit holds enough cards for a flush, on which ranks that suit holds. So the key is
#   k = sum of K[card],  K[card] = 8 ** rank << 12 | 1 << 3 * suit   (joker: 8 ** 13 << 12)
# whose high part counts each rank in base 8 (at most 4 of a rank) and whose low 12 bits
# count each suit. Hands whose suits cannot matter share one entry per rank multiset
# (filled on first use of a game and hand size by ranking one hand per multiset, as the
# grouped census does); the others are keyed by their multiset and the ranks of the
# flush suit, and filled on first sight.
_SUIT_BITS = 12
_K = [(8 ** (c >> 2)) << _SUIT_BITS | 1 << 3 * (c & 3) for c in range(52)]
_K.append(8 ** 13 << _SUIT_BITS)  # the joker: a rank of its own, no suit
_KG = _K.__getitem__

def _eval(p, cards, n):
    """evaluator._eval, once install() has run."""
    raise RuntimeError("pitboss.hostcache.install() has not run")


class _Tables:
    __slots__ = ("plain", "suited", "flushy", "filled")

    def __init__(self, p):
        self.plain = {}  # rank multiset key -> score
        self.suited = {}  # (multiset key, flush-suit rank mask) -> score
        # suit-count vectors (the key's low 12 bits) for which suits may matter: a suit
        # holding at least hand - 1 cards (hand - 1: the joker may complete it)
        need = p.hand - (1 if p.joker else 0)
        self.flushy = frozenset(
            s0 | s1 << 3 | s2 << 6 | s3 << 9
            for s0 in range(8) for s1 in range(8) for s2 in range(8) for s3 in range(8)
            if p.flushes and max(s0, s1, s2, s3) >= need)
        self.filled = set()  # hand sizes whose rank multisets are all in `plain`


def _tables(p):
    t = p.__dict__.get("_hc")
    if t is None:
        t = p._hc = _Tables(p)
    return t


def _multisets(n, top=13):
    """Rank multisets of n cards (each rank at most 4 times) as lists of ranks."""
    out = []

    def rec(r, left, acc):
        if left == 0:
            out.append(list(acc))
            return
        if r == top:
            return
        for k in range(min(4, left), -1, -1):
            acc.extend([r] * k)
            rec(r + 1, left - k, acc)
            del acc[len(acc) - k:]
    rec(0, n, [])
    return out


def _plain_hand(ranks):
    """Card ids for the ranks, suits spread (least loaded first) so no suit gets many."""
    load = [0, 0, 0, 0]
    ids = []
    for i, r in enumerate(ranks):
        used = {c & 3 for c in ids if c >> 2 == r}
        s = min((s for s in range(4) if s not in used), key=lambda s: (load[s], s))
        load[s] += 1
        ids.append(r * 4 + s)
    return ids


def _fill(p, t, n):
    """Rank one hand per rank multiset of n cards (and n - 1 plus the joker)."""
    t.filled.add(n)
    jokers = (0, 1) if p.joker else (0,)
    for jk in jokers:
        for ranks in _multisets(n - jk):
            ids = _plain_hand(ranks) + [52] * jk
            k = sum(map(_KG, ids))
            if k & 0xFFF in t.flushy:
                continue  # (cannot happen for n <= 7: at most two cards a suit)
            t.plain.setdefault(k >> _SUIT_BITS, _eval(p, ids, n))


def cached_score(p, cards):
    """_eval(p, cards, len(cards)) on CPython: the same values, remembered."""
    k = sum(map(_KG, cards))
    t = p.__dict__.get("_hc") or _tables(p)
    if k & 0xFFF in t.flushy:
        # which ranks the fullest suit holds decides the flush
        sc = k & 0xFFF
        counts = (sc & 7, sc >> 3 & 7, sc >> 6 & 7, sc >> 9 & 7)
        suit = counts.index(max(counts))
        m = 0
        for c in cards:
            if c != 52 and c & 3 == suit:
                m |= 1 << (c >> 2)
        key = (k >> _SUIT_BITS) << 13 | m
        v = t.suited.get(key)
        if v is None:
            v = t.suited[key] = _eval(p, cards, len(cards))
        return v
    try:
        return t.plain[k >> _SUIT_BITS]
    except KeyError:
        pass
    n = len(cards)
    if n not in t.filled and n <= 7:
        _fill(p, t, n)
        v = t.plain.get(k >> _SUIT_BITS)
        if v is not None:
            return v
    v = t.plain[k >> _SUIT_BITS] = _eval(p, cards, n)
    return v


# Five cards: the suits matter only when all five (or four and the joker) share one,
# so two tables keyed by the rank multiset do: `five` and `five_flush`. The key is kept
# below 2**30 (one CPython digit: the additions stay on the fast path):
#   K5[card] = W5[rank] << 11 | (1, 6, 36, 216)[suit]    (joker: W5[13] << 11, no suit)
# W5 makes the sum of five (four and the joker) unique per multiset (a greedy Sidon-type
# sequence; _five_tables() checks it), the low 11 bits count suits in base 6.
_W5 = (0, 1, 5, 22, 94, 312, 992, 2422, 5624, 12522, 19998, 43258, 79415, 130285)
_K5 = [_W5[c >> 2] << 11 | (1, 6, 36, 216)[c & 3] for c in range(52)]
_K5.append(_W5[13] << 11)
_FLUSH5 = frozenset(k * v for k in (4, 5) for v in (1, 6, 36, 216))


def _five_tables(p):
    """({multiset key: score} without a flush, the same with one), one hand each."""
    plain, flush = {}, {}
    for jk in ((0, 1) if p.joker else (0,)):
        for ranks in _multisets(5 - jk):
            ids = _plain_hand(ranks) + [52] * jk
            k = sum(_K5[c] for c in ids) >> 11
            if k in plain:
                raise RuntimeError("hostcache: five-card keys collide")
            plain[k] = _eval(p, ids, 5)
            if len(set(ranks)) == 5 - jk and p.flushes:
                ids = [r * 4 for r in ranks] + [52] * jk
                flush[k] = _eval(p, ids, 5)
    return {False: plain, True: flush}


def make_score(core_score, rest):
    """evaluator.score on CPython: five cards through two dicts filled by _eval (on
    first use of a game), other sizes through `rest` (cached_score), other games
    through core_score (the bytecode path)."""
    K = _K5
    P = [[K[a] + K[b] for b in range(53)] for a in range(53)]  # two cards at once
    F = _FLUSH5
    from pitboss.profiles import Profile
    setattr(Profile, "_h5", None)  # per game: set on its first five cards

    def score(p, cards):
        t = p._h5
        if t is not None:
            try:
                a, b, c, d, e = cards
            except ValueError:  # not five cards
                return rest(p, cards)
            k = P[a][b] + P[c][d] + K[e]
            if k & 0x7FF in F:
                return p._h5f[k >> 11]
            return t[k >> 11]
        if p.size == 5 and p.hand == 5 and "_h5" not in p.__dict__:
            p._h5f = _five_tables(p)
            p._h5 = p._h5f.pop(False)
            p._h5f = p._h5f.pop(True)
            return score(p, cards)
        return core_score(p, cards)
    score.__doc__ = core_score.__doc__
    return score


def install(evaluator):
    """The cached scorer for evaluator._rest (CPython only)."""
    global _eval
    _eval = evaluator._eval  # noqa: F811
    return cached_score
