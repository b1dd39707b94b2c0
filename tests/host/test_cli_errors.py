"""Every `pitboss` error is one line on stderr and exit 2, never a traceback (issue 12,
host findings). Each case is checked before any board is reached, so none needs one;
`provision --force` on a throw-away virtual board is in test_security_board.py."""
import os
import subprocess
import sys

import pytest

from host_tools.table.auth import KeyStore

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NO_BOARD = "/dev/pitboss-no-such-port"


def run(*args, keys):
    env = dict(os.environ, PITBOSS_KEYS=str(keys), PITBOSS_STATE=str(keys) + "-state")
    env.pop("PITBOSS_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "host_tools", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def one_line_exit_2(r, needle):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert needle in r.stderr, r.stderr


@pytest.mark.parametrize("value,needle", [
    ("{bad", "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    ("42", "must be a JSON object"),
    ('"house"', "must be a JSON object"),
])
def test_config_json_that_is_not_an_object(tmp_path, value, needle):
    r = run("config", "--port", NO_BOARD, "--game", "nj-5card", "--seats", "2",
            "--settings", value, keys=tmp_path / "keys")
    one_line_exit_2(r, needle)


@pytest.mark.parametrize("cmd", [
    ["config", "--game", "nj-5card", "--seats", "2"],
    ["shoe", "--game", "nj-5card", "--seats", "2"],
    ["tilt-clear", "--operator", "alice"],
])
def test_authenticated_commands_before_any_key(tmp_path, cmd):
    r = run(*cmd, "--port", NO_BOARD, keys=tmp_path / "keys")
    one_line_exit_2(r, "provision it first")


@pytest.mark.parametrize("cmd", [
    ["config", "--game", "nj-5card", "--seats", "2"],
    ["tilt-clear", "--operator", "alice"],
    ["provision"],
    ["shoe", "--game", "nj-5card"],
])
@pytest.mark.parametrize("bad_id", ["../etc/passwd", "a/b", "", "x" * 65, "tab\tle"])
def test_bad_board_id(tmp_path, cmd, bad_id):
    r = run(*cmd, "--port", NO_BOARD, "--board-id", bad_id, keys=tmp_path / "keys")
    one_line_exit_2(r, "board")


def test_provision_refuses_to_replace_a_key_without_force(tmp_path):
    ks = KeyStore(tmp_path / "keys")
    key = ks.provision("t1")
    r = run("provision", "--port", NO_BOARD, "--board-id", "t1", keys=tmp_path / "keys")
    one_line_exit_2(r, "--force")
    assert ks.load_key("t1") == key and ks.retired("t1") == []


def test_keystore_force_keeps_the_old_key(tmp_path):
    ks = KeyStore(tmp_path / "keys")
    k1 = ks.provision("t1")
    k2 = ks.provision("t1", force=True)
    k3 = ks.provision("t1", force=True)  # same second: a second retired name
    assert ks.load_key("t1") == k3 and len({k1, k2, k3}) == 3
    old = ks.retired("t1")
    assert len(old) == 2 and {bytes.fromhex(p.read_text()) for p in old} == {k1, k2}
    assert all(oct(p.stat().st_mode)[-3:] == "600" for p in old)


def test_board_start_on_an_unusable_flash_dir(tmp_path):
    f = tmp_path / "a-file"
    f.write_text("not a folder")
    for bad in (f, f / "under-a-file"):
        r = run("board", "start", "--state-dir", str(tmp_path / "st"), "--flash-dir",
                str(bad), keys=tmp_path / "keys")
        one_line_exit_2(r, "not a usable folder")
    r = run("board", "start", "--state-dir", str(f), keys=tmp_path / "keys")
    one_line_exit_2(r, "not a usable folder")


def test_unreachable_port_is_one_line(tmp_path):
    ks = KeyStore(tmp_path / "keys")
    ks.provision("table1")
    for cmd in (["table", "status"], ["recall"], ["config", "--game", "nj-5card",
                                                  "--seats", "2"]):
        r = run(*cmd, "--port", NO_BOARD, keys=tmp_path / "keys")
        one_line_exit_2(r, NO_BOARD)
    r = run("flash", "--port", NO_BOARD, keys=tmp_path / "keys")
    assert r.returncode in (1, 2) and "Traceback" not in r.stderr


def test_flash_to_a_missing_port_fails_while_another_flash_holds_the_build(tmp_path):
    """The port is tried before the build's lock is taken: with the lock held (as CI's
    Pico tier holds it through a ~30 s build and copy) the refusal still comes at once.
    It used to wait for the lock (30 s of the test above in CI's runs); here it would
    wait until run()'s timeout."""
    import fcntl

    from host_tools.deploy.mpy_build import BUILD

    BUILD.mkdir(parents=True, exist_ok=True)
    with open(BUILD / ".flash.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            r = run("flash", "--port", NO_BOARD, keys=tmp_path / "keys")
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert NO_BOARD in r.stderr, r.stderr


@pytest.mark.parametrize("args,needle", [
    (["rank", "--port", NO_BOARD, "--game", "nj-5card", "As", "Ks", "Qs", "Js", "Ts"], NO_BOARD),
    (["vectors", "--port", NO_BOARD], NO_BOARD),
    (["screenshot", "--port", NO_BOARD, "out.png"], NO_BOARD),
    (["config", "--port", NO_BOARD, "--game", "nj-5card", "--seats", "abc"], "invalid int"),
    (["board", "start", "--bogus"], "unrecognized arguments"),
    (["no-such-command"], "invalid choice"),
    (["rank"], "required"),
])
def test_other_errors_found_are_one_line_exit_2(tmp_path, args, needle):
    one_line_exit_2(run(*args, keys=tmp_path / "keys"), needle)


@pytest.mark.parametrize("op", ["tech 1", "", "x" * 33, "a;b", "tab\tle", "nl\nx",
                                "tech 1 journal_full"])
def test_an_operator_id_is_checked_before_any_line_is_sent(tmp_path, op):
    # Issue 29 item 7: "tech 1" once reached the board as `tilt-clear tech 1`, answered
    # "unknown tilt code '1'". The id is checked on the host, before the key store or
    # the port, and the refusal names the form an id takes.
    r = run("tilt-clear", "--port", NO_BOARD, "--operator", op, keys=tmp_path / "keys")
    one_line_exit_2(r, "letters, digits and _.-@")
    assert NO_BOARD not in r.stderr and "provision" not in r.stderr


def test_a_tilt_code_is_checked_before_any_line_is_sent(tmp_path):
    r = run("tilt-clear", "--port", NO_BOARD, "--operator", "tech1", "--code",
            "no_such", keys=tmp_path / "keys")
    one_line_exit_2(r, "unknown tilt code 'no_such'")


@pytest.mark.parametrize("line", ["", "   ", "status\nrecall 3"])
def test_an_empty_or_multi_line_table_argument_is_refused_before_the_port(tmp_path, line):
    # Issue 29 item 5: `table --port P ""` sent an empty line, which the loop answers
    # with nothing, and waited 121 s for "no reply". Refused at once, port untouched.
    r = run("table", "--port", NO_BOARD, "status", line, keys=tmp_path / "keys")
    one_line_exit_2(r, "one protocol line per argument")
    assert NO_BOARD not in r.stderr


def test_a_missing_pico_image_is_one_line_naming_the_command_and_the_fix(tmp_path):
    # The image or bootrom is found before the board starts (FirmwareError, a BoardError):
    # `pitboss COMMAND: ...` as every other board that cannot start, not a class name.
    env = dict(PITBOSS_PICO_UF2=str(tmp_path / "none.uf2"))
    r = subprocess.run([sys.executable, "-m", "host_tools", "demo"], cwd=REPO,
                       env=dict(os.environ, **env), capture_output=True, text=True,
                       timeout=120)
    one_line_exit_2(r, "pitboss demo: no Pico firmware at %s" % (tmp_path / "none.uf2"))
    assert "PITBOSS_PICO_UF2" in r.stderr and "Error" not in r.stderr
