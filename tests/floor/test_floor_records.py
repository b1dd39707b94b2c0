"""What the collector refuses (issue 31): a forged, replayed or truncated record is
refused and reported (an anomaly row), never stored, and nothing after it is stored or
acknowledged; records the board no longer has are a flagged gap. The records are the
firmware's own (the controller in this process), tampered with on the line."""
import asyncio
import json

import pytest

from host_tools.floor import queries as q
from host_tools.floor.puller import Puller
from host_tools.floor.store import Store
from tests.floor.helpers import LocalLine, direct_db, local_table, table


def run_pull(st, t, keys, tamper):
    async def go():
        p = Puller(table("t1"), await direct_db(st), keys, set_clock=False)
        await p.db("register", "t1", "local")
        line = LocalLine(t, tamper)
        await p.cycle(line)
        return p, line
    return asyncio.run(go())


def exported(line, reply):
    return line.startswith("export") and reply.get("records")


def at_seq(n, change):
    """A tamper that applies change(record) to the record with seq n of export replies."""
    def tamper(line, reply):
        if exported(line, reply):
            for r in reply["records"]:
                if r["seq"] == n:
                    change(r)
        return reply
    return tamper


def setup(floor_db, tmp_path, rounds=2):
    t, keys = local_table(tmp_path, rounds=rounds)
    st = Store(floor_db)
    st.migrate()
    return t, keys, st


def check_refused(st, t, kind, seq):
    a = q.anomalies(st, "t1")
    assert [(x["kind"], x["seq_from"]) for x in a] == [(kind, seq)], a
    # nothing from the refused record on is stored, nor acknowledged
    assert st.last_seq("t1") == seq - 1
    assert st.stored_record("t1", seq) is None
    assert t.app.ctl.journal.acked <= seq - 1
    assert st.db.query("SELECT acked FROM boards")[0][0] <= seq - 1


def test_a_forged_record_is_refused_and_reported(floor_db, tmp_path):
    t, keys, st = setup(floor_db, tmp_path)

    def forge(r):  # a settlement paying a seat more, its CRC made right: no key for the MAC
        from host_tools.table.export import record_crc
        r["payload"] = r["payload"].replace('"ante"', '"antE"')
        r["crc"] = record_crc(r["seq"], ord(r["kind"]), r["payload"].encode())
    seq = [json.loads(r["payload"]).get("ev") for r in
           t.app.ctl.command("export 1 50")["records"]].index("wager") + 1
    p, line = run_pull(st, t, keys, at_seq(seq, forge))
    check_refused(st, t, "forged", seq)
    assert p.stats["refused"] == 1
    # asked again and again (the board keeps sending it): one anomaly row, counted
    run_pull(st, t, keys, at_seq(seq, forge))
    assert q.anomalies(st, "t1")[0]["count"] == 2
    # the untouched line afterwards: everything stored, once
    run_pull(st, t, keys, None)
    assert st.last_seq("t1") == t.app.ctl.journal.last_seq
    assert len(q.recent_rounds(st, "t1")) == 2


def test_a_truncated_record_is_refused_and_reported(floor_db, tmp_path):
    t, keys, st = setup(floor_db, tmp_path)

    def cut(r):
        r["payload"] = r["payload"][:len(r["payload"]) // 2]
    run_pull(st, t, keys, at_seq(5, cut))
    check_refused(st, t, "truncated", 5)

    # a record with a field missing (a line cut inside the reply's JSON would not parse:
    # that is a garbled line, tests/floor/test_floor_collect.py)
    run_pull(st, t, keys, None)
    from host_tools.table.rounds import plan_round
    assert t.round(*plan_round("nj-3card", 3, 98))[-1]["ok"]
    nxt = st.last_seq("t1") + 1

    def missing(r):
        del r["mac"]
    st.db.execute("DELETE FROM anomalies")
    run_pull(st, t, keys, at_seq(nxt, missing))
    check_refused(st, t, "truncated", nxt)


def test_the_boards_own_truncated_reply_stores_what_came_before(floor_db, tmp_path):
    t, keys, st = setup(floor_db, tmp_path)

    def cut_short(line, reply):
        if exported(line, reply) and reply["records"][0]["seq"] == 1:
            reply["records"] = reply["records"][:4]
            reply["truncated"] = "JournalCorrupt: bad_record"
        return reply
    run_pull(st, t, keys, cut_short)
    assert st.last_seq("t1") == 4
    assert [(x["kind"], x["seq_from"]) for x in q.anomalies(st, "t1")] == [("truncated", 5)]


def test_a_replayed_record_is_refused_and_reported(floor_db, tmp_path):
    t, keys, st = setup(floor_db, tmp_path, rounds=3)
    run_pull(st, t, keys, None)
    stored = st.last_seq("t1")
    rounds = len(q.recent_rounds(st, "t1"))
    old = t.app.ctl.command("export 1 50")["records"]
    # another round, then a line that slips an old settlement in where the next seq is due
    from host_tools.table.rounds import plan_round
    assert t.round(*plan_round("nj-3card", 3, 99))[-1]["ok"]
    settle = [r for r in old if '"ev":"settle"' in r["payload"]][0]

    def replay(line, reply):
        if exported(line, reply):
            reply["records"].insert(0, dict(settle))
        return reply
    run_pull(st, t, keys, replay)
    a = q.anomalies(st, "t1")
    assert [(x["kind"], x["seq_from"]) for x in a] == [("replayed", settle["seq"])]
    assert st.last_seq("t1") == stored and len(q.recent_rounds(st, "t1")) == rounds
    # A record sent again unchanged where the next seq is due: refused and reported as
    # well (the collector asks from after its last, so no board sends it); then the
    # untouched line stores the new round, once.
    st.db.execute("DELETE FROM anomalies")

    def resend(line, reply):
        if exported(line, reply):
            reply["records"].insert(0, dict(old[-1]))
        return reply
    run_pull(st, t, keys, resend)
    assert [(x["kind"], x["seq_from"]) for x in q.anomalies(st, "t1")] == \
        [("replayed", old[-1]["seq"])]
    assert "a copy of the stored record" in q.anomalies(st, "t1")[0]["detail"]
    run_pull(st, t, keys, None)
    assert len(q.recent_rounds(st, "t1")) == rounds + 1
    assert st.db.query("SELECT count(*) FROM records")[0][0] == st.last_seq("t1")


def test_records_the_board_no_longer_has_are_a_flagged_gap(floor_db, tmp_path):
    t, keys, st = setup(floor_db, tmp_path)

    def quarantined(line, reply):  # the board's first records set aside (a quarantine)
        if exported(line, reply) and reply["records"][0]["seq"] == 1:
            reply["records"] = reply["records"][6:]
        return reply
    run_pull(st, t, keys, quarantined)
    a = q.anomalies(st, "t1")
    assert [(x["kind"], x["seq_from"], x["seq_to"]) for x in a] == [("gap", 1, 6)]
    assert st.stored_record("t1", 6) is None and st.stored_record("t1", 7) is not None
    assert st.last_seq("t1") == t.app.ctl.journal.last_seq


def test_a_table_followed_under_a_name_not_its_keys_is_offline_naming_its_key(tmp_path):
    """The collector asks the board for its key's fingerprint as it connects (as every
    keyed command does): a table followed under an ID whose key is not the board's is
    offline with one line naming the key that is (--table NAME=PORT), or saying that the
    store has none, instead of refusing every record as forged."""
    from host_tools.table.auth import KeyStore, KeyStoreError, fingerprint
    t, keys = local_table(tmp_path, board="t1")
    fp = fingerprint(keys.load_key("t1"))

    def check(board, store=keys):
        async def go():
            await Puller(table(board), None, store, set_clock=False)._check_key(LocalLine(t))
        asyncio.run(go())

    check("t1")  # its own key: nothing to say
    with pytest.raises(KeyStoreError) as e:
        check("bj-01")
    assert str(e.value) == ("no key for bj-01 in %s; the board's key (fingerprint %s) is "
                            "t1: --table t1=local" % (keys.folder, fp))
    keys.provision("bj-01")  # a key of that name, another board's
    with pytest.raises(KeyStoreError, match=r"^the key for bj-01 \(fingerprint [0-9a-f]{8}\)"
                       r" is not this board's; the board's key \(fingerprint %s\) is t1" % fp):
        check("bj-01")
    with pytest.raises(KeyStoreError, match="no key there has the board's fingerprint %s: "
                       r"the store that provisioned it is another \(--keys\)" % fp):
        check("t1", KeyStore(tmp_path / "other-keys"))
