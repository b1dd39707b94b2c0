"""The game interface (pitboss.games): every registered game's module defines the whole
interface, nothing is ranked or built at import, and the registry imports only the
configured family, on CPython and on MicroPython (the VM)."""
import os
import subprocess
import sys

import pytest

from pitboss import games
from pitboss.rules import paytables, profiles
from pitboss.games import table
from pitboss.errors import Refused

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIRMWARE = os.path.join(REPO, "firmware")
INTERFACE = ("WAGERS", "MAIN", "PAYTABLES", "HOUSE", "MAX_SEATS", "DICE", "AFTER_DEAL",
             "DECISIONS", "FACE_UP", "house", "deal_order", "decide", "settle_round",
             "sim_wagers", "sim_decision")
FAMILIES = ("paigow", "threecard", "caribbean", "showdown")


@pytest.mark.parametrize("game", games.ids())
def test_every_game_module_has_the_whole_interface(game):
    g = games.module(game)
    for attr in INTERFACE:
        assert hasattr(g, attr), (game, attr)
    assert g.MAIN in g.WAGERS
    assert all(k in paytables.LINES for k in g.PAYTABLES)
    assert g.AFTER_DEAL in (table.SETTING, table.DECIDING, table.READY)
    assert (g.AFTER_DEAL == table.READY) == (g.DECISIONS == ())
    assert 1 <= g.MAX_SEATS <= 7 and type(g.DICE) is bool
    assert profiles.get(game)  # every table game is also a rule profile
    assert games.family(game) in FAMILIES


def test_the_registry_refuses_what_it_does_not_hold():
    for bad in ("blackjack", "pa-all-six", "pr-pai-gow-low", None, 5):
        with pytest.raises(Refused) as e:
            games.module(bad)
        assert e.value.code == "unknown_game" and "not a table game" in str(e.value)


def _fresh(code):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=FIRMWARE), timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_nothing_is_ranked_at_import():
    # The evaluator is booby-trapped before the game modules are imported: any hand
    # ranked (or table built from ranks) at import would raise.
    out = _fresh(
        "from pitboss.rules import evaluator\n"
        "def trap(*a, **k):\n    raise AssertionError('ranked at import')\n"
        "for n in ('score', 'rank', 'best', 'played', 'check'):\n"
        "    setattr(evaluator, n, trap)\n"
        "import pitboss.games.table, pitboss.controller, pitboss.sim.rounds\n"
        "from pitboss.games import paigow, threecard, caribbean, showdown, dealer\n"
        "print('IMPORTED')\n")
    assert out == ["IMPORTED"]


def test_thresholds_computed_on_first_use_match_the_hands_the_rules_name():
    from pitboss.rules import evaluator
    from pitboss.rules.cards import parse_hand
    from pitboss.games import caribbean, threecard

    p3 = profiles.get("pa-three-card-prime")
    assert threecard.qualifies(evaluator.score(p3, parse_hand("Qs 3h 2d")))
    assert not threecard.qualifies(evaluator.score(p3, parse_hand("Js 9h 8d")))
    assert threecard.bad_beat_at("straight") == evaluator.score(p3, parse_hand("As 2h 3d"))
    assert threecard.bad_beat_at("flush") == evaluator.score(p3, parse_hand("2s 3s 5s"))
    assert threecard.bad_beat_at("none") > evaluator.score(p3, parse_hand("As Ks Qs"))
    pc = profiles.get("qc-caribbean")
    assert caribbean.qualify_at() == evaluator.score(pc, parse_hand("As Kh 4d 3c 2s"))


_VM_SCRIPT = """
import sys
from pitboss import games
from pitboss.games.table import Table

def fams():
    return sorted(m for m in sys.modules
                  if m.startswith("pitboss.games.") and m != "pitboss.games.table")

print("BOOT", fams())
t = Table({"game": "nj-5card", "seats": 2})
print("SHOWDOWN", fams())
t = Table({"game": "pr-pai-gow", "seats": 2})
print("PAIGOW", fams())
print("SIM", "pitboss.sim.rounds" in sys.modules)
print("SAME", games.module("pr-pai-gow-a5-low") is games.module("pr-pai-gow"))
print("VM-GAMES-OK")
"""


@pytest.mark.vm  # the rest of the module is host (tests/support/tiers.py)
def test_the_registry_imports_lazily_on_micropython():
    from host_tools.emu.vm import run_script

    vm = run_script(_VM_SCRIPT, mounts={FIRMWARE: "/"}, timeout=120)
    lines = vm.stdout.splitlines()
    assert vm.returncode == 0 and lines[-1] == "VM-GAMES-OK", vm.stdout + vm.stderr
    assert lines[:5] == [
        "BOOT []",
        "SHOWDOWN ['pitboss.games.showdown']",
        # (houseways is imported to configure Pai Gow and dropped again, issue 30)
        "PAIGOW ['pitboss.games.paigow', 'pitboss.games.paigow_rules', "
        "'pitboss.games.paigow_way', 'pitboss.games.showdown']",
        "SIM False",
        "SAME True",
    ]
