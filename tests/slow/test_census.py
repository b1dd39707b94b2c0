"""Proof of exactness: the firmware's evaluator, run over every hand of each game's
deck, reproduces the reference census tables in tests/census/ (published counts, and
for the joker and All-Six games counts derived combinatorially by
test_census_reference.py, independently of the evaluator).

The grouped census (one representative hand per class) must agree with the exhaustive
one too: it is what makes a census cheap enough for the board.
"""
import json
import os

import pytest

from host_tools.fast.census import census
from pitboss.rules.profiles import GAMES, get

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The counts the issue quotes from the literature (five-card and three-card poker).
FIVE = {"royal_flush": 4, "straight_flush": 36, "four_of_a_kind": 624, "full_house": 3744,
        "flush": 5108, "straight": 10200, "three_of_a_kind": 54912, "two_pair": 123552,
        "one_pair": 1098240, "high_card": 1302540}
THREE = {"straight_flush": 44, "three_of_a_kind": 52, "straight": 720, "flush": 1096,
         "one_pair": 3744, "high_card": 16440}


def reference(gid):
    with open(os.path.join(HERE, "census", gid + ".json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def exhaustive():
    """Every hand of each deck through the evaluator's rule core alone (no fast path,
    no host cache): the proof does not lean on any table."""
    cache = {}

    def get(gid):
        if gid not in cache:
            cache[gid] = census(gid, "core")
        return cache[gid]
    return get


@pytest.mark.parametrize("gid", GAMES)
def test_public_score_census_equals_core(gid, exhaustive):
    # score() (five-card fast path, host cache) agrees with the core on every hand's
    # category count and on the number of distinct scores.
    fast, core = census(gid, "exhaustive"), exhaustive(gid)
    assert (fast["counts"], fast["distinct_scores"]) == (core["counts"],
                                                        core["distinct_scores"])


@pytest.mark.parametrize("gid", GAMES)
def test_exhaustive_census_matches_reference(gid, exhaustive):
    got, ref = exhaustive(gid), reference(gid)
    assert got["total"] == ref["total"]
    assert got["counts"] == ref["counts"]
    # printed highest category first, in the game's own order
    assert list(got["counts"]) == [c for c in get(gid).categories if c in got["counts"]]


@pytest.mark.parametrize("gid", GAMES)
def test_grouped_census_equals_exhaustive(gid, exhaustive):
    g, e = census(gid, "grouped"), exhaustive(gid)
    assert (g["counts"], g["total"], g["distinct_scores"]) == \
        (e["counts"], e["total"], e["distinct_scores"])


@pytest.mark.parametrize("gid", ["nj-5card", "qc-caribbean"])
def test_five_card_published_counts(gid, exhaustive):
    assert exhaustive(gid)["counts"] == FIVE


def test_nj_5card_has_7462_distinct_scores(exhaustive):
    assert exhaustive("nj-5card")["distinct_scores"] == 7462


@pytest.mark.parametrize("gid,top", [("nj-3card", "royal_flush"),
                                     ("pa-three-card-prime", "mini_royal")])
def test_three_card_published_counts(gid, top, exhaustive):
    # 48 straight flushes of which the 4 suited A-K-Q are their own top category
    assert exhaustive(gid)["counts"] == dict({top: 4}, **THREE)
