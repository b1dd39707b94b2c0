"""Issue 29 item 11: any input to `rank`/`best` (every game, every card count, on the
board's own evaluator and the host's tables) is answered or refused, never raised: one
unauthenticated `best` line must not halt the table with an internal_error tilt, and
`pitboss rank --best` must not fail with an internal error either."""
import itertools
import json

import pytest

from host_tools import cli
from host_tools.fast import hostfast
from host_tools.table.targets import LocalTarget
from pitboss.rules import evaluator, profiles
from pitboss.rules.cards import parse_hand
from pitboss.errors import Refused
from pitboss.verbs.rank import rank_reply

# Fourteen different cards, the joker last: hands of every length 0..14 are prefixes.
CARDS = "As Kd Qc Jc Tc 9h 8h 7s 6d 5c 4h 3s 2d Jk".split()


@pytest.fixture(params=["board", "host"])
def evaluator_path(request):
    if request.param == "board":
        evaluator.use(None)
    else:
        hostfast.install()
    yield request.param
    hostfast.install()


@pytest.mark.parametrize("game", profiles.GAMES)
def test_every_card_count_is_answered_or_refused(game, evaluator_path):
    p = profiles.get(game)
    for n in range(len(CARDS) + 1):
        for best in (False, True):
            try:
                r = rank_reply(game, CARDS[:n], best)
            except Refused:
                continue
            if best:  # the best of the game's size, as the rule core ranks the subsets
                ids = parse_hand(CARDS[:n])
                want = max(evaluator.score_core(p, list(c))
                           for c in itertools.combinations(ids, p.size))
                assert r["score"] == want, (game, n)


def test_best_of_five_for_the_two_card_low_game_leaves_the_table_playing(tmp_path):
    t = LocalTarget(str(tmp_path / "t"))
    r = t.commands(["best pr-pai-gow-low As Kd Qc Jc Tc"])[0]
    assert r["ok"], r
    assert r["category"] and len(r["hand"]) == 2
    for line in ("best pr-pai-gow-low As", "best pr-pai-gow-low As As Kd",
                 "best pr-pai-gow-low Jk Jk Kd", "rank pr-pai-gow-low As Kd Qc",
                 "best nj-5card As Kd", "best pa-all-six " + " ".join(CARDS[:13])):
        assert "ok" in t.commands([line])[0]
    assert t.commands(["status"])[0]["tilts"] == []


def test_the_host_rank_best_of_five_for_the_low_game(capsys):
    assert cli.main(["rank", "--game", "pr-pai-gow-low", "--best",
                     "As", "Kd", "Qc", "Jc", "Tc"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["game"] == "pr-pai-gow-low" and len(out["hand"]) == 2
