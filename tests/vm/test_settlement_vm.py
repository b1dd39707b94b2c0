"""Settlement on the MicroPython 1.27 VM equals CPython's, hand by hand, amount by amount.

tests/mp/settlement_rounds.py plays 200 seeded rounds of every table game (nj-5card,
nj-3card, qc-caribbean, pa-three-card-prime with the All-Six Bonus, pr-pai-gow,
pr-pai-gow-a5-low) through pitboss.sim.rounds.simulate_round, whose xorshift32 shuffles alike
on both interpreters, and prints each round's whole settlement as one canonical line.
The same script runs on the VM and under CPython; the lines must be identical.
"""
import os
import subprocess
import sys

import pytest

from pitboss import games

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(HERE)
SCRIPT = os.path.join(HERE, "mp", "settlement_rounds.py")
ROUNDS = 200


def _rounds(stdout):
    lines = stdout.splitlines()
    assert lines and lines[-1] == "ROUNDS-DONE %d" % (ROUNDS * len(games.ids())), \
        stdout[-2000:]
    out = {}
    for line in lines[:-1]:
        tag, game, seed, text = line.split(" ", 3)
        assert tag == "R"
        out[(game, int(seed))] = text
    return out


@pytest.fixture(scope="module")
def cpython():
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "firmware"))
    p = subprocess.run([sys.executable, SCRIPT, str(ROUNDS)], capture_output=True,
                       text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return _rounds(p.stdout)


@pytest.fixture(scope="module")
def vm():
    from host_tools.emu.vm import run_script
    r = run_script(SCRIPT, mounts={os.path.join(REPO, "firmware"): "/"},
                   args=[str(ROUNDS)], timeout=600)
    # the sentinel line, not only the exit status, proves the script ran to the end
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    return _rounds(r.stdout)


def _fields(text):
    """Split a canonical line at its top-level commas (for a readable diff)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "[{"
        depth -= ch in "]}"
        if ch == "," and depth == 1:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


def test_vm_settles_every_round_like_cpython(vm, cpython):
    assert set(vm) == set(cpython)
    for game in games.ids():
        assert sum(1 for g, _ in vm if g == game) == ROUNDS
    for key in sorted(cpython):
        if vm[key] != cpython[key]:
            diff = [(a, b) for a, b in zip(_fields(vm[key]), _fields(cpython[key]))
                    if a != b]
            pytest.fail("round %s %d differs (VM, CPython): %r" % (key[0], key[1],
                                                                   diff[:3]))


@pytest.mark.host  # the rest of the module is vm (tests/support/tiers.py)
def test_the_rounds_cover_the_rules(cpython):
    """The cross-check is only as good as what the rounds exercise."""
    text = {g: " ".join(v for (gg, _), v in cpython.items() if gg == g)
            for g in games.ids()}
    for g in ("pr-pai-gow", "pr-pai-gow-a5-low"):
        for want in ("outcome:win", "outcome:push", "outcome:lose", "high_result:copy",
                     "rule:two_pair_split", "rule:two_pair_keep", "rule:no_pair",
                     "rule:straight_best_front", "Jk"):
            assert want in text[g], (g, want)
        assert "commission:0" in text[g]
    tcp = text["pa-three-card-prime"]
    for want in ("qualifies:F", "qualifies:T", "decision:fold", "decision:play",
                 "line:three_same_colour", "all_six:{amount:", "outcome:push"):
        assert want in tcp, want
    assert "line:three_of_a_kind,outcome:win" in tcp  # an All-Six or Pair Bonus win
    car = text["qc-caribbean"]
    for want in ("qualifies:F", "qualifies:T", "line:one_pair", "line:ace_king"):
        assert want in car, want
    for g in ("nj-5card", "nj-3card"):
        assert "outcome:win" in text[g]
