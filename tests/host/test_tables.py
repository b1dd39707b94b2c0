"""The shipped tables are the rule core's own output, and nothing ranks at import or
when a game's tables load (issue 9, 11, 13: cold start).

host_tools/fast/gentables.py computes every table from pitboss.rules.evaluator._eval at build time:
the board's five-card tables (firmware/pitboss/rules/tables/t5_<hash>.py, one bytes constant per
distinct table, named by the profiles that use it) and
the host's (host_tools/fast/tables/<game>-<n>.bin). Here they are rebuilt from the core and
compared, so a rule change that is not regenerated fails.
"""
import subprocess
import sys

import pytest

from host_tools.fast import gentables
from host_tools.fast import hand_keys
from host_tools.fast import hostfast
from pitboss.rules import evaluator, profiles


def test_the_generator_refuses_colliding_multiset_keys(monkeypatch):
    monkeypatch.setattr(hand_keys, "K5", [0] * 53)  # every five-card key the same
    with pytest.raises(RuntimeError, match="share a key"):
        gentables.host_table(profiles.get("nj-5card"), 5)


@pytest.fixture
def fresh(monkeypatch):
    """As a fresh process: no table loaded, and the core must not be called."""
    for gid in profiles.GAMES:
        monkeypatch.setattr(profiles.get(gid), "fast", None)
    hostfast.reset()

    def no(*a):
        raise AssertionError("ranked through the core while loading tables")
    monkeypatch.setattr(evaluator, "_eval", no)
    yield
    hostfast.reset()


@pytest.mark.parametrize("gid", gentables.five_games())
def test_the_first_five_card_rank_loads_without_ranking(fresh, gid):
    p = profiles.get(gid)
    h = [0, 5, 10, 15, 21]  # no joker: the fast path takes it
    assert evaluator._score_bc(p, h) == 0b101111  # 2 3 4 5 7: high card, its rank mask
    assert p.fast  # loaded from pitboss/rules/tables/t5_*.py
    assert hostfast.score(p, h) == evaluator._score_bc(p, h)
    assert hostfast.score(p, h + [30, 40]) > 0  # seven cards: shipped too


@pytest.mark.parametrize("gid,n", [(g, profiles.get(g).size) for g in profiles.GAMES])
def test_the_host_ships_every_games_own_size(fresh, gid, n):
    p = profiles.get(gid)
    assert hostfast.score(p, [1, 6, 11, 16, 22, 27, 33][:n]) >= 0


def test_nothing_is_built_or_ranked_at_import():
    code = ("import sys; sys.path.insert(0, 'firmware')\n"
            "from pitboss.rules import evaluator, profiles\n"
            "assert all(profiles.get(g).fast is None for g in profiles.GAMES)\n"
            "assert not [m for m in sys.modules if m.startswith('pitboss.t5_')]\n"
            "print('OK')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=gentables.REPO, timeout=60)
    assert r.stdout.strip() == "OK", r.stderr


def test_a_board_keeps_only_the_array_not_the_module():
    import sys as _sys
    p = profiles.get("pr-pai-gow")
    evaluator._load(p)
    assert p.fast and "pitboss.rules.tables." + p.t5 not in _sys.modules


def test_each_five_card_game_names_the_module_holding_its_own_table():
    assert gentables.profile_problems() == []
    for gid in gentables.five_games():
        p = profiles.get(gid)
        raw = gentables.table_bytes(gentables.five_table(p))  # rebuilt from the core
        assert p.t5 == gentables.board_module_name(raw)
        m = __import__("pitboss.rules.tables." + p.t5, None, None, ("T",))
        assert m.T == raw
    # NJ (c)2 and QC place the wheel lowest, as PR D's licensee option does; PR B.3/B.7
    # do not: three games, one table; Pai Gow's own, another
    same = {profiles.get(g).t5 for g in ("nj-5card", "qc-caribbean", "pr-pai-gow-a5-low")}
    assert len(same) == 1 and profiles.get("pr-pai-gow").t5 not in same


def test_the_two_card_low_hand_is_ranked_from_its_table():
    low = profiles.get("pr-pai-gow-low")
    raw = gentables.table_bytes(gentables.two_table(low))  # rebuilt from the core
    assert low.t2 == gentables.board_module_name(raw, 2)
    evaluator._load(low)
    assert len(low.fast) == evaluator._T2N
    for a in range(53):
        for b in range(53):
            if a != b:
                assert evaluator._score_bc(low, [a, b]) == evaluator._eval(low, [a, b], 2)


def test_a_profile_naming_the_wrong_module_is_reported(monkeypatch):
    monkeypatch.setattr(profiles.get("qc-caribbean"), "t5", profiles.get("pr-pai-gow").t5)
    problems = gentables.profile_problems()
    assert len(problems) == 1 and "qc-caribbean" in problems[0]
    assert gentables.main(["--check"]) == 1


def test_games_sharing_a_table_share_one_array_on_the_board(monkeypatch):
    a, b = profiles.get("nj-5card"), profiles.get("qc-caribbean")
    monkeypatch.setattr(a, "fast", None)
    monkeypatch.setattr(b, "fast", None)
    evaluator._load(a)
    evaluator._load(b)
    assert a.fast and b.fast is a.fast


def test_flash_copies_each_distinct_table_once(tmp_path):
    from host_tools.deploy import mpy_build
    dests = mpy_build.planned_dests("pico", source=False)
    tables = sorted(d for d in dests if d.startswith(("/pitboss/rules/tables/t5_", "/pitboss/rules/tables/t2_")))
    assert tables == sorted("/pitboss/rules/tables/%s.mpy" % m for m in gentables.board_tables())
