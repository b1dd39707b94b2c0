"""Posted paytables as named data (firmware/pitboss/rules/paytables.py, issue 30): each table
whose text we hold equals its cited text, line by line; the settled amount of every line
(test_caribbean.py, test_threecard.py settle each line; here the named tables); the Bad
Beat Bonus is marked on the Play result it pays; a table using an unverified default
refuses to open in production (bad_config, one line naming it) and every status in
service mode says it.

Not here, because we could not find the text: 58 Pa. Code § 679a.12's lettered tables
(Pair Bonus, Play with its Bad Beat Bonus, All-Six). Those kinds keep their unverified
placeholders (docs/games.md, Paytables).
"""
import re

import pytest

from host_tools.table.auth import KeyStore
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import stand_in_paytables
from host_tools.table.targets import LocalTarget
from pitboss.rules import paytables
from pitboss.rules.cards import parse_hand
from pitboss.errors import Refused
from pitboss.games import caribbean, threecard
from pitboss.games.dealer import pays
from pitboss.games.table import Table

# 58 Pa. Code § 671a.12(d) (pacodeandbulletin.gov, chapter 671a, s671a.12, as read
# through 54 Pa.B. 5598, August 31, 2024): "A winning Bet Wager shall be paid at the
# following odds:" -- the classic Caribbean Stud call schedule, our Call default.
PA_671A_12D = """
Royal flush 100 to 1
Straight flush 50 to 1
Four-of-a-kind 20 to 1
Full house 7 to 1
Flush 5 to 1
Straight 4 to 1
Three-of-a-kind 3 to 1
Two pair 2 to 1
One pair 1 to 1
Ace-king 1 to 1
"""
# Wizard of Odds, Three Card Prime (wizardofodds.com/games/three-card-prime/), rule 14:
WOO_PRIME_14 = ("The Prime bet pays at least 3 to 1 if the player's three cards are the "
                "same color. If all six cards between the player and dealer hands are "
                "the same color, then it pays 4 to 1.")


def _lines(text):
    out = {}
    for ln in text.strip().splitlines():
        m = re.match(r"(.+?) (\d+) to (\d+)$", ln.strip())
        key = m.group(1).lower().replace("-", "_").replace(" ", "_")
        out[key] = int(m.group(2)) if m.group(3) == "1" else [int(m.group(2)),
                                                                int(m.group(3))]
    return out


def test_call_table_equals_58_pa_code_671a_12d():
    d = paytables.DEFAULTS["call"]
    assert d["name"] == "pa-671a.12d" and d["verified"]
    assert d["lines"] == _lines(PA_671A_12D)


def test_prime_table_equals_wizard_of_odds_rule_14():
    d = paytables.DEFAULTS["prime"]
    assert d["verified"]
    nums = [int(x) for x in re.findall(r"(\d+) to 1", WOO_PRIME_14)]
    assert d["lines"] == {"three_same_colour": nums[0], "six_same_colour": nums[1]}


def test_unverified_tables_are_the_679a_12_kinds_only():
    assert sorted(k for k, d in paytables.DEFAULTS.items() if not d["verified"]) == \
        ["all_six", "pair_bonus", "play"]


@pytest.mark.parametrize("player, dealer, line", [
    ("Ah Kh Qh Jh Th", "Ad Kc 5s 4h 2c", "royal_flush"),
    ("Ah Ks Qd 9c 7s", "Ad Kc 5s 4h 2c", "ace_king"),
    ("6s 6h Jc Js 3s", "Ad Kc 5s 4h 2c", "two_pair"),
])
def test_a_named_call_table_settles_each_line(player, dealer, line):
    t = paytables.resolve(caribbean.PAYTABLES, {"call": "pa-671a.12d"})
    r = caribbean.settle({"ante": 7}, parse_hand(player), parse_hand(dealer), True, t)
    n = paytables.DEFAULTS["call"]["lines"][line]
    assert r["results"]["call"] == {"wager": 14, "outcome": "win", "line": line,
                                    "amount": 14 * n}


@pytest.mark.parametrize("player, dealer, line, amount", [
    ("2h 7d 9h", "3d 8h Jd", "six_same_colour", 4 * 9),
    ("2h 7d 9h", "3s 8h Jd", "three_same_colour", 3 * 9),
])
def test_prime_settles_each_line(player, dealer, line, amount):
    t = paytables.resolve(threecard.PAYTABLES, {"prime": "woo-prime-4-3"})
    r = threecard.settle({"ante": 5, "prime": 9}, parse_hand(player), parse_hand(dealer),
                         False, t)
    assert r["results"]["prime"] == {"wager": 9, "outcome": "win", "line": line,
                                     "amount": amount}


def test_the_short_form_fits_an_authenticated_command():
    # odds in LINES order, None for a line not on the table: Three Card Prime's own
    # three tables in one config line under the 512-character limit
    import json
    own = stand_in_paytables("pa-three-card-prime")
    line = "config " + json.dumps({"game": "pa-three-card-prime", "seats": 7,
                                   "paytables": own}, separators=(",", ":"))
    assert len(line) + len("auth 123456 ") + 64 < 512
    t = paytables.resolve(threecard.PAYTABLES, own)
    for k in own:
        assert t[k] == paytables.default(k)
    t = paytables.resolve(threecard.PAYTABLES, {"pair_bonus": [50, 40, 30, 6, 3, None]})
    assert t["pair_bonus"]["mini_royal"] == (50, 1) and "one_pair" not in t["pair_bonus"]
    with pytest.raises(Refused) as e:
        paytables.resolve(threecard.PAYTABLES, {"pair_bonus": [40, 30]})
    assert e.value.code == "bad_config" and "list of 6 odds" in str(e.value)


def test_unknown_named_table_is_refused():
    with pytest.raises(Refused) as e:
        Table({"game": "qc-caribbean", "paytables": {"call": "loto-quebec"}})
    assert e.value.code == "bad_config" and "loto-quebec" in str(e.value)


def test_the_bad_beat_bonus_is_marked_on_the_play_it_pays():
    # § 679a.1: "a payout on the player's Play Wager when the rank of the player's
    # three-card hand is ... a straight or higher ... but is lower in rank than the
    # dealer's three-card hand"
    t = paytables.resolve(threecard.PAYTABLES, {})
    r = threecard.settle({"ante": 10}, parse_hand("4s 5h 6d"), parse_hand("9h Th Jh"),
                         True, t, "straight")
    assert r["results"]["play"]["rule"] == "bad_beat"
    assert r["results"]["play"]["amount"] == pays(10, t["play"]["straight"])
    r = threecard.settle({"ante": 10}, parse_hand("4s 5h 6d"), parse_hand("9h Th Jh"),
                         True, t, "flush")  # a straight is above the flush floor too
    assert r["results"]["play"]["rule"] == "bad_beat"
    r = threecard.settle({"ante": 10}, parse_hand("4s 4h 6d"), parse_hand("9h Th Jh"),
                         True, t, "straight")
    assert "rule" not in r["results"]["play"] and r["results"]["play"]["amount"] == -10


def _target(tmp_path, production):
    t = LocalTarget(str(tmp_path / "flash"), production=production)
    conf = Configurator(t, "pt", KeyStore(str(tmp_path / "keys")))
    conf.provision()
    return t, conf


def test_production_refuses_an_unverified_default_naming_it(tmp_path):
    t, conf = _target(tmp_path, True)
    r = conf.configure("pa-three-card-prime", 3)
    assert r["ok"] is False and r["error"]["code"] == "bad_config", r
    msg = r["error"]["message"]
    assert "play placeholder-even" in msg and "\n" not in msg
    assert t.commands(["status"])[0]["phase"] == "unconfigured"  # nothing changed
    # the casino's own tables: accepted
    r = conf.configure("pa-three-card-prime", 3,
                       {"paytables": stand_in_paytables("pa-three-card-prime")})
    assert r["ok"], r
    assert "unverified" not in t.commands(["status"])[0]
    # verified defaults open as they are
    assert conf.configure("qc-caribbean", 3)["ok"]


def test_service_mode_says_it_on_every_status(tmp_path):
    t, conf = _target(tmp_path, False)
    assert conf.configure("pa-three-card-prime", 2)["ok"]
    want = ["play placeholder-even", "pair_bonus tcp-pair-plus-40-30-6-4-1",
            "all_six tcp-6-card-bonus-1000"]
    assert t.commands(["status"])[0]["unverified"] == want
    assert all(r["ok"] for r in t.commands(["wager 1 ante=10", "deal"]))
    assert t.commands(["status"])[0]["unverified"] == want
    # and after a power cycle (the configuration replayed from the journal)
    t2 = LocalTarget(t.root)
    assert t2.commands(["status"])[0]["unverified"] == want
