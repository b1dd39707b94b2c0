"""Issue 12 (control and integrity) on the virtual board: the MicroPython 1.27 VM behind a
pty, flashed with the real mpremote, started with the logic-door service switch held
(service) or released (production, as under a table).

Attacks, each reproduced on main before this change (issue 12):
  control    Ctrl-C / raw REPL / soft reboot / paste on the production port gave the REPL,
             and from it the key; host tools must say "hold the service switch".
  integrity  a .py beside its .mpy, /boot.py, a module in /lib, a changed .mpy with its
             manifest line changed too: each a firmware_mismatch tilt at boot and a
             failed seeded verify; a recorded verify answer is not accepted for a new seed.
  keys       a new key from production only under the current key; `pitboss provision`
             keeps the host's old key.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

from host_tools.deploy import flash as fl
from host_tools.deploy import flash_plan
from host_tools.deploy import mpy_abi
from host_tools.deploy import mpy_build
from host_tools.deploy import verify
from host_tools.table.auth import KeyStore, auth_line
from host_tools.deploy.ready import open_board
from host_tools.link.protolink import PRODUCTION, SERVICE, ProtocolLink, probe
from host_tools.table.configurator import Configurator
from host_tools.table.targets import BoardTarget
from host_tools.emu.vboard import virtual_board
from pitboss.store import integrity

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = 'config {"game":"nj-5card","seats":2}'


@pytest.fixture(scope="module")
def flashed(tmp_path_factory, vb_flash):
    """A flash folder holding the firmware, flashed (conftest.py's vb_flash) and
    provisioned (key 't1') on a board in service mode: every test starts a board of its
    own from a copy of it."""
    base = tmp_path_factory.mktemp("secure")
    keys = KeyStore(base / "keys")
    shutil.copytree(vb_flash, base / "flash")
    with virtual_board(base / "flash", service=True) as st:
        with open_board(st["port"]) as b:
            Configurator(BoardTarget(b), "t1", keys).provision()
    assert (base / "flash" / "manifest.mac").exists()
    return base


def clone(flashed, tmp_path):
    shutil.copytree(flashed / "flash", tmp_path / "flash")
    shutil.copytree(flashed / "keys", tmp_path / "keys")
    os.chmod(tmp_path / "keys", 0o700)
    return tmp_path / "flash", KeyStore(tmp_path / "keys")


def cli(*args, keys=None):
    env = dict(os.environ)
    if keys is not None:
        env["PITBOSS_KEYS"] = str(keys.folder)
    return subprocess.run([sys.executable, "-m", "host_tools", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=180)


def status(link):
    r = link.request("status")
    assert r["ok"], r
    return r


# ---- control -----------------------------------------------------------------------------
ESCAPES = [b"\x03", b"\x03\x03", b"\x01", b"\x03\x01", b"\x04", b"\x05", b"\x05A\x01",
           b"\x02", b"\x03\x02", b"\xff", b"\xff\xfe\x00", b"\x00", b"\x1b[A",
           b"\xc3\xa9", b"\x03import os", b"x" * 600]


def test_production_port_has_no_repl_and_never_reveals_the_key(flashed, tmp_path):
    flash, keys = clone(flashed, tmp_path)
    key_hex = keys.load_key("t1").hex()
    seen = b""
    with virtual_board(flash, service=False) as st:
        assert probe(st["port"]) == PRODUCTION
        with ProtocolLink(st["port"]) as link:
            assert status(link)["tilts"] == []
            for esc in ESCAPES:
                link.write(esc + b"\r\n")
                r = link.reply()
                assert r["ok"] is False and r["error"]["code"] == "bad_format", (esc, r)
            # Python is not a protocol line; the key file is not a command's argument.
            for line in ("import os", "print(open('/auth/key.a').read())",
                         "exec(open('/auth/key.a').read())", "help()", "recall /auth/key.a",
                         "verify 00"):
                r = link.request(line)
                assert r["ok"] is False, (line, r)
            link.write(b"\x03\x03\x01")      # Ctrl-C Ctrl-C Ctrl-A, no newline: nothing
            seen += link.read_for(1.0)
            assert seen == b"", seen
            link.write(b"\r\n")
            assert link.reply()["error"]["code"] == "bad_format"
            assert status(link)["phase"] == "unconfigured"  # the loop is still serving
        # mpremote cannot get a REPL (Ctrl-C, Ctrl-A are bytes of a line to the loop).
        p = subprocess.run([sys.executable, "-m", "mpremote", "connect", st["port"], "exec",
                            "print(open('/auth/key.a','rb').read())"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode != 0 and "could not enter raw repl" in p.stderr
        seen += (p.stdout + p.stderr).encode()
        # Host tools that need the raw REPL say what to do, in one line, exit 2.
        for args in (["flash", "--port", st["port"]],):
            r = cli(*args)
            assert r.returncode == 2, (args, r.stderr)
            assert len(r.stderr.strip().splitlines()) == 1 and "hold the service switch" \
                in r.stderr and "Traceback" not in r.stderr, r.stderr
            seen += (r.stdout + r.stderr).encode()
        # The table commands are protocol lines: they work in production (issue 11).
        r = cli("table", "--port", st["port"], "status")
        assert r.returncode == 0 and json.loads(r.stdout)["phase"] == "unconfigured", r.stderr
        seen += (r.stdout + r.stderr).encode()
        with ProtocolLink(st["port"]) as link:
            link.write(b"\r\n")
            link.read_for(0.3)
            assert status(link)["tilts"] == []
    assert key_hex.encode() not in seen.lower()


def test_service_switch_gives_the_repl(flashed, tmp_path):
    flash, _ = clone(flashed, tmp_path)
    with virtual_board(flash, service=True) as st:
        assert probe(st["port"]) == SERVICE
        with open_board(st["port"]) as b:
            assert b.exec("import board\nprint(board.service_switch())").strip() == "True"


# ---- keys ----------------------------------------------------------------------------------
def test_reprovision_from_production_needs_the_current_key(flashed, tmp_path):
    flash, keys = clone(flashed, tmp_path)
    old = keys.load_key("t1")
    with virtual_board(flash, service=False) as st:
        with ProtocolLink(st["port"]) as link:
            # sent bare, an authenticated verb is refused as one (issue 28's verb table)
            assert link.request("provision " + "00" * 32 + " 00000000")["error"]["code"] \
                == "auth_required"
            stranger = KeyStore(tmp_path / "stranger")
            stranger.provision("t1")
            r = link.request(stranger.rekey_line("t1", os.urandom(32), board_last=1000))
            assert r["error"]["code"] == "bad_mac"
        # Without --force the host refuses; with it, re-keyed under the current key.
        r = cli("provision", "--port", st["port"], "--board-id", "t1", keys=keys)
        assert r.returncode == 2 and "--force" in r.stderr
        r = cli("provision", "--port", st["port"], "--board-id", "t1", "--force", keys=keys)
        assert r.returncode == 0, r.stderr
        new = keys.load_key("t1")
        assert new != old and [bytes.fromhex(p.read_text()) for p in keys.retired("t1")] \
            == [old]
        with ProtocolLink(st["port"]) as link:
            n = keys.last_counter("t1")
            assert link.request(auth_line(old, n + 1, CONFIG))["error"]["code"] == "bad_mac"
            assert link.request(auth_line(new, n + 2, CONFIG))["ok"]
            v = link.request("verify " + "ab" * 32)
            assert v["sealed"] is True  # the manifest was resealed under the new key
    with virtual_board(flash, service=False) as st, ProtocolLink(st["port"]) as link:
        assert status(link)["tilts"] == []  # the boot check accepts the new seal


def test_provision_force_on_a_service_board_keeps_the_old_key(flashed, tmp_path):
    flash, keys = clone(flashed, tmp_path)
    old = keys.load_key("t1")
    with virtual_board(flash, service=True) as st:
        r = cli("provision", "--port", st["port"], "--board-id", "t1", keys=keys)
        assert r.returncode == 2 and "--force" in r.stderr and keys.load_key("t1") == old
        r = cli("provision", "--port", st["port"], "--board-id", "t1", "--force", keys=keys)
        assert r.returncode == 0, r.stderr
    assert keys.load_key("t1") != old
    assert [bytes.fromhex(p.read_text()) for p in keys.retired("t1")] == [old]


# ---- integrity ---------------------------------------------------------------------------
def _shadow(flash, tmp_path):
    src = open(os.path.join(REPO, "firmware", "pitboss", "protocol.py")).read()
    (flash / "pitboss" / "protocol.py").write_text(src.replace('VERSION = "0.1.0"',
                                                               'VERSION = "evil"'))


def _boot_py(flash, tmp_path):
    (flash / "boot.py").write_text("import builtins\nbuiltins.EVIL = 1\n")


def _lib_module(flash, tmp_path):
    (flash / "lib").mkdir()
    (flash / "lib" / "pitboss_helper.py").write_text("X = 1\n")


def _data_dir_module(flash, tmp_path):
    (flash / "state").mkdir(exist_ok=True)
    (flash / "state" / "evil.py").write_text("X = 1\n")


def _mpy_and_manifest(flash, tmp_path):
    # A changed module compiled the way the flasher compiles it, and its manifest line
    # changed to match: only the seal (under a key the attacker lacks) can tell.
    src = open(os.path.join(REPO, "firmware", "pitboss", "protocol.py")).read()
    p = tmp_path / "protocol.py"
    p.write_text(src.replace('VERSION = "0.1.0"', 'VERSION = "evil"'))
    out = flash / "pitboss" / "protocol.mpy"
    old = integrity.file_sha256(str(out))
    mpy_build._mpy_cross(p, out, "pitboss/protocol.py", None)
    m = flash / "manifest.sha256"
    m.write_text(m.read_text().replace(old, integrity.file_sha256(str(out))))


ATTACKS = {"py_shadows_mpy": _shadow, "boot_py": _boot_py, "lib_module": _lib_module,
           "module_in_data_dir": _data_dir_module, "mpy_with_manifest": _mpy_and_manifest}


def test_untouched_board_boots_clean_and_verifies(flashed, tmp_path):
    flash, _ = clone(flashed, tmp_path)
    with virtual_board(flash, service=False) as st:
        with ProtocolLink(st["port"]) as link:
            s = status(link)
            assert s["tilts"] == [], s
            assert link.request("version")["version"] == "0.1.0"
        r = verify.verify(st["port"], progress=None)
        assert r.ok and r.seeded, r.problems


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_tampered_file_is_a_tilt_and_fails_seeded_verify(flashed, tmp_path, attack):
    flash, _ = clone(flashed, tmp_path)
    ATTACKS[attack](flash, tmp_path)
    with virtual_board(flash, service=False) as st:
        with ProtocolLink(st["port"]) as link:
            codes = [t["code"] for t in status(link)["tilts"]]
            assert codes == ["firmware_mismatch"], (attack, codes)
            # The table halts: no configuration while the firmware is not approved.
            keys = KeyStore(tmp_path / "keys")
            r = link.request(keys.sign("t1", CONFIG, 1000))
            assert r["ok"] is False, r
        r = verify.verify(st["port"], progress=None)  # production: seeded, over the protocol
        assert not r.ok and r.seeded, attack
    # And in service mode (raw REPL, the checker's source sent by the host).
    with virtual_board(flash, service=True) as st:
        r = verify.verify(st["port"], progress=None)
        assert not r.ok and r.seeded, attack
        paths = {p for p, _ in r.problems}
        if attack == "mpy_with_manifest":
            assert "/pitboss/protocol.mpy" in paths
        else:
            assert paths & {"/pitboss/protocol.py", "/boot.py", "/lib/pitboss_helper.py",
                            "/state/evil.py"}, r.problems
        # A flash puts the board back to exactly the build (unlisted code removed).
        fl.flash(st["port"], progress=None)
        assert verify.verify(st["port"], progress=None).ok


def test_a_recorded_answer_does_not_fit_a_new_seed(flashed, tmp_path):
    flash, _ = clone(flashed, tmp_path)
    s1, s2 = os.urandom(32), os.urandom(32)
    with virtual_board(flash, service=False) as st, ProtocolLink(st["port"]) as link:
        a1 = link.request("verify " + s1.hex())
        a1b = link.request("verify " + s1.hex())
        a2 = link.request("verify " + s2.hex())
        for bad in ("verify", "verify zz", "verify " + "00" * 8, "verify " + "00" * 65):
            assert link.request(bad)["error"]["code"] == "bad_args", bad
    assert a1["digest"] == a1b["digest"] != a2["digest"]
    files = mpy_build.build("virtual", board_abi=mpy_abi.decode_sys_mpy(a1["mpy"]),
                            build_root=tmp_path / "build")
    man = flash_plan.manifest_text(files, "virtual", "mpy", integrity.COMPLETE)
    assert verify.compare_answer(verify.expected_answer(files, man, s1), a1) == []
    assert verify.compare_answer(verify.expected_answer(files, man, s2), a2) == []
    replay = verify.compare_answer(verify.expected_answer(files, man, s2), a1)
    assert replay and all(what == "mismatch" for _, what in replay)


def test_repl_commands_refuse_a_production_board_before_trying_the_repl(
        flashed, tmp_path, monkeypatch, capsys):
    # Issue 29 item 2/5: `vectors` and `rank --port` spent mpremote's whole timeout
    # (10-19 s) breaking into a REPL a production board does not have before saying so.
    # The loop's own answer to `version` says the mode at once: mpremote is never tried.
    from mpremote import transport_serial

    from host_tools.cli import main as cli_main
    tried = []
    monkeypatch.setattr(transport_serial.SerialTransport, "enter_raw_repl",
                        lambda self, *a, **k: tried.append(a) or (_ for _ in ()).throw(
                            transport_serial.TransportError("no raw REPL")))
    flash, keys = clone(flashed, tmp_path)
    with virtual_board(flash, service=False) as st:
        for args in (["vectors", "--port", st["port"]],
                     ["rank", "--port", st["port"], "--game", "nj-5card",
                      "As", "Ks", "Qs", "Js", "Ts"]):
            assert cli_main(args) == 2, args
            err = capsys.readouterr().err
            assert "hold the service switch" in err and len(err.splitlines()) == 1, err
    assert tried == []


def test_a_wrong_key_is_named_before_any_mac_and_never_tilts(flashed, tmp_path):
    # Issue 29 item 8: a wrong --board-id key got bad_mac with no hint, and three tries
    # tilted the table. The board says its key's fingerprint (`version`); the host
    # checks it before sending a MAC, and finds the key by it when no id is given.
    flash, keys = clone(flashed, tmp_path)
    KeyStore(keys.folder).provision("other")  # another board's key in the same store
    with virtual_board(flash, service=False) as st:
        p = st["port"]
        for _ in range(4):
            r = cli("tilt-clear", "--port", p, "--board-id", "other", "--operator",
                    "tech1", keys=keys)
            err = r.stderr.strip()
            assert r.returncode == 2 and len(err.splitlines()) == 1, err
            assert "not this board's" in err and keys.folder.name in str(keys.folder)
        r = cli("table", "--port", p, "status", "version", keys=keys)
        status_, version = [json.loads(x) for x in r.stdout.splitlines()]
        assert status_["tilts"] == [], status_  # no MAC was ever tried
        from host_tools.table.auth import fingerprint
        assert version["key_fingerprint"] == fingerprint(keys.load_key("t1"))
        # No --board-id: the store's key with the board's fingerprint.
        r = cli("config", "--port", p, "--game", "nj-5card", "--seats", "2", "--json",
                keys=keys)
        assert r.returncode == 0 and json.loads(r.stdout)["ok"], r.stderr
