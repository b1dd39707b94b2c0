"""The floor's store on SQLite and on PostgreSQL (the same tests, `floor_db`): the
migrations, exactly-once ingest by (board, seq), what records add (rounds, tilts), the
shift queries and CSV."""
import asyncio
import csv
import io
import json
import os
import time

import pytest


from host_tools.floor import queries as q
from host_tools.floor.puller import Puller
from host_tools.floor.store import Store, migrations, split_sql
from tests.floor.helpers import LocalLine, direct_db, local_table, table


def test_migrations_apply_once_and_are_numbered(floor_db):
    st = Store(floor_db)
    first = st.migrate()
    assert first == [v for v, _, _ in migrations()] and first[0] == 1
    assert st.migrate() == []  # a second collector finds nothing to do
    assert st.schema_version() == first[-1]
    # every table of the schema is there and empty
    for name in ("boards", "records", "rounds", "tilts", "anomalies"):
        assert st.db.query("SELECT count(*) FROM %s" % name)[0][0] == 0
    st.close()


def test_split_sql_drops_comments_and_keeps_statements():
    assert split_sql("-- a; comment\nCREATE TABLE a (x INT); -- end\n\nSELECT 1;") == \
        ["CREATE TABLE a (x INT)", "SELECT 1"]


def pull(store, target, keys, board="t1", tamper=None):
    async def go():
        p = Puller(table(board), await direct_db(store), keys, set_clock=False)
        await p.db("register", board, "local")
        line = LocalLine(target, tamper)
        await p.cycle(line)
        return p, line
    return asyncio.run(go())


def test_records_stored_once_and_acknowledged_after_the_commit(floor_db, tmp_path):
    t, keys = local_table(tmp_path, rounds=3)
    st = Store(floor_db)
    st.migrate()
    p, line = pull(st, t, keys)
    last = t.app.ctl.journal.last_seq
    assert st.last_seq("t1") == last
    assert st.db.query("SELECT count(*) FROM records WHERE board = 't1'")[0][0] == last
    # acknowledged, never beyond what the database holds; the ack's own record (auth_ok,
    # journalled by the ack) is stored and waits for the next real record's ack
    acked = t.app.ctl.journal.acked
    assert acked == last - 1 == st.db.query("SELECT acked FROM boards")[0][0]
    assert json.loads(st.stored_record("t1", last)[3])["ev"] == "auth_ok"
    p, line = pull(st, t, keys)
    assert t.app.ctl.journal.acked == acked and line.sent[-1].startswith("export")
    # an export after the ack asks from after the store's last: the board sends the
    # records that came since (the ack's own auth_ok), nothing twice
    rounds = q.recent_rounds(st, "t1")
    assert [r["round"] for r in rounds] == [3, 2, 1]
    # The same records again (a collector killed between its commit and its ack, asked
    # again from an older seq): stored once, and so is what they add.
    from host_tools.floor.records import verify
    key = keys.load_key("t1")
    recs = t.app.ctl.command("export 1 50")["records"]
    again = st.ingest("t1", [verify(r, key) for r in recs])
    assert again == 0
    assert st.db.query("SELECT count(*) FROM rounds WHERE board = 't1'")[0][0] == 3
    st.close()


def test_rounds_carry_the_settlement_and_the_drop_is_the_meters(floor_db, tmp_path):
    t, keys = local_table(tmp_path, game="qc-caribbean", seats=4, rounds=4, seed=11)
    st = Store(floor_db)
    st.migrate()
    pull(st, t, keys)
    meters = t.app.ctl.command("meters")
    rows = q.summary(st, 0, time.time() + 3600, (6, 14, 22))
    tot = q.totals(rows)
    assert tot["rounds"] == 4 and tot["drop"] == meters["totals"]["wagered"]
    assert tot["paid"] == meters["totals"]["paid"]
    assert tot["hold"] == q.hold(tot["drop"], tot["paid"])
    r = q.round_detail(st, "t1", 2)
    assert r["round"] == 2 and r["game"] == "qc-caribbean"
    recalled = t.app.ctl.command("recall 4")["rounds"]
    assert r["result"] == [x for x in recalled if x["round"] == 2][0]["result"]
    # the round's journal records: its wagers, the deal, every card, the settlement
    kinds = [e["ev"] for e in r["events"]]
    assert kinds[-1] == "settle" and "deal" in kinds
    assert kinds.count("card") == sum(len(s["cards"]) for s in r["result"]["seats"]) + 5
    assert q.round_detail(st, "t1", 99) is None
    st.close()


def test_tilts_with_time_and_operator_and_voids(floor_db, tmp_path):
    from host_tools.table.configurator import Configurator
    t, keys = local_table(tmp_path, rounds=1)
    ctl = t.app.ctl
    from host_tools.table.rounds import plan_round
    before, frames, after = plan_round("nj-3card", 3, 77)
    for ln in before:
        assert ctl.command(ln)["ok"]
    t._hw.shoe_uart().feed(frames[:24])  # two cards, then the shoe loses frames
    t.app.poll()
    ctl.misdeal("shoe_gap", "test")
    assert ctl.command("status")["tilts"][0]["code"] == "shoe_gap"
    st = Store(floor_db)
    st.migrate()
    pull(st, t, keys)
    # the round in play is held back by the board (its cards): so is its tilt record
    assert q.tilts(st) == []
    assert st.db.query("SELECT tilts FROM boards")[0][0] == "shoe_gap"
    assert q.tables(st)[0]["state"] == "tilted"
    r = Configurator(t, "t1", keys).signed("tilt-clear op42")
    assert r["ok"] and r["voided"]["round"] == 2
    pull(st, t, keys)
    tl = q.tilts(st)
    assert [(x["action"], x["code"], x["operator"]) for x in tl] == \
        [("raise", "shoe_gap", None), ("clear", "shoe_gap", "op42")]
    assert all(abs(x["at"] - time.time()) < 120 for x in tl)  # the board's clock
    rows = q.summary(st, 0, time.time() + 3600, (6, 14, 22))
    assert q.totals(rows)["voids"] == 1 and q.totals(rows)["tilts"] == 1
    assert q.round_detail(st, "t1", 2)["void"] == "shoe_gap"
    st.close()


def test_shifts_split_the_day_and_csv(floor_db, tmp_path):
    t, keys = local_table(tmp_path, rounds=3)
    st = Store(floor_db)
    st.migrate()
    pull(st, t, keys)
    # put the rounds into three shifts of one day (08:00, 15:00, 23:30 UTC)
    day = q.day_start(time.time()) - 3 * q.DAY
    seqs = [s for (s,) in st.db.query("SELECT seq FROM rounds ORDER BY seq")]
    for s, h in zip(seqs, (8, 15, 23.5)):
        st.db.execute("UPDATE rounds SET at = ? WHERE seq = ?", (day + h * 3600, s))
    rows = q.summary(st, day, day + q.DAY, (6, 14, 22))
    labels = [r["shift"][11:] for r in rows]
    assert labels == ["06:00", "14:00", "22:00"] and all(r["rounds"] == 1 for r in rows)
    # two shifts of 12 h: 15:00 and 23:30 fall into the second
    rows = q.summary(st, day, day + q.DAY, (6, 18))
    assert [(r["shift"][11:], r["rounds"]) for r in rows] == [("06:00", 1), ("18:00", 1)] \
        or [(r["shift"][11:], r["rounds"]) for r in rows] == [("06:00", 2), ("18:00", 1)]
    out = io.StringIO()
    assert q.write_rounds_csv(st, out, day, day + q.DAY) == 3
    lines = list(csv.reader(io.StringIO(out.getvalue())))
    assert lines[0] == list(q.ROUND_COLUMNS) and len(lines) == 4
    assert lines[1][4].endswith("08:00:00Z")
    st.close()


def test_a_database_that_fails_is_an_error_the_puller_survives(tmp_path):
    """The collector's database thread turns a failed statement into DatabaseError and
    reconnects at the next call (a PostgreSQL server restarted); the table's puller shows
    the reason and tries again."""
    from host_tools.floor.backends import DatabaseError
    from host_tools.floor.collector import DB
    url = str(tmp_path / "floor.sqlite")
    db = DB(url, migrate=True)

    async def go():
        await db("register", "t1", "p")
        db.store.db.c.close()  # the connection dies under the store
        with pytest.raises(DatabaseError):
            await db("last_seq", "t1")
        return await db("last_seq", "t1")  # reconnected
    assert asyncio.run(go()) == 0
    db.close()


def test_a_later_migration_fills_the_grid_from_what_was_stored(floor_db, tmp_path, request):
    """0002 (the grid's own rows) applied to a floor that has rounds already: the grid
    shows them as if they had been stored after it."""
    from host_tools.floor import store as storemod
    t, keys = local_table(tmp_path, rounds=3)
    st = Store(floor_db)
    st.migrate()
    pull(st, t, keys)
    want = q.tables(st)
    # the same floor as 0001 alone left it: no grid rows
    rounds = st.db.query("SELECT board, seq, round, game, at, wagered, paid, house_net, "
                         "void, seats, result, stored FROM rounds")
    st.close()
    old = floor_db + ".v1" if "://" not in floor_db else \
        request.getfixturevalue("pg_server").new_database()
    real = storemod.migrations
    storemod.migrations = lambda: [m for m in real() if m[0] == 1]
    try:
        v1 = Store(old)
        v1.migrate()
    finally:
        storemod.migrations = real
    v1.register("t1", "local")
    v1.db.executemany("INSERT INTO rounds VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      rounds)
    assert v1.migrate() == [2]
    got = q.tables(v1)
    for k in ("last_round", "wagered", "paid", "hold", "rounds_today"):
        assert got[0][k] == want[0][k], k
    assert got[0]["rounds_today"] == 3
    v1.close()


def test_the_floor_commands(floor_db, tmp_path, capsys):
    """`pitboss floor ...` on a floor with rounds: JSON and text, the exit codes."""
    from host_tools.cli import main
    t, keys = local_table(tmp_path, rounds=2)
    st = Store(floor_db)
    st.migrate()
    pull(st, t, keys)
    st.close()
    capsys.readouterr()
    assert main(["floor", "summary", "--db", floor_db, "--hours", "2", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["totals"]["rounds"] == 2 and s["rows"][0]["board"] == "t1"
    assert main(["floor", "tables", "--db", floor_db]) == 0
    assert "t1" in capsys.readouterr().out
    assert main(["floor", "round", "--db", floor_db, "t1", "2"]) == 0
    assert "t1 round 2" in capsys.readouterr().out
    assert main(["floor", "round", "--db", floor_db, "t1", "9"]) == 1
    assert main(["floor", "anomalies", "--db", floor_db]) == 0
    out = tmp_path / "rounds.csv"
    assert main(["floor", "csv", "rounds", "--db", floor_db, "--hours", "2", "--out",
                 str(out)]) == 0
    assert len(out.read_text().splitlines()) == 3
    capsys.readouterr()
    missing = str(tmp_path / "none.sqlite")
    assert main(["floor", "summary", "--db", missing]) == 3
    assert not os.path.exists(missing)  # a question never makes a database
    assert "no floor database" in capsys.readouterr().err
    assert main(["floor", "summary", "--db", floor_db, "--shift", "yesterday"]) == 2


def test_the_configuration_file_and_the_command_line(tmp_path):
    from host_tools.floor import config
    f = tmp_path / "floor.toml"
    f.write_text('[floor]\ndb = "pit.sqlite"\nkeys = "keys"\nshifts = [7, 19]\n\n'
                 '[[table]]\nid = "bj-01"\nport = "/dev/ttyACM0"\n'
                 '[[table]]\nid = "bj-02"\nport = "/dev/ttyACM1"\n')
    c = config.load(str(f), tables=[config.parse_table_arg("bj-02=/dev/ttyUSB9")])
    assert c.db == str(tmp_path / "pit.sqlite") and c.keys == str(tmp_path / "keys")
    assert c.shifts == (7, 19)
    assert [(t.id, t.port) for t in c.tables] == [("bj-01", "/dev/ttyACM0"),
                                                  ("bj-02", "/dev/ttyUSB9")]
    assert config.load(str(f), db="postgresql://x@h/f").db == "postgresql://x@h/f"
    for bad, why in (('[floor]\ncolour = 1\n', "unknown"),
                     ('[floor]\nshifts = [14, 6]\n', "increasing"),
                     ('[[table]]\nid = "a b"\nport = "p"\n', "letters"),
                     ('[[table]]\nid = "a"\nport = "p"\n[[table]]\nid = "a"\nport = "q"\n',
                      "twice"),
                     ('[floor\n', "floor.toml")):
        f.write_text(bad)
        with pytest.raises(config.ConfigError) as e:
            config.load(str(f))
        assert why in str(e.value)
    with pytest.raises(config.ConfigError):
        config.parse_table_arg("no-port")


def test_collect_without_the_floor_extra_names_the_fix(tmp_path):
    """A wheel installed without `pitboss[floor]` has no starlette: `pitboss collect` says
    which package and how to get it (exit 2) before following any table; --no-http still
    collects. (Blocked here by a None in sys.modules, as if it were not installed.)"""
    import subprocess
    import sys
    code = ("import sys; sys.modules['starlette'] = None; sys.modules['uvicorn'] = None\n"
            "from host_tools.cli import main; sys.exit(main(sys.argv[1:]))")
    args = [sys.executable, "-c", code, "collect", "--db", str(tmp_path / "f.sqlite"),
            "--table", "bj-01=%s" % (tmp_path / "nowhere")]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p
    assert p.stderr.strip() == ("pitboss: the pit view needs starlette: pip install "
                                "'pitboss[floor]' (or --no-http to collect without it)")
    p = subprocess.run(args + ["--no-http", "--seconds", "1"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p
