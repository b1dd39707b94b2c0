"""Every generated table file (firmware/pitboss/rules/tables/, host_tools/tables/) is the
rule core's own output: rebuilt from pitboss.rules.evaluator._eval and compared, so a rule
change that is not regenerated fails (the quick checks: tests/host/test_tables.py)."""
from host_tools.fast import gentables


def test_every_generated_file_matches_a_rebuild_from_the_core():
    built = gentables.generate()
    tables = gentables.board_tables()
    # one module per distinct table, every five-card game's table in one of them
    assert len([p for p in built if p.suffix == ".py"]) == len(tables)
    assert len({raw for raw, _ in tables.values()}) == len(tables)
    assert sorted(g for _, games in tables.values() for g in games) \
        == sorted(gentables.five_games() + gentables.two_games())
    assert not gentables.stale_modules(built)
    for path, data in built.items():
        assert path.exists(), "%s missing: python -m host_tools.fast.gentables" % path
        assert gentables.same(path, path.read_bytes(), data), \
            "%s differs from a rebuild: python -m host_tools.fast.gentables" % path
    assert gentables.main(["--check"]) == 0
