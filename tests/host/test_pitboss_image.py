"""Issue 27: the pitboss image (boards/rp2/PITBOSS_PICO) as committed: its one flash
layout, the UF2 pinned beside its recipe and built from it, the ROMFS image and program
manifest `pitboss flash` deploys, the region entries of the integrity manifest, and the
real-Pico image install (BOOTSEL drive). What it does on the chip is the Pico tier's
(tests/pico/test_pico_board.py: flash, romfs, stock)."""
import hashlib
import struct
from pathlib import Path

import pytest

from host_tools import output as errors
from host_tools.deploy import mpremote_steps
from host_tools.deploy import mpy_build
from host_tools.deploy import verify
from host_tools.deploy import romfs_deploy as rd
from host_tools.emu.pico import PITBOSS_UF2, find_firmware
from pitboss.store import integrity

REPO = Path(__file__).resolve().parents[2]
BOARD = REPO / "boards" / "rp2" / "PITBOSS_PICO"


def test_the_layout_is_written_once_and_adds_up():
    L = rd.layout()
    assert L["FLASH_BYTES"] == 2 * 1024 * 1024 and L["FLASH_BASE"] == 0x10000000
    assert L["CODE_BYTES"] + L["ROMFS_BYTES"] + L["STORAGE_BYTES"] == L["FLASH_BYTES"]
    assert L["JOURNAL_START"] == 0 and L["LFS_START"] == L["JOURNAL_BYTES"]
    assert L["JOURNAL_BYTES"] + L["LFS_BYTES"] == L["STORAGE_BYTES"]
    assert all(v % 4096 == 0 for k, v in L.items() if k != "FLASH_BASE")
    # The numbers appear in no other source file: the cmake file parses them, the board
    # file and the firmware import the module, the host loads it by path.
    for f in list(BOARD.glob("*.cmake")) + [BOARD / "mpconfigboard.h",
                                             REPO / "boards" / "pico.py",
                                             BOARD / "modules" / "_boot.py"]:
        text = f.read_text().lower()
        for k in ("ROMFS_BYTES", "STORAGE_BYTES", "JOURNAL_BYTES", "LFS_BYTES"):
            assert "0x%x" % L[k] not in text and "%d" % L[k] not in text, (f, k)


def test_the_committed_image_is_pinned_and_has_the_layout():
    uf2, _, digest = find_firmware()  # the default: the pitboss image
    assert uf2.resolve() == PITBOSS_UF2.resolve()
    sums = (BOARD / "build" / "SHA256SUMS").read_text().split()
    assert sums[sums.index("PITBOSS_PICO.uf2") - 1] == digest
    L = rd.layout()
    core = rd.uf2_payload(uf2)
    assert 200_000 < len(core) <= L["CODE_BYTES"]
    # pico-sdk's binary info names both block devices the image defines (rp2_flash.c):
    # the ROMFS below the storage area, and the storage area (journal + littlefs).
    romfs_at = L["FLASH_BASE"] + L["CODE_BYTES"]
    storage_at = romfs_at + L["ROMFS_BYTES"]
    assert struct.pack("<II", romfs_at, L["ROMFS_BYTES"]) in core
    assert struct.pack("<II", storage_at, L["STORAGE_BYTES"]) in core
    # The stock image stays available by name.
    stock, _, _ = find_firmware("stock")
    assert stock.name == "RPI_PICO-v1.27.0.uf2"


def test_the_romfs_image_and_program_manifest(tmp_path):
    files = mpy_build.build("pico", build_root=tmp_path)
    a = rd.romfs_image(files)
    assert a == rd.romfs_image(list(reversed(files)))  # sorted: the same bytes
    assert a[:3] == b"\xd2\xcd\x31" and len(a) < rd.layout()["ROMFS_BYTES"]
    assert b"run.mpy" in a and b"main.py" not in a   # main.py is the image's, frozen
    regions = rd.program(files)
    assert sorted(e.split("/")[0] for e in regions) == ["@core", "@romfs"]
    text = rd.manifest_text(regions, "pico", "mpy", integrity.COMPLETE)
    info, entries = integrity.parse_manifest(text)
    assert info["state"] == "complete"
    assert all(integrity.is_region(p) for _, p in entries)
    for digest, path in entries:
        assert hashlib.sha256(regions[path]).hexdigest() == digest
    # On CPython (and a stock image) there is no program flash: a region is missing,
    # never mistaken for a file.
    assert integrity.file_sha256(entries[0][1]) is None


def test_the_seeded_answer_covers_the_regions(tmp_path):
    files = mpy_build.build("pico", build_root=tmp_path)
    regions = rd.program(files)
    final = rd.manifest_text(regions, "pico", "mpy", integrity.COMPLETE)
    seed = b"s" * 32
    want = verify.expected_from(dict(regions, **{integrity.MANIFEST: final.encode()}),
                                seed)
    assert [p for p, _ in want["files"]] == sorted([integrity.MANIFEST] + list(regions))
    # A board whose ROMFS lost a byte answers otherwise.
    bad = dict(regions)
    e = next(k for k in bad if k.startswith("@romfs/"))
    bad[e] = bad[e][:-1] + b"\0"
    got = verify.expected_from(dict(bad, **{integrity.MANIFEST: final.encode()}), seed)
    assert verify.compare_answer(want, got) == [(e, "mismatch")]


def test_a_real_pico_gets_the_image_over_its_bootsel_drive(tmp_path, monkeypatch):
    drive = tmp_path / "RPI-RP2"
    drive.mkdir()
    (drive / "INFO_UF2.TXT").write_text("UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\n"
                                        "Board-ID: RPI-RP2\n")
    monkeypatch.setenv("PITBOSS_BOOTSEL_DIR", str(drive))
    assert rd.bootsel_mounts() == [drive]
    port = tmp_path / "ttyACM0"
    port.write_text("")
    steps = []
    monkeypatch.setattr(rd.time, "sleep", lambda s: None)
    assert rd.install_image(str(port), PITBOSS_UF2, steps.append) == "bootsel"
    assert (drive / PITBOSS_UF2.name).read_bytes() == PITBOSS_UF2.read_bytes()
    assert steps[0].startswith("image: copying PITBOSS_PICO.uf2 to the BOOTSEL drive")
    # Nothing to install with: one line naming both ways.
    monkeypatch.setenv("PITBOSS_BOOTSEL_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setattr(rd, "bootsel_mounts", lambda: [])
    monkeypatch.setattr(rd.shutil, "which", lambda name: None)
    monkeypatch.setattr(mpremote_steps, "run", lambda *a, **k: "")
    with pytest.raises(errors.FlashError, match="BOOTSEL.*picotool"):
        rd.install_image(str(port), PITBOSS_UF2, steps.append, wait=0)


def test_the_before_after_table_has_a_row_per_figure_and_the_ratio():
    from host_tools.bench import image as bench_image

    one = {"deploy": {"chip_s": 10.0, "wall_s": 60.0}, "first_line_ms": 700,
           "boot_free": 100_000, "boot_max_block": 60_000, "min_free": 50_000,
           "repl": {"held": 100_000, "import_ms": 600.0, "app_ms": 600.0, "gc_ms": 20.0,
                    "free": 110_000, "max_block": 60_000},
           "card_ms": {"median": 180.0, "p99": 270.0, "max": 290.0, "resends": 60},
           "round_ms": 15000.0, "settle_ms": 1000, "round_chip_ms": 9000.0,
           "settle_chip_ms": 950.0, "line_chip_ms": {"n": 13, "median": 60.0, "max": 950.0},
           "round_busy_ms": 12000.0}
    two = dict(one, first_line_ms=350, repl=dict(one["repl"], held=46_000),
               round_chip_ms=900.0)
    three = dict(two, first_line_ms=140)
    text = bench_image.render({"stock": one, "pitboss": two, "release": three})
    rows = [ln for ln in text.splitlines() if ln.startswith("| ")]
    assert len(rows) == 1 + len(bench_image.ROWS)
    assert rows[0].endswith("| pitboss / stock | release / stock | budget |")
    assert ("| power-on to the first line answered (ms) | 700 | 350 | 140 | 0.50x | "
            "0.20x | <= 400 |") in rows
    assert ("| heap held by import pitboss.app (B) | 100000 | 46000 | 46000 | 0.46x | "
            "0.46x |  |") in rows
    assert ("| Pai Gow round: the chip's time on its lines and cards (ms) | 9000 | "
            "900 | 900 | 0.10x | 0.10x | <= 500 |") in rows
    assert all(" - " not in r for r in rows)  # every figure is in a run's result


def test_a_repl_step_that_failed_keeps_its_other_figures_and_says_why():
    """The stock image's App() over the raw REPL can run out of heap (2026-12-07): its
    import figures still go into the table, the App rows are "-", and the reason is
    printed under the table, per image."""
    from host_tools.bench import image as bench_image

    ok = {"held": 46_000, "import_ms": 280.0, "app_ms": 900.0, "gc_ms": 17.0,
          "free": 136_000, "max_block": 63_000}
    short = {"held": 100_000, "import_ms": 600.0,
             "app_error": "App() over the REPL: MemoryError memory allocation failed, "
                          "allocating 1148 bytes (7000 B free after it)"}
    text = bench_image.render({"stock": {"repl": short}, "pitboss": {"repl": ok},
                               "release": {"repl": {"error": "could not enter raw repl"}}})
    rows = [ln for ln in text.splitlines() if ln.startswith("| ")]
    assert "| heap held by import pitboss.app (B) | 100000 | 46000 | - | 0.46x |  |  |" in rows
    assert "| App() built (ms) | - | 900.0 | - |  |  |  |" in rows
    notes = [ln for ln in text.splitlines() if ln.startswith("- ")]
    assert notes == ["- stock image: " + short["app_error"],
                     "- release image: could not enter raw repl"]


def _program_module(monkeypatch, tmp_path, core, romfs, core_digest=None, frozen=False):
    """The image's frozen pitboss_program, loaded on CPython with its two regions faked
    (bytes instead of the memory-mapped flash) and its manifest in tmp_path."""
    import importlib.util
    import sys
    import types

    monkeypatch.syspath_prepend(str(BOARD / "modules"))  # pitboss_layout beside it
    monkeypatch.setitem(sys.modules, "micropython", types.SimpleNamespace(const=int))
    spec = importlib.util.spec_from_file_location("pitboss_program",
                                                  BOARD / "modules" / "pitboss_program.py")
    prog = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prog)
    monkeypatch.setitem(sys.modules, "pitboss_program", prog)
    mem = {"@core/%d" % len(core): core}
    if romfs is not None:
        mem["@romfs/%d" % len(romfs)] = romfs
    monkeypatch.setattr(prog, "region", lambda e: memoryview(mem[e]) if e in mem else None)
    monkeypatch.setattr(prog, "_frozen", lambda: frozen)
    regions = {e: hashlib.sha256(b).hexdigest() for e, b in mem.items()}
    if core_digest is not None:
        regions["@core/%d" % len(core)] = core_digest
    man = tmp_path / "manifest.sha256"
    man.write_text(integrity.format_manifest(sorted((d, e) for e, d in regions.items()),
                                             "pico", "mpy", integrity.COMPLETE))
    monkeypatch.setattr(prog, "MANIFEST", str(man))
    return prog, str(man)


def test_the_core_is_hashed_after_the_first_line_and_before_play(monkeypatch, tmp_path):
    """Boot hashes the ROMFS before any of its code runs and defers the core (~0.37 s of
    a Pico) to step(), a chunk at a time; the boot check counts a deferred region as
    neither verified nor missing."""
    core, romfs = bytes(range(256)) * 97, b"romfs" * 1000  # 24,832 B: 4 chunks of 8 KB
    prog, man = _program_module(monkeypatch, tmp_path, core, romfs)
    assert prog.check() is None
    assert list(prog.verified) == ["@romfs/5000"] and prog.deferred[0][0] == "@core/24832"
    assert integrity.check(man, cached=True) == []  # the core: deferred, not a problem
    assert integrity.deferred_check() == prog.step
    assert [prog.step() for _ in range(4)] == [None, None, None, ""]
    assert prog.verified["@core/24832"] == hashlib.sha256(core).hexdigest()
    assert integrity.deferred_check() is None and prog.step() == ""
    # A core that is not what the manifest lists: found once its last chunk is hashed.
    prog, man = _program_module(monkeypatch, tmp_path, core, romfs, core_digest="0" * 64)
    assert prog.check() is None
    assert [prog.step() for _ in range(4)][-1] == \
        "@core/24832 is not what the manifest lists"
    assert not prog.deferred and "@core/24832" not in prog.verified


def test_the_release_image_checks_its_core_and_takes_no_romfs_manifest(monkeypatch,
                                                                        tmp_path):
    """The release variant (the firmware frozen into the core): its manifest lists the
    core alone, deferred as on the ROMFS image; a manifest a ROMFS deploy wrote, one
    pending, or none at all boots into the firmware_mismatch tilt, never into the table."""
    core, romfs = bytes(range(256)) * 97, b"romfs" * 1000
    prog, man = _program_module(monkeypatch, tmp_path, core, None, frozen=True)
    assert prog.check() is None and not prog.verified
    assert prog.deferred[0][0] == "@core/24832"
    assert [prog.step() for _ in range(4)] == [None, None, None, ""]
    prog, man = _program_module(monkeypatch, tmp_path, core, romfs, frozen=True)
    assert prog.check() == "the manifest is not the release image's (it must list the " \
        "core alone)"
    prog, man = _program_module(monkeypatch, tmp_path, core, None, frozen=True)
    text = open(man).read()
    open(man, "w").write(text.replace("state=complete", "state=pending"))
    assert prog.check() == "the last deploy did not finish (manifest pending)"
    import os

    os.remove(man)
    assert prog.check().startswith("no manifest")
    # The host's side: the release image's program is its core, no ROMFS image built.
    regions = rd.program([], rd.RELEASE if rd.RELEASE.exists() else rd.IMAGE, romfs=False)
    assert [e.split("/")[0] for e in regions] == ["@core"]


def test_nothing_moves_the_round_before_the_deferred_check_ends(tmp_path):
    """The controller hashes a chunk per idle pass, and whatever is left before a verb
    that moves the round or a card from the shoe; a mismatch is firmware_mismatch."""
    from pitboss.controller import Controller

    for verdict, tilts in (("", []), ("@core/9 is not what the manifest lists",
                                      ["firmware_mismatch"])):
        calls = []

        def step():
            calls.append(1)
            return None if len(calls) < 5 else verdict

        ctl = Controller(str(tmp_path / verdict[:5]), program=step)
        ctl.boot()
        ctl.idle()
        ctl.idle()
        assert len(calls) == 2
        assert ctl.command("status")["ok"] and len(calls) == 2  # reads wait for nothing
        r = ctl.command("newround")  # (no game configured: refused, once checked)
        assert len(calls) == 5 and [a["code"] for a in ctl.active_tilts()] == tilts
        assert r["error"]["code"] == ("tilted" if tilts else "not_configured"), r
        ctl.idle()
        ctl.shoe_card(0, 1)
        assert len(calls) == 5  # checked once
