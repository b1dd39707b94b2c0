"""`python -m host_tools rank / census / games` as a user runs them: JSON out, exit 2
with one line on stderr for bad input, --batch going on past a bad line (exit 1 once any
was refused), and nothing but the standard library needed."""
import json
import os
import subprocess
import sys
import venv

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args, stdin=None, python=sys.executable):
    return subprocess.run([python, "-m", "host_tools", *args], cwd=REPO, input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_rank_prints_one_json_object():
    r = run("rank", "--game", "pr-pai-gow", "kh", "QH", "9h", "5h", "jk")
    assert r.returncode == 0 and r.stderr == ""
    assert json.loads(r.stdout) == {
        "game": "pr-pai-gow", "cards": ["Kh", "Qh", "9h", "5h", "Jk"],
        "category": "flush", "score": json.loads(r.stdout)["score"],
        "hand": ["Jk=Ah", "Kh", "Qh", "9h", "5h"]}
    assert 0 <= json.loads(r.stdout)["score"] < 2 ** 30


@pytest.mark.parametrize("args,needle", [
    (["--game", "nj-5card", "As", "Ks", "Qs", "Js", "Xx"], "'Xx'"),
    (["--game", "nj-5card", "As", "Ks", "Qs", "Js", "As"], "duplicate card As"),
    (["--game", "nj-5card", "As", "Ks", "Qs", "Js"], "got 4"),
    (["--game", "nj-5card", "As", "Ks", "Qs", "Js", "Jk"], "without a joker"),
    (["--game", "pr-pai-gow", "As", "Ks", "Qs", "Jk", "Jk"], "two jokers"),
    (["--game", "nj-9card", "As"], "unknown game"),
])
def test_bad_input_exits_2_naming_the_culprit(args, needle):
    r = run("rank", *args)
    assert r.returncode == 2 and r.stdout == ""
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr


def test_batch_goes_on_past_bad_lines():
    r = run("rank", "--game", "nj-3card", "--batch",
            stdin="As Ks Qs\nAs As 2c\n\n2c 3d 4h\n7c 8c\n")
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.returncode == 1  # every line answered; some refused
    assert out[0]["category"] == "royal_flush"
    assert out[1] == {"error": "duplicate card As", "kind": "duplicate_card", "line": 2}
    assert out[2]["category"] == "straight"  # NJ (d)4: three consecutive ranks
    assert out[3]["kind"] == "wrong_count" and out[3]["line"] == 5


def test_batch_of_good_lines_exits_0():
    r = run("rank", "--game", "nj-3card", "--batch", stdin="As Ks Qs\n\n2c 3d 4h\n")
    assert r.returncode == 0, r.stderr
    assert [json.loads(x)["category"] for x in r.stdout.splitlines()] == \
        ["royal_flush", "straight"]


def test_best_of_seven():
    r = run("rank", "--game", "nj-5card", "--best", "2d", "As", "Ks", "Qs", "Js", "Ts", "9s")
    assert json.loads(r.stdout)["hand"] == ["As", "Ks", "Qs", "Js", "Ts"]


def test_census_and_games():
    r = run("census", "--game", "nj-3card")
    c = json.loads(r.stdout)
    assert c["total"] == 22100 and c["counts"]["straight"] == 720
    g = run("games")
    assert g.returncode == 0 and "pa-all-six" in g.stdout and "(d)" in g.stdout
    j = json.loads(run("games", "--json").stdout)
    assert [x["game"] for x in j][:2] == ["nj-5card", "nj-3card"]


def test_rank_census_games_need_only_the_standard_library(tmp_path):
    env = tmp_path / "bare"
    venv.create(env, with_pip=False)  # no mpremote, no hypothesis: nothing installed
    py = str(env / "bin" / "python")
    assert run("rank", "-g", "nj-5card", "As", "Ks", "Qs", "Js", "Ts",
               python=py).returncode == 0
    assert run("games", python=py).returncode == 0
    assert json.loads(run("census", "-g", "pr-pai-gow-low", python=py).stdout)["total"] \
        == 1378


def test_one_board_error_for_real_and_virtual_boards():
    # `rank/vectors/shoe --port virtual` catch BoardError: a virtual board that will not
    # start (vboard's) must raise the class boardlink raises (host_tools.output'), or it
    # escapes as a traceback.
    from host_tools.link import boardlink
    from host_tools import output as errors
    from host_tools.emu import vboard
    assert boardlink.BoardError is errors.BoardError
    assert vboard.BoardError is errors.BoardError
    assert issubclass(errors.BoardError, RuntimeError)


def test_batch_on_a_board_exits_1_once_a_line_is_refused(monkeypatch, capsys):
    # `rank --port P --batch` prints the board's replies the same way, with the same exit.
    import contextlib
    import io
    from types import SimpleNamespace

    from host_tools.deploy import board_rank
    from pitboss.verbs.rank import rank_reply

    def replies(board, game, hands, best=False):
        out = []
        for h in hands:
            try:
                out.append(dict(rank_reply(game, h), ok=True))
            except Exception as e:  # the board's error reply, as verbs.batch writes it
                out.append({"ok": False, "error": {"message": str(e), "code": e.code}})
        return out

    monkeypatch.setattr(board_rank, "open_board", lambda port: contextlib.nullcontext())
    monkeypatch.setattr(board_rank, "rank_lines", replies)
    for text, code in (("As Ks Qs\n2c 3d 4h\n", 0), ("As Ks Qs\nAs As 2c\n", 1)):
        monkeypatch.setattr("sys.stdin", io.StringIO(text))
        args = SimpleNamespace(batch=True, cards=[], game="nj-3card", best=False, port="x")
        assert board_rank.rank_on_board(args) == code
        out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
        assert out[0]["category"] == "royal_flush" and len(out) == 2
        if code:
            assert out[1] == {"error": "duplicate card As", "kind": "duplicate_card", "line": 2}


def test_every_option_says_what_it_does():
    # `pitboss X -h` is a bench technician's manual: no option or argument without a line.
    import argparse

    from host_tools.cli import build_parser

    bare = []

    def walk(p, path):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, path + [name])
            elif not a.help and not isinstance(a, argparse._HelpAction):
                bare.append("%s %s" % (" ".join(path), "/".join(a.option_strings) or a.dest))

    walk(build_parser(), ["pitboss"])
    assert bare == []


def test_recall_of_no_rounds_is_refused_before_any_port():
    r = run("recall", "0", "--port", "/dev/pitboss-no-such-port")
    assert r.returncode == 2
    assert r.stderr.strip() == \
        "pitboss recall: argument n: must be at least 1, got 0 (see pitboss recall -h)"


@pytest.mark.parametrize("installed, fix", [
    (True, "pip install 'pitboss[floor]'"),
    (False, "python -m pip install -r requirements.txt")])
def test_postgresql_without_its_driver_names_the_install_for_where_pitboss_runs(
        monkeypatch, installed, fix):
    import host_tools
    from host_tools.floor.backends import DatabaseError, open_backend

    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg -> ImportError
    monkeypatch.setattr(host_tools, "INSTALLED", installed)
    with pytest.raises(DatabaseError) as e:
        open_backend("postgresql://floor@127.0.0.1/floor").connect()
    assert str(e.value) == "PostgreSQL needs psycopg 3: " + fix
