"""Issue 29 items 4 and 10: what a new user meets before any board answers. Each case is
refused or answered by the host alone (no board), in one line, exit 2 for bad input."""
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NO_BOARD = "/dev/pitboss-no-such-port"


def run(*args, tmp_path, **env):
    e = {k: v for k, v in os.environ.items()
         if k not in ("PITBOSS_PORT", "PITBOSS_BOARD", "PITBOSS_DEBUG", "PITBOSS_HOME")}
    e.update(PITBOSS_KEYS=str(tmp_path / "keys"), PITBOSS_CONFIG=str(tmp_path / "none.toml"),
             PITBOSS_LOCKS=str(tmp_path / "locks"))
    e.update(env)
    return subprocess.run([sys.executable, "-m", "host_tools", *args], cwd=tmp_path, env=e,
                          capture_output=True, text=True, timeout=120)


def one_line(r, code, needle):
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and needle in err, err


def test_version(tmp_path):
    r = run("--version", tmp_path=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("pitboss "), r


@pytest.mark.parametrize("how", ["-p", "env", "config"])
def test_the_port_by_short_option_environment_or_config_file(tmp_path, how):
    conf = tmp_path / "pitboss.toml"
    conf.write_text('port = "%s"\n' % NO_BOARD)
    args, env = ["table", "status"], {}
    if how == "-p":
        args = ["table", "-p", NO_BOARD, "status"]
    elif how == "env":
        env = {"PITBOSS_PORT": NO_BOARD}
    else:
        env = {"PITBOSS_CONFIG": str(conf)}
    one_line(run(*args, tmp_path=tmp_path, **env), 2, NO_BOARD)


def test_no_port_anywhere_says_where_one_comes_from(tmp_path):
    one_line(run("table", "status", tmp_path=tmp_path), 2, "PITBOSS_PORT")


def test_a_config_file_with_an_unknown_key_is_one_line(tmp_path):
    conf = tmp_path / "c.toml"
    conf.write_text('prot = "x"\n')
    one_line(run("table", "status", tmp_path=tmp_path, PITBOSS_CONFIG=str(conf)), 2,
             "unknown setting prot")


@pytest.mark.parametrize("args", [["shoe", "-p", NO_BOARD, "--game", "nj-5card",
                                   "--rounds", "0"],
                                  ["shoe", "-p", NO_BOARD, "--game", "nj-5card",
                                   "--seats", "-2"],
                                  ["census", "--game", "nj-3card", "--workers", "-3"],
                                  ["demo", "--rounds", "-1"]])
def test_counts_below_one_are_refused(tmp_path, args):
    one_line(run(*args, tmp_path=tmp_path), 2, "must be at least 1")


def test_a_screenshot_is_a_png_and_its_folder_must_exist(tmp_path):
    one_line(run("screenshot", "-p", NO_BOARD, "x.jpg", tmp_path=tmp_path), 2,
             "cannot write .jpg")
    missing = tmp_path / "nonexistent"
    one_line(run("screenshot", "-p", NO_BOARD, str(missing / "x.png"), tmp_path=tmp_path),
             2, "does not exist")
    one_line(run("demo", "--screenshot", str(missing / "x.png"), tmp_path=tmp_path), 2,
             "does not exist")
    assert not missing.exists()  # nothing created on the way


def test_pitboss_home_moves_the_key_store(tmp_path):
    r = subprocess.run([sys.executable, "-c", "import host_tools.table.auth as a; "
                        "print(a.KeyStore().folder)"], cwd=REPO, capture_output=True,
                       text=True, env={k: v for k, v in dict(
                           os.environ, PITBOSS_HOME=str(tmp_path / "h")).items()
                           if k != "PITBOSS_KEYS"}, timeout=60)
    assert r.stdout.strip() == str(tmp_path / "h" / "keys"), r.stderr


def test_board_log_of_a_board_never_started(tmp_path):
    one_line(run("board", "log", "--state-dir", str(tmp_path / "st"), tmp_path=tmp_path),
             2, "no log")


def test_bench_progress_is_on_stderr_and_json_stays_one_document(tmp_path):
    """Item 10: bench says each stage as it starts, on stderr; with --json stdout is the
    one document (the emulated Pico's stages used to print on stdout); -q says nothing."""
    import json

    r = run("bench", "--quick", "--cpython-only", "--no-native", "--json", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "cpython" in json.loads(r.stdout)
    assert "pitboss: bench: the evaluators on CPython" in r.stderr.splitlines(), r.stderr
    q = run("-q", "bench", "--quick", "--cpython-only", "--no-native", "--json",
            tmp_path=tmp_path)
    assert q.returncode == 0 and "cpython" in json.loads(q.stdout)
    assert "pitboss: bench" not in q.stderr, q.stderr


def test_vectors_on_a_board_say_each_step(tmp_path):
    """Item 10: `vectors --port` copies the files with a bar and says the board's run
    before the minute it takes."""
    from host_tools.deploy import board_vectors

    class Board:
        def __init__(self):
            self.files = []

        def exec(self, code):
            if "vectors.main" not in code:
                return ""
            return "GAME nj-5card 3 0\nVECTORS 3 0\n"

        def write_file(self, path, data):
            self.files.append(path)

    said, b = [], Board()
    tally, fails = board_vectors.board_run(b, progress=said.append)
    n = len(board_vectors.vector_files())
    assert len(b.files) == n and tally == {"nj-5card": [3, 0]} and fails == []
    assert said == ["running %d vector files on the board (a minute or two on a Pico)" % n]
    assert board_vectors.board_run(Board())[0] == tally  # the demo's call: no progress
