"""Issue 27's wear budget: the pitboss image's raw journal region lasts at least 20 years
at 1,000 rounds a day for every game at its full table, counted as `pitboss bench
--journal` counts it (the firmware's RegionJournal over host_tools.emu.nor_flash's model,
erases per round from seeded rounds)."""
from host_tools.bench import journal as bench_journal
from host_tools.deploy.romfs_deploy import layout


def test_the_image_region_gives_every_game_twenty_years():
    res = bench_journal.measure(rounds=30)
    life = bench_journal.image_life(res)
    assert set(life) == set(bench_journal.GAMES)
    short = {g: round(y, 1) for g, y in life.items() if y < bench_journal.LIFE_YEARS}
    assert not short, "under %d years at the image's %d KB region: %s" % (
        bench_journal.LIFE_YEARS, layout()["JOURNAL_BYTES"] // 1024, short)
    text = bench_journal.render(res)
    assert "within the 20-year budget" in text
    # the ring spreads erases: no sector more than one erase ahead of another
    for g in res["games"].values():
        lo, hi = g["wear_spread"]
        assert hi - lo <= 1, g
