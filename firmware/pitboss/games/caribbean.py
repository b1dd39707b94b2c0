# Caribbean Poker (qc-caribbean): dealer qualification, Ante and Call, posted paytable.
#
# Ranks: shared/rules/ (beside the repository) quebec-caribbean-poker-ranks.fr.txt (art. 67.11).
# Procedure (Loto-Québec, "Poker des Caraïbes", casinos.lotoquebec.com): five cards to
# each player and the dealer; a player who placed an ante either raises "du double de sa
# mise initiale" (the Call, twice the ante) or abandons the ante. The dealer qualifies
# with at least ace and king; an unqualified dealer pays the antes and not the raises
# (the raise is returned). Against a qualifying dealer the higher hand wins both wagers,
# the Call at the posted paytable; equal hands push (art. 67.11 gives no tie-break
# beyond rank, so identical ranks tie).
from pitboss.rules import evaluator
from pitboss.rules.cards import parse_hand
from pitboss.compat import const
from pitboss.games import dealer
from pitboss.games.dealer import deal_order, decide  # noqa: F401 (the interface)
from pitboss.games.dealer import pays
from pitboss.rules.profiles import get

GAME = "qc-caribbean"
WAGERS = ("ante",)  # "call" is added when calling
MAIN = "ante"
PAYTABLES = ("call",)
HOUSE = ()
MAX_SEATS = const(7)
DICE = False
AFTER_DEAL = "deciding"
# The dealer's cards dealt face up (0-based, in the dealer's deal order), shown on the
# bench before settlement: the fifth. Neither art. 67.11 nor the Loto-Québec procedure
# cited above says which card is exposed; the published Caribbean Stud procedure deals
# the dealer "five cards ... one of the dealer's cards face up", the last one dealt
# (docs/games.md, rules we had to choose). Every other dealer card stays hidden.
FACE_UP = (4,)
DECISIONS = ("decide",)
CALL_MULTIPLE = const(2)

# Ace-king or better: the lowest such hand is A-K-4-3-2 (not a straight: no wrap-around,
# art. 67.11 6°). Ranked by the evaluator on first use, never at import.
_QUALIFY_HAND = "As Kh 4d 3c 2s"
_qualify = None


def profile():
    return get(GAME)


def qualify_at():
    global _qualify
    if _qualify is None:
        _qualify = evaluator.score(profile(), parse_hand(_QUALIFY_HAND))
    return _qualify


def qualifies(dealer_score):
    return dealer_score >= qualify_at()


def call_line(category):
    """The paytable line of a winning hand: a high-card hand that beats a qualifying
    dealer is at least ace-king, the table's lowest line."""
    return "ace_king" if category == "high_card" else category


def settle(wagers, player, dealer_cards, called, tables):
    """Settle one seat: wagers {"ante": a}; called True (Call = 2 x ante) or False."""
    p = profile()
    ps = evaluator.score(p, player)
    ds = evaluator.score(p, dealer_cards)
    cat = p.category(ps)
    ante = wagers["ante"]
    res = {}
    if not called:
        res["ante"] = {"wager": ante, "outcome": "lose", "amount": -ante}
    else:
        call = ante * CALL_MULTIPLE
        if not qualifies(ds):
            res["ante"] = {"wager": ante, "outcome": "win", "amount": ante}
            res["call"] = {"wager": call, "outcome": "push", "amount": 0}
        elif ps > ds:
            line = call_line(cat)
            res["ante"] = {"wager": ante, "outcome": "win", "amount": ante}
            res["call"] = {"wager": call, "outcome": "win", "line": line,
                           "amount": pays(call, tables["call"][line])}
        elif ps < ds:
            res["ante"] = {"wager": ante, "outcome": "lose", "amount": -ante}
            res["call"] = {"wager": call, "outcome": "lose", "amount": -call}
        else:
            res["ante"] = {"wager": ante, "outcome": "push", "amount": 0}
            res["call"] = {"wager": call, "outcome": "push", "amount": 0}
    net = 0
    for k in res:
        net += res[k]["amount"]
    return {"category": cat, "results": res, "amount": net}


# ---- the game interface (pitboss.games) ----------------------------------------------
def house(p, given):
    return {}  # no house rules


def settle_round(t):
    return dealer.settle_round(t, qualifies, _seat)


def _seat(t, s, dealer_cards):
    return settle(t.wagers(s), t.hand(s), dealer_cards, t.choice(s), t.paytables)


def sim_wagers(rng):
    return {"ante": 5 + rng.below(496)}


def sim_decision(t, seat):
    """The simulated player calls with ace-king or better."""
    return "decide", {"play": evaluator.score(t.profile, t.hand(seat)) >= qualify_at()}
