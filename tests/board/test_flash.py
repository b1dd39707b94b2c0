"""Flashing: the manifest/diff logic on CPython, then real flashes of the virtual board
(MicroPython 1.27 WebAssembly behind a pty, driven by the real mpremote)."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from host_tools.deploy import flash as fl
from host_tools import output as errors
from host_tools.deploy import flash_plan
from host_tools.deploy import mpremote_steps
from host_tools.deploy import mpy_abi
from host_tools.deploy import mpy_build
from host_tools.emu import vboard
from host_tools.emu import vboard_state
from host_tools.deploy import verify
from pitboss.store import integrity

# ---------------------------------------------------------------------------------------
# CPython: ABI decoding, build, plan, manifest
# ---------------------------------------------------------------------------------------
RP2_MPY = 6 | ((4 << 2) | 3) << 8        # armv6m, sub-version 3 (MicroPython 1.27 rp2)
ESP32_MPY = 6 | ((10 << 2) | 3) << 8     # xtensawin
WASM_MPY = 774                           # what the VM reports: bytecode only


@pytest.mark.host  # the rest of the module is board (tests/support/tiers.py)
def test_sys_mpy_and_header_decoding():
    assert mpy_abi.decode_sys_mpy(WASM_MPY) == (6, 3, 0)
    assert mpy_abi.decode_sys_mpy(RP2_MPY) == (6, 3, 4)
    assert mpy_abi.MPY_ARCHS[mpy_abi.decode_sys_mpy(ESP32_MPY)[2]] == "xtensawin"
    assert mpy_abi.decode_mpy_header(b"M\x06\x00\x1f") == (6, 0, 0)
    assert mpy_abi.decode_mpy_header(b"M\x06\x13\x1f") == (6, 3, 4)
    with pytest.raises(errors.FlashError):
        mpy_abi.decode_mpy_header(b"\x00\x06\x00\x1f")


@pytest.mark.host  # the rest of the module is board (tests/support/tiers.py)
def test_loadable_follows_the_mpy_loader_rules():
    bytecode_v6 = (6, 0, 0)
    for board in (RP2_MPY, ESP32_MPY, WASM_MPY):
        assert mpy_abi.loadable(mpy_abi.decode_sys_mpy(board), bytecode_v6) is None
    assert "mpy v5" in mpy_abi.loadable(mpy_abi.decode_sys_mpy(RP2_MPY),
                                        (5, 0, 0)).replace(".0", "")
    native_armv6m = (6, 3, 4)
    assert mpy_abi.loadable(mpy_abi.decode_sys_mpy(RP2_MPY), native_armv6m) is None
    assert "xtensawin" in mpy_abi.loadable(mpy_abi.decode_sys_mpy(ESP32_MPY), native_armv6m)
    assert "bytecode-only" in mpy_abi.loadable(mpy_abi.decode_sys_mpy(WASM_MPY), native_armv6m)
    # an old native ABI
    assert mpy_abi.loadable(mpy_abi.decode_sys_mpy(RP2_MPY), (6, 2, 4)) is not None


@pytest.mark.static  # the rest of the module is board (tests/support/tiers.py)
def test_build_layout_is_reproducible(tmp_path):
    a = mpy_build.build("pico", build_root=tmp_path / "a")
    b = mpy_build.build("pico", build_root=tmp_path / "b")
    assert [(f.dest, f.sha256) for f in a] == [(f.dest, f.sha256) for f in b]
    dests = [f.dest for f in a]
    assert "/board.mpy" in dests and "/pitboss/store/integrity.mpy" in dests
    assert all(d.endswith(".mpy") or d.lstrip("/") in mpy_build.SOURCE_ONLY for d in dests), dests
    assert all(f.local.read_bytes()[:2] == b"M\x06" for f in a if f.dest.endswith(".mpy"))
    # the board module is the chosen board's definition
    src = mpy_build.build("esp32_devkitc", source=True, build_root=tmp_path / "s")
    board_py = [f for f in src if f.dest == "/board.py"][0]
    assert "NAME = \"esp32_devkitc\"" in board_py.local.read_text()
    assert mpy_build.dest_for("/main.py", source=False) == "/main.py"   # only main.py is run
    assert mpy_build.dest_for("/boot.py", source=False) == "/boot.py"
    assert mpy_build.counterpart("/pitboss/x.mpy") == "/pitboss/x.py"


def _files(**hashes):
    return [mpy_build.BuiltFile(d, None, h) for d, h in sorted(hashes.items())]


@pytest.mark.host  # the rest of the module is board (tests/support/tiers.py)
def test_plan_copies_changed_and_removes_stale():
    files = [mpy_build.BuiltFile("/board.mpy", None, "a" * 64),
             mpy_build.BuiltFile("/pitboss/rules/cards.mpy", None, "b" * 64),
             mpy_build.BuiltFile("/pitboss/new.mpy", None, "c" * 64)]
    old = integrity.format_manifest([("a" * 64, "/board.mpy"), ("0" * 64, "/pitboss/gone.mpy")],
                                    "pico", "mpy", "complete")
    board = {"/board.mpy": "a" * 64, "/pitboss/rules/cards.mpy": "f" * 64,
             "/pitboss/new.mpy": None,
             "/pitboss/rules/cards.py": "e" * 64,     # left by an earlier --source flash: shadows
             "/pitboss/new.py": None}
    p = flash_plan.plan(files, board, old, "pico", "mpy")
    assert [f.dest for f in p.copy] == ["/pitboss/new.mpy", "/pitboss/rules/cards.mpy"]
    assert p.remove == ["/pitboss/gone.mpy", "/pitboss/rules/cards.py"]  # sorted
    assert not p.up_to_date
    # everything in place and the manifest complete: nothing to do at all
    board2 = {f.dest: f.sha256 for f in files}
    p2 = flash_plan.plan(files, board2, p.final_manifest, "pico", "mpy")
    assert p2.up_to_date and not p2.copy and not p2.remove
    # files fine but the manifest still pending (an interrupted flash): not up to date
    pending = flash_plan.manifest_text(files, "pico", "mpy", integrity.PENDING)
    p3 = flash_plan.plan(files, board2, pending, "pico", "mpy")
    assert not p3.up_to_date and not p3.copy


@pytest.mark.host  # the rest of the module is board (tests/support/tiers.py)
def test_manifest_roundtrip_and_board_side_check(tmp_path):
    a, b = tmp_path / "a.mpy", tmp_path / "b.mpy"
    a.write_bytes(b"x" * 1500)          # more than one 512-byte chunk, and a short tail
    b.write_bytes(b"")
    entries = [(mpy_build.sha256_file(a), str(a)), (mpy_build.sha256_file(b), str(b))]
    assert integrity.file_sha256(str(a)) == entries[0][0]
    assert integrity.file_sha256(str(tmp_path / "nope")) is None
    man = tmp_path / "manifest.sha256"
    text = integrity.format_manifest(entries, "pico", "mpy", integrity.COMPLETE)
    assert integrity.parse_manifest(text) == (
        {"board": "pico", "mode": "mpy", "state": "complete"}, entries)
    integrity.write_manifest(text, str(man))
    assert integrity.check(str(man)) == []
    a.write_bytes(b"y" * 1500)
    b.unlink()
    assert integrity.check(str(man)) == [(str(a), "mismatch"), (str(b), "missing")]
    integrity.write_manifest(text.replace("complete", "pending") + "garbage\n", str(man))
    assert integrity.check(str(man))[0] == (str(man), "pending")
    assert (("garbage", "malformed")) in integrity.check(str(man))
    assert integrity.check(str(tmp_path / "none")) == [(str(tmp_path / "none"), "no manifest")]


# ---------------------------------------------------------------------------------------
# The virtual board
# ---------------------------------------------------------------------------------------
def mpremote(port, *args, timeout=60):
    p = subprocess.run([sys.executable, "-m", "mpremote", "connect", port, *args],
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"mpremote {args} failed:\n{p.stdout}\n{p.stderr}"
    return p.stdout


@pytest.fixture
def tree(tmp_path):
    """A snapshot of firmware/ and boards/ to flash from, so the test sees one fixed
    firmware (and can change a module on purpose)."""
    root = tmp_path / "tree"
    for d in ("firmware", "boards"):
        shutil.copytree(mpy_build.REPO / d, root / d, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture
def small_tree(tmp_path):
    """A few real modules plus a main.py: enough for the flash mechanics, and quick to
    copy (the virtual board takes ~25 KB/s)."""
    root = tmp_path / "small"
    shutil.copytree(mpy_build.REPO / "boards", root / "boards",
                    ignore=shutil.ignore_patterns("__pycache__"))
    fw = root / "firmware"
    for name in ("__init__.py", "compat.py", "errors.py", "rules/__init__.py", "rules/cards.py",
                 "store/__init__.py", "store/integrity.py"):
        (fw / "pitboss" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(mpy_build.REPO / "firmware" / "pitboss" / name, fw / "pitboss" / name)
    (fw / "main.py").write_text("import board\nprint('main on', board.NAME)\n")
    (fw / "manifest.py").write_text('module("main.py")\npackage("pitboss")\n')
    return root


@pytest.fixture
def board(tmp_path):
    """A virtual board with its flash in tmp_path/flash; restart() = power cycle."""
    state, flash_dir = tmp_path / "state", tmp_path / "flash"

    class B:
        def start(self):
            self.st = vboard.start(flash_dir, state_dir=state)
            self.port = self.st["port"]
            return self

        def power_cut(self):
            os.killpg(self.st["pid"], signal.SIGKILL)
            deadline = time.monotonic() + 10
            while vboard_state.status(state)["running"] and time.monotonic() < deadline:
                time.sleep(0.05)

    b = B().start()
    b.flash_dir = flash_dir
    yield b
    st = vboard_state.read_state(state)
    vboard_state.stop(state)
    if st:
        vboard_state.kill_group(st["pid"], signal.SIGKILL)


def test_flash_twice_corrupt_verify_reflash(board, tree):
    log = []
    t0 = time.monotonic()
    r1 = fl.flash(board.port, progress=log.append, root=tree)
    first = time.monotonic() - t0
    assert r1.board == "virtual" and r1.mode == "mpy"
    built = mpy_build.build("virtual", build_root=tree / "b2", root=tree)
    assert sorted(r1.copied) == sorted(f.dest for f in built)
    assert r1.copied[0] == "/pitboss/store/integrity.mpy"       # the checker lands first
    assert any("[1/" in line for line in log), log       # per-file progress was shown

    # The flashed firmware runs: the board module is /board.mpy, the package is compiled.
    out = mpremote(board.port, "exec",
                   "import board, pitboss.store.integrity as i, pitboss.rules.cards as c\n"
                   "print(board.NAME, c.__file__, i.check())")
    name, file, problems = out.split()
    assert (name, file.lstrip("/"), problems) == ("virtual", "pitboss/rules/cards.mpy", "[]")

    t0 = time.monotonic()
    r2 = fl.flash(board.port, progress=log.append, root=tree)
    second = time.monotonic() - t0
    assert r2.copied == [] and r2.removed == []
    assert verify.verify(board.port, progress=log.append, root=tree).ok

    # Corrupt one file on the board: verify fails, and the board itself says so too.
    mpremote(board.port, "exec",
             "f = open('/pitboss/rules/cards.mpy', 'r+b'); f.seek(40); f.write(b'\\xff\\xfe'); f.close()")
    v = verify.verify(board.port, progress=log.append, root=tree)
    assert not v.ok and v.problems == [("/pitboss/rules/cards.mpy", "mismatch")]
    out = mpremote(board.port, "exec", "import pitboss.store.integrity as i; print(i.check())")
    assert out.strip() == "[('/pitboss/rules/cards.mpy', 'mismatch')]"

    # Re-flash copies exactly the damaged file, and all is well again.
    r3 = fl.flash(board.port, progress=log.append, root=tree)
    assert r3.copied == ["/pitboss/rules/cards.mpy"]
    assert verify.verify(board.port, progress=log.append, root=tree).ok

    # A changed module on the host: only it is copied.
    with open(tree / "firmware" / "pitboss" / "compat.py", "a") as f:
        f.write("\nCHANGED = 1\n")
    r4 = fl.flash(board.port, progress=log.append, root=tree)
    assert r4.copied == ["/pitboss/compat.mpy"]
    size = sum(f.local.stat().st_size for f in built) / 1024
    print(f"\nvirtual board: first flash {first:.1f}s ({len(r1.copied)} files, {size:.0f} KB), "
          f"no-op flash {second:.1f}s, repair flash {r3.seconds:.1f}s, "
          f"one-module flash {r4.seconds:.1f}s")


def test_source_mode_then_back_to_mpy(board, small_tree):
    tree = small_tree
    r = fl.flash(board.port, source=True, progress=None, root=tree)
    assert "/pitboss/rules/cards.py" in r.copied and "/board.py" in r.copied
    # the checker first, so an interrupted flash can still be diagnosed; the entry point
    # last, so it never starts against modules of the old firmware
    assert r.copied[0] == "/pitboss/store/integrity.py" and r.copied[-1] == "/main.py"
    assert verify.verify(board.port, progress=None, root=tree).ok  # mode read from the manifest
    out = mpremote(board.port, "exec", "import pitboss.rules.cards as c; print(c.__file__)")
    assert out.strip().lstrip("/") == "pitboss/rules/cards.py"
    # Back to .mpy: the .py files would shadow the .mpy ones, so they must go.
    r = fl.flash(board.port, progress=None, root=tree)
    assert "/pitboss/rules/cards.py" in r.removed and "/board.py" in r.removed
    assert "/main.py" not in r.copied          # main.py stays source, and is unchanged
    out = mpremote(board.port, "exec", "exec(open('/main.py').read())")
    assert out.strip() == "main on virtual"
    out = mpremote(board.port, "exec", "import os, pitboss.rules.cards as c\n"
                   "print(c.__file__, 'cards.py' in os.listdir('/pitboss/rules'))")
    file, has_py = out.split()
    assert (file.lstrip("/"), has_py) == ("pitboss/rules/cards.mpy", "False")
    assert verify.verify(board.port, progress=None, root=tree).ok


def test_power_cut_mid_flash_leaves_a_board_that_reports_it(board, small_tree):
    tree = small_tree
    # Kill the whole board (VM and pty daemon) as the second file is being copied.
    def progress(msg):
        if msg.startswith("  [2/"):
            board.power_cut()

    with pytest.raises(errors.FlashError):
        fl.flash(board.port, progress=progress, root=tree)
    board.start()   # power back on, same flash
    v = verify.verify(board.port, progress=None, root=tree)
    assert not v.ok
    assert ("/manifest.sha256", "pending (a flash did not finish)") in v.problems
    out = mpremote(board.port, "exec", "import pitboss.store.integrity as i; print(i.check()[0])")
    assert out.strip() == "('/manifest.sha256', 'pending')"
    fl.flash(board.port, progress=None, root=tree)
    assert verify.verify(board.port, progress=None, root=tree).ok


def test_refuses_wrong_board_and_unloadable_build(board, monkeypatch):
    with pytest.raises(errors.FlashError, match="rp2 board"):
        fl.flash(board.port, board="pico", progress=None)
    # A board whose MicroPython wants another .mpy version: nothing is copied.
    real = mpremote_steps.describe

    def describe(port, paths, timeout=mpremote_steps.TIMEOUT_QUERY):
        info = real(port, paths, timeout)
        info["mpy"] = 5 | (0 << 8)
        return info

    monkeypatch.setattr(mpremote_steps, "describe", describe)
    with pytest.raises(errors.FlashError, match="refusing to flash.*mpy v5"):
        fl.flash(board.port, progress=None)
    monkeypatch.undo()
    assert not os.path.exists(board.flash_dir / "manifest.sha256")


def test_cli_commands_on_a_throwaway_board(capsys):
    from host_tools.cli import main as cli_main

    # --port virtual: a fresh board for the one command, so nothing is flashed on it.
    assert cli_main(["verify", "--port", "virtual"]) == 1
    assert "no manifest" in capsys.readouterr().out
    assert cli_main(["flash", "--port", "virtual", "--board", "pico"]) == 2
    err = capsys.readouterr().err
    assert "rp2 board" in err and len(err.strip().splitlines()) == 1


def test_boot_check_enumerates_every_file_and_the_seal(tmp_path):
    """pitboss.store.integrity on CPython over a folder standing for the board's root: unlisted
    code anywhere is reported, data is not; the seal binds the manifest to the key."""
    root = tmp_path / "root"
    (root / "pitboss").mkdir(parents=True)
    (root / "pitboss" / "a.mpy").write_bytes(b"M\x06code")
    (root / "journal").mkdir()
    (root / "journal" / "0001.jnl").write_bytes(b"data")
    (root / "vectors").mkdir()
    (root / "vectors" / "x.vec").write_text("data")
    man = str(root / "manifest.sha256")
    text = integrity.format_manifest([(integrity.file_sha256(str(root / "pitboss" / "a.mpy")),
                                       str(root / "pitboss" / "a.mpy"))], "pico", "mpy",
                                     integrity.COMPLETE)
    integrity.write_manifest(text, man)
    mac = integrity.Mac(b"k" * 32)
    assert integrity.check(man, root=str(root)) == []
    assert integrity.check(man, root=str(root), mac=mac) == [(str(root / "manifest.mac"),
                                                              "unsealed")]
    integrity.write_manifest(integrity.seal_of(mac, text) + "\n", str(root / "manifest.mac"))
    assert integrity.check(man, root=str(root), mac=mac) == []
    assert integrity.check(man, root=str(root), mac=integrity.Mac(b"j" * 32)) == [
        (str(root / "manifest.mac"), "seal mismatch")]
    for extra in ("pitboss/a.py", "boot.py", "lib/evil.mpy", "journal/x.py"):
        (root / extra).parent.mkdir(exist_ok=True)
        (root / extra).write_text("x = 1\n")
        assert integrity.check(man, root=str(root), mac=mac) == [(str(root / extra),
                                                                  "unlisted")]
        (root / extra).unlink()


def test_seeded_answer_matches_the_hosts_and_depends_on_the_seed(tmp_path):
    """The firmware's seeded answer (its own HMAC) equals the host's (CPython's hmac)
    for the same files; another seed gives another answer; data is not covered."""
    files = mpy_build.build("virtual", build_root=tmp_path / "build")
    root = tmp_path / "root"
    for f in files:
        (root / f.dest.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f.local, root / f.dest.lstrip("/"))
    man = flash_plan.manifest_text(files, "virtual", "mpy", integrity.COMPLETE)
    (root / "manifest.sha256").write_text(man)
    (root / "journal").mkdir()
    (root / "journal" / "0001.jnl").write_bytes(b"changes all the time")
    seed = bytes(range(32))
    got = integrity.seeded_answer(seed, str(root))
    assert verify.compare_answer(verify.expected_answer(files, man, seed), got) == []
    other = integrity.seeded_answer(bytes(32), str(root))
    assert other["digest"] != got["digest"]
    assert verify.compare_answer(verify.expected_answer(files, man, seed), other)
    with pytest.raises(ValueError):
        integrity.seeded_answer(b"short", str(root))


def _flash_cli(port):
    """`pitboss flash` as a terminal runs it: a process group of its own, so a Ctrl-C
    (SIGINT to the group) reaches it and every child it started in that group."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "host_tools", "flash", "--port", port],
                            cwd=mpy_build.REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, process_group=0)


def test_ctrl_c_during_flash_finishes_it_rather_than_leave_it_pending(board):
    # Issue 29 item 6: Ctrl-C while files were copied left a pending manifest, and the
    # next boot tilted firmware_mismatch. The first Ctrl-C now lets the flash finish
    # (saying so), then exits 130; the board's manifest is complete.
    p = _flash_cli(board.port)
    for line in p.stdout:
        if line.startswith("  [1/"):
            os.killpg(p.pid, signal.SIGINT)
            break
    out, err = p.communicate(timeout=600)
    assert p.returncode == 130, (out, err)
    assert "finishing the flash" in err and "verified" in out, (out, err)
    assert verify.verify(board.port, progress=None).ok


def test_a_flash_over_a_firmware_mismatch_tilt_says_how_to_clear_it(tmp_path, vb_flash):
    # Issue 29 item 6: a later good flash printed "verified" while the tilt stayed,
    # with no word of it. It now says the tilt stays and which command clears it.
    flash = tmp_path / "flash"
    shutil.copytree(vb_flash, flash)
    with open(flash / "pitboss" / "rules" / "cards.mpy", "ab") as f:
        f.write(b"\0")  # a file unlike the manifest: the boot check tilts
    with vboard.virtual_board(flash, service=True) as st:
        lines = []
        fl.flash(st["port"], progress=lines.append)
    text = "\n".join(lines)
    assert "firmware_mismatch" in text and "pitboss tilt-clear" in text, text
