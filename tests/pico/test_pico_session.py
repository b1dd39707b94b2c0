"""Issue 27's budget session on the emulated Pico, release image, production mode
(tests/support/pico_survive.py session(), run by the Pico tier's `session` job): every
game at a full table for SESSION_ROUNDS rounds in one boot, each settlement exactly as on
CPython, the journal exported and acknowledged, `recall 50`, `meters`, a deck registered
through the MFRC522 and a round dealt by tag, SESSION_LINES protocol lines, then a power
cycle. Its figures are printed at the end of the run (tests/conftest.py) and kept in
build/pico-session.json.

CI runs it at the budget's own size (pico_tier.SESSION_ROUNDS, _LINES: 200 rounds of
every game and 10,000 lines), on a Pico of its own beside the others, since the emulator's
core runs in WebAssembly (fix 8: ~15 minutes where rp2040js's interpreter took an hour;
docs/bench.md). PITBOSS_SESSION_ROUNDS=10 PITBOSS_SESSION_LINES=2000 runs a small one. The
budgets asserted are the ones the image meets, a card's median (2 ms) among them since
1e8c0e3 (issue 27: 1.95 ms in CI, p99 2.91 ms). After the session the same Pico boots from
a full journal (seven segments)."""
import pytest

# Issue 27's budgets (chip time on the emulated Pico at 125 MHz).
BOOT_MS = 400  # reset to the first protocol line answered
BOOT_FREE = 180 * 1024  # free heap after boot
MIN_BLOCK = 64 * 1024  # largest free block after boot, and through the session
SESSION_FREE = 150 * 1024  # lowest free heap over the session
CARD_MAX_MS = 15  # a dealt card, its frame's last byte to its acknowledgement
CARD_P99_MS = 5  # ... 99 in 100 of them
CARD_P50_MS = 2  # ... half of them


@pytest.fixture(scope="module")
def fig():
    from tests.support.pico_tier import PicoTier
    f = PicoTier.get().result("session", timeout=3600)
    if "skipped" in f:
        pytest.skip(f["skipped"])
    return f


pytestmark = pytest.mark.pico("session")


def test_every_round_of_every_game_settles_and_nothing_tilts(fig):
    from tests.support.pico_tier import SESSION_ROUNDS, SESSION_LINES
    # (each settlement was compared with CPython's as it came: session() asserts it)
    assert fig["meters_rounds"] == SESSION_ROUNDS * len(fig["seats"]), fig["meters_rounds"]
    assert fig["recall_50"] == min(50, SESSION_ROUNDS * len(fig["seats"]))
    assert fig["exports"] >= 1
    assert fig["rfid"] == {"registered": 52, "dealt": fig["rfid"]["dealt"]}
    assert fig["lines_bad"] == 0 and fig["lines"] == SESSION_LINES
    assert fig["tilts"] == [], fig["tilts"]
    st = fig["status_after_session"]
    assert st.get("ok") and not st["tilts"], st


def test_boot_and_the_boot_after_the_session_meet_the_budget(fig):
    for key in ("boot", "boot_after_session"):
        b = fig[key]
        assert b["up_ms"] <= BOOT_MS, (key, b)
        assert b["free"] >= BOOT_FREE and b["max_block"] >= MIN_BLOCK, (key, b)


def test_a_power_cycle_with_a_full_journal_meets_the_boot_budget(fig):
    """The release Pico powered up from a journal of the budget's seven segments (six-seat
    Pai Gow rounds, the largest, played by the CPython twin): the first line within 400
    ms, 180 KB free after boot and a 64 KB block; the idle passes then check every
    record while a round is dealt, and `recall` answers as CPython's."""
    from tests.support.pico_tier import FULL_JOURNAL_SEGMENTS
    fj = fig["full_journal"]
    assert len(fj["segments"]) == FULL_JOURNAL_SEGMENTS, fj["segments"]
    b = fj["boot"]
    assert b["unchecked"] > 0, b  # the boot left the older records to the idle passes
    assert b["up_ms"] <= BOOT_MS, b
    assert b["free"] >= BOOT_FREE and b["max_block"] >= MIN_BLOCK, b
    assert fj["mem_checked"]["unchecked"] == 0, fj["mem_checked"]
    assert fj["min_free"] >= SESSION_FREE, fj["min_free"]


def test_the_heap_stays_within_the_budget_over_the_session(fig):
    assert fig["min_free"] >= SESSION_FREE, fig["min_free"]
    assert fig["min_max_block"] >= MIN_BLOCK, fig["min_max_block"]


def test_every_card_is_acknowledged_within_15_ms_99_in_100_within_5_half_within_2(fig):
    c = fig["card_ms"]
    # Every card dealt through UART1 over the session (the tag round's are the
    # reader's): a round of any game at a full table deals at least 20. The emulated
    # UART raises its receive interrupts as a PL011 (host_tools/emu/pico/uart.mjs, fix 6).
    assert c["n"] >= 20 * fig["meters_rounds"], c
    assert c["max"] <= CARD_MAX_MS, c
    assert c["p99"] <= CARD_P99_MS, c
    assert c["p50"] <= CARD_P50_MS, c
