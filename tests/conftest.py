import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (REPO, os.path.join(REPO, "firmware")):
    if path not in sys.path:
        sys.path.insert(0, path)

# The host's score()/best() (host_tools/fast/hostfast.py) are installed explicitly, as the
# host tools do; tests of the board's own path call evaluator._board_score /
# _board_best, or take the `board_path` fixture (tests/test_vectors.py runs every vector
# both ways).
from host_tools.fast import hostfast  # noqa: E402

hostfast.install()

# CPython has no `framebuf`: the firmware's display code draws on the host's stand-in,
# installed explicitly here as the host tools do (it is not part of the firmware).
from host_tools.emu import framebuf_shim  # noqa: E402

framebuf_shim.install()

# ---- test tiers ----------------------------------------------------------------------
# Every test gets exactly one tier marker, assigned here and nowhere else (registered in
# pyproject.toml; DEVELOPERS.md, "Tests: what runs where", says how to run each):
#   host    CPython only, no Node, no tools: the quick loop (`pytest -m host`)
#   slow    CPython only, but long: the census of every hand of every game
#   vm      the MicroPython 1.27 VM in script mode (Node)
#   board   the virtual board behind a pty, driven by the real mpremote (Node, mpremote)
#   static  pyright and mpy-cross over firmware/ and boards/
#   floor   the floor (tests/floor/): SQLite, a PostgreSQL server the tests start, the
#           collector on ptys, headless Chromium
# By module; TEST_TIERS overrides single tests of modules that mix tiers. A test module
# missing here is a collection error, so a new file cannot slip out of every tier.
MODULE_TIERS = {
    "test_auth": "host", "test_caribbean": "host", "test_census": "slow",
    "test_census_reference": "host", "test_cli": "host", "test_controller": "host",
    "test_deckmap": "host", "test_display": "host", "test_fastpath": "host",
    "test_fuzz": "host", "test_journal": "host", "test_meters": "host",
    "test_mfrc522": "host", "test_paigow": "host", "test_houseways": "host", "test_bench_journal": "host", "test_paytables_posted": "host", "test_edge": "host", "test_payscreen": "host", "test_properties": "host",
    "test_rfid_table": "host", "test_shoe": "host", "test_showdown": "host",
    "test_table": "host", "test_threecard": "host", "test_tilt": "host",
    "test_boards": "host", "test_vectors": "host", "test_main_loop": "host",
    "test_io_vm": "vm", "test_micropython_heap": "vm", "test_settlement_vm": "vm",
    "test_storage_vm": "vm", "test_vm_runner": "vm",
    "test_board_e2e": "board", "test_flash": "board", "test_soak_board": "board",
    "test_table_board": "board", "test_virtual_board": "board", "test_bench": "board",
    "test_install": "board",
    "test_static_checks": "static", "test_architecture": "static",
    "test_games": "host", "test_controller_faults": "host", "test_cli_errors": "host",
    "test_security_board": "board", "test_tables": "host", "test_native": "vm",
    "test_pico_board": "board",
    "test_history": "host", "test_history_board": "board",
    "test_misdeal": "host", "test_rank_refusals": "host",
    "test_virtual_timers": "board", "test_pico_switch": "board",
    "test_portlock": "host", "test_ports": "board", "test_pico_junk": "board",
    "test_cli_conventions": "host", "test_readme_commands": "host",
    "test_pitboss_image": "host",
    "test_pico_survive": "board",
    "test_shoe_link": "host", "test_serial_board": "board",
    # tests/floor/ (its conftest.py assigns the same tier)
    "test_floor_store": "floor", "test_floor_records": "floor",
    "test_floor_collect": "floor", "test_floor_web": "floor",
    "test_ringjournal": "host", "test_card_alloc_vm": "vm",
}
TEST_TIERS = {
    ("test_boards", "test_virtual_board_on_micropython_draws_through_the_real_driver"): "vm",
    ("test_vectors", "test_vectors_on_micropython_vm"): "vm",
    ("test_ringjournal", "test_power_cut_at_every_byte_of_every_program_and_every_step_of_every_erase"): "slow",
    ("test_main_loop", "test_main_loop_on_micropython"): "vm",
    ("test_main_loop", "test_mem_on_micropython"): "vm",
    ("test_settlement_vm", "test_the_rounds_cover_the_rules"): "host",
    ("test_flash", "test_sys_mpy_and_header_decoding"): "host",
    ("test_flash", "test_loadable_follows_the_mpy_loader_rules"): "host",
    ("test_flash", "test_plan_copies_changed_and_removes_stale"): "host",
    ("test_flash", "test_manifest_roundtrip_and_board_side_check"): "host",
    ("test_flash", "test_build_layout_is_reproducible"): "static",
    ("test_pitboss_image", "test_the_committed_image_rebuilds_byte_for_byte"): "slow",
    ("test_bench", "test_the_cli_parser_takes_the_bench_options"): "host",
    ("test_bench", "test_cross_compiles_the_evaluator_native"): "static",
    ("test_bench", "test_native_emitter_run_where_installed"): "vm",
    ("test_static_checks", "test_no_cpython_only_imports"): "host",
    ("test_games", "test_the_registry_imports_lazily_on_micropython"): "vm",
    ("test_tables", "test_every_generated_file_matches_a_rebuild_from_the_core"): "slow",
    ("test_houseways", "test_no_way_fouls_over_every_rank_pattern_and_a_large_sample"): "slow",
    ("test_houseways", "test_the_pickable_table_holds_over_every_rank_pattern"): "slow",
    ("test_houseways", "test_the_board_checks_ways_too"): "vm",
    ("test_native", "test_flash_builds_the_native_module_for_the_boards_arch"): "static",
    ("test_native", "test_a_board_without_a_native_emitter_gets_the_bytecode_path"): "static",
}
TIERS = ("host", "slow", "vm", "board", "static", "floor")
@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        mod = item.module.__name__.rpartition(".")[2]
        tier = TEST_TIERS.get((mod, item.originalname)) or MODULE_TIERS.get(mod)
        if tier is None:
            raise pytest.UsageError("%s has no test tier: add it to MODULE_TIERS in "
                                    "tests/conftest.py" % mod)
        item.add_marker(tier)
    # Tests of background jobs go last: pytest runs in order, so one of them met early
    # would hold the foreground idle until its job ends, instead of the rest of the suite
    # running meanwhile (the jobs start at collection: pytest_collection_finish below).
    # (Tried on 2026-12-01 and reverted when the Picos lost their ports; that was the
    # census's forked pool holding their port locks: host_tools.process_pool.)
    # The slow tier (the census, a pool of one worker per core) goes just before them:
    # met early, its workers fight both Pico emulators for CI's two cores; met late, it
    # fills the core the foreground alone leaves idle once the Pico's jobs are done.
    def place(i):  # a stable sort keeps the modules' own order within each group
        if (i.get_closest_marker("pico") is not None or
                i.get_closest_marker("background") is not None):
            return 2
        return 1 if i.get_closest_marker("slow") is not None else 0
    items.sort(key=place)

# ---- one flashed virtual board for the board modules ---------------------------------
@pytest.fixture(scope="session")
def vb_flash(tmp_path_factory):
    """A virtual board's flash folder written once by `pitboss flash` (service mode, no
    key yet): the board modules start their boards from copies of it, as a factory
    writes one image onto every board. A flash is ~20 s of the VM; tests/test_flash.py
    and the e2e job flash boards of their own, since the flashing is what they test.
    Never written to: copy it (shutil.copytree) and start a board on the copy."""
    from host_tools.deploy import flash as flashing
    from host_tools.emu.vboard import virtual_board
    base = tmp_path_factory.mktemp("vb-flashed")
    with virtual_board(base / "flash", service=True) as st:
        flashing.flash(st["port"], progress=None)
    return base / "flash"


# ---- the emulated Pico's board tier (tests/pico_tier.py) -----------------------------
# Its jobs start in the background as soon as collection finds a Pico test, so the
# emulator (a Node process) works while the rest of the suite runs on the other core.
def _job_names(session, marker):
    names = set()
    for item in session.items:
        m = item.get_closest_marker(marker)
        if m is not None:
            names.update(m.args)
    return names


def pytest_collection_finish(session):
    jobs = _job_names(session, "pico")
    if jobs:
        from tests.pico_tier import PicoTier
        PicoTier.get(jobs)
    # The virtual board's long jobs (tests/background.py), on a thread of their own.
    bg = _job_names(session, "background")
    if bg:
        from tests.background import Background
        Background.start(bg)


def pytest_terminal_summary(terminalreporter):
    mod = sys.modules.get("tests.timeline")
    if mod is not None:
        mod.report(terminalreporter.write_line)


def pytest_sessionfinish(session, exitstatus):
    mod = sys.modules.get("tests.pico_tier")
    if mod is not None:
        mod.PicoTier.shutdown()
    mod = sys.modules.get("tests.background")
    if mod is not None:
        mod.Background.shutdown()


def pytest_configure(config):
    config.addinivalue_line("markers", "pico: runs on the emulated Raspberry Pi Pico "
                            "(tests/pico_tier.py)")
    config.addinivalue_line("markers", "background: a long virtual-board job run in the "
                            "background from the start of the session (tests/background.py)")
