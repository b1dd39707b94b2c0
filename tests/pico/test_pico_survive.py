"""Issue 11 on the emulated Pico, production mode (tests/support/pico_survive.py does the run):
boot within 2 s of chip time to the first answered protocol line, heap after boot and
through the session at least 64 KB free, junk on the serial line refused whole and a round
settled after it exactly as on CPython, a burst of slow lines answered without a
watchdog reset, and a hung chip reset by the watchdog into a boot
that resumes the round from the journal, then every game in turn on the same running loop
(each round settled as on CPython) within the heap. One run, shared by the tests below.
Then the same Pico boots from a journal of a full segment and a second begun. The whole
budget (200 rounds of every game, recall 50, meters, a deck registration, 10,000 lines)
is `python -m tests.support.pico_survive --session`, and a boot from a nearly full journal
`python -m tests.support.pico_survive --full-journal 7` (too long for CI)."""
import pytest


BOOT_MS = 2000
MIN_FREE = 64 * 1024
# The largest free block must hold the largest allocation the loop makes (a Pai Gow
# settlement record read back, ~2.3 KB) with room to spare. After a boot from a long
# journal it is the budget's thinnest margin: 9,488 B on 2026-12-02.
MIN_BLOCK = 4096
# The stock image's free heap after a boot that replayed two six-seat Pai Gow rounds:
# 52,368 B measured (2026-12-06), under the 64 KB above (its code is in the heap; the
# pitboss image is the board of record). A floor for regressions, not a budget met.
STOCK_PAI_GOW_FREE = 40 * 1024


@pytest.fixture(scope="module")
def fig():
    # Run by the Pico tier's thread from the start of the session (tests/support/pico_tier.py).
    from tests.support.pico_tier import PicoTier
    return PicoTier.get().result("survive")


pytestmark = pytest.mark.pico("survive")


def test_boot_answers_the_first_line_within_2_s_of_chip_time(fig):
    for key in ("boot_unconfigured", "boot_configured", "after_reset"):
        assert fig[key]["up_ms"] <= BOOT_MS, (key, fig[key])


def test_heap_stays_above_a_quarter(fig):
    for key in ("boot_unconfigured", "boot_configured", "mem_after_junk", "mem_end"):
        m = fig[key]
        assert m["free"] >= MIN_FREE and 0 < m["max_block"] <= m["free"], (key, m)
    assert fig["min_free"] >= MIN_FREE, fig["min_free"]


def test_junk_is_refused_whole_and_a_round_then_settles_as_on_cpython(fig):
    codes = fig["junk_replies"]
    # random bytes split at their newlines: each piece refused (or an unknown command if
    # it happened to be printable), the rest one bad_format per junk line; then the line
    # sent in three pieces is `status`, and `version`.
    assert codes[-2:] == ["status", "ok"], codes
    assert set(codes[:-2]) <= {"bad_format", "unknown_command", "empty"}, codes
    assert codes[-7:-2] == ["bad_format"] * 5, codes
    pico, local = fig["after_junk"]
    assert pico["ok"] and pico == local


def test_a_burst_of_slow_lines_is_answered_without_a_watchdog_reset(fig):
    """BURST `verify` and `mem` pairs arrive at once and are answered in one pass of the
    loop, longer than the watchdog's period: the loop feeds it after every line, so the
    chip is not reset (one boot: the mem replies' up_ms runs on across the burst) and
    every line is answered."""
    from pitboss.loop import WDT_MS
    from tests.support.pico_survive import BURST
    burst = fig["burst"]
    assert len(burst) == BURST and all(r.get("ok") for r in burst), burst[-1:]
    ver = fig["burst_verify"]
    assert len(ver) == BURST and all(r.get("ok") and r.get("files") for r in ver), ver[-1:]
    ups = [r["up_ms"] for r in burst]
    assert ups == sorted(ups) and ups[-1] - ups[0] > WDT_MS, ups
    assert fig["burst_chip_s"] * 1000 > WDT_MS, fig["burst_chip_s"]


def test_a_hung_chip_is_reset_and_the_round_resumes_from_the_journal(fig):
    assert fig["wdt_state"]["running"] and fig["wdt_state"].get("resets") == 1
    st = fig["status_after_reset"]
    assert st["ok"] and st["phase"] == "dealing", st
    pico, local = fig["after_wdt"]
    assert pico["ok"] and pico == local
    assert fig["recall"]["ok"] and fig["meters"]["ok"]


def test_a_boot_from_a_long_journal_reads_only_its_end(fig):
    # A full segment of 64 KB and a second begun (on the pitboss image's raw region two
    # of 32 KB and a third; Pai Gow at six seats, a settled round last: the largest
    # replay; `python -m tests.support.pico_survive --full-journal 7` is the whole budget): the boot opens the journal from its commit record alone
    # and replays from the newest checkpoint; the main loop's idle passes then check
    # every record while a round is dealt.
    fj = fig["full_journal"]
    b = fj["boot"]
    from tests.support.pico_tier import full_journal_segments
    assert len(fj["segments"]) == full_journal_segments(), fj
    # (number, first, last, size): on the image two 32 KB segments hold ~59 KB of records
    assert sum(seg[3] for seg in fj["segments"]) > 55000, fj
    assert b["up_ms"] <= BOOT_MS, b
    assert b["boot_ms"]["journal"] < 100, b  # a full open reads ~14 ms a KB
    assert b["unchecked"] > 50000, b
    assert fj["mem_checked"]["unchecked"] == 0, fj
    assert fj["recall_50"] == min(50, fj["rounds_on_cpython"] + 1) >= 10, fj
    assert fj["min_free"] >= MIN_FREE, fj
    for m in (b, fj["mem_checked"]):
        assert MIN_BLOCK <= m["max_block"] <= m["free"], m


def test_every_game_in_one_session_fits_the_heap(fig):
    from pitboss import games

    got = fig["every_game"]
    assert list(got) == list(games.ids())  # each settled as on CPython (play_games)
    for game, g in got.items():
        m = g["mem"]
        assert m["free"] >= MIN_FREE and m["min_free"] >= MIN_FREE, (game, m)
        assert 0 < m["max_block"] <= m["free"], (game, m)
    assert fig["tilts"] == [], fig["tilts"]  # no internal_error / MemoryError tilt
    assert fig["mem_end"]["min_free"] >= MIN_FREE, fig["mem_end"]


def test_a_power_cycle_after_every_game_boots_and_replays_within_the_heap(fig):
    # The session ends with rounds of every game on one running loop (Pai Gow with six
    # seats among them, three-card last); powered off and on, the boot replays the
    # journal on the 246 KB heap and answers within the budget, configured as it was.
    boot = fig["boot_after_session"]
    assert boot["up_ms"] <= BOOT_MS, boot
    assert boot["free"] >= MIN_FREE and 0 < boot["max_block"] <= boot["free"], boot
    st = fig["status_after_session"]
    assert st["ok"] and st["game"] == "nj-3card" and not st["tilts"], st


def test_the_python_stack_keeps_half_its_size_spare(fig):
    """The pitboss image keeps Python frames on a stack of their own (4.5 KB, taken from the
    heap; boards/rp2/PITBOSS_PICO/heap/heap.c): a call past its end is a RuntimeError. The
    deepest it went through every game, export, recall and meters, and through the boot
    that replays them, stays under half of it."""
    from tests.support.pico_tier import image_is_pitboss

    if not image_is_pitboss():
        pytest.skip("a stock image keeps its frames on the heap")
    for key in ("mem_end", "boot_after_session"):
        deepest, size = fig[key]["pystack"]
        assert 0 < deepest <= size // 2, (key, fig[key]["pystack"])


def test_the_stock_image_boots_after_six_seat_pai_gow_rounds(fig):
    """Two six-seat Pai Gow rounds on the stock image, then a power cycle: the boot
    replays them (the settlements' 2.3 KB records read into one scratch buffer taken
    before the replay: RegionJournal.scratch) and the table answers, no tilt."""
    out = fig["stock_pai_gow"]
    boot, st = out["boot"], out["status"]
    assert boot.get("ok"), boot
    assert boot["free"] >= STOCK_PAI_GOW_FREE and boot["max_block"] >= MIN_BLOCK, boot
    assert st.get("ok") and not st["tilts"] and st["round"] == 2, st
    assert st["phase"] == "settled" and st["dealt"] == 49, st
