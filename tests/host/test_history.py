"""Issue 12, History and Export: no flood and no damaged record erases history (on
CPython, the same firmware the board runs; tests/board/test_history_board.py repeats the board
findings on the virtual board). Each test here failed on main before (commit d29ab6c)."""
import json
import os
import struct

import pytest

from host_tools.table import export as ex
from host_tools.table.auth import KeyStore
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import play_rounds
from host_tools.table.targets import LocalTarget

GAME = "pa-three-card-prime"


def make(tmp_path, durable=False):
    t = LocalTarget(str(tmp_path / "flash"), durable=durable)
    conf = Configurator(t, "h1", KeyStore(str(tmp_path / "keys")))
    conf.provision()
    assert conf.configure(GAME, 3)["ok"]
    return t, conf


def reboot(t):
    return LocalTarget(t.root, durable=False)


def status(t):
    return t.commands(["status"])[0]


def recall(t, n=50):
    return [(r["seq"], r["round"]) for r in t.commands(["recall %d" % n])[0]["rounds"]]


def newest_copy(base):
    """The A/B copy holding the newest generation."""
    gens = {}
    for p in (base + ".a", base + ".b"):
        if os.path.exists(p):
            with open(p, "rb") as f:
                gens[p] = struct.unpack_from("<I", f.read(8), 4)[0]
    return max(gens, key=gens.get)


def damage(path):
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        data[len(data) // 2] ^= 0x55
        f.seek(0)
        f.write(data)


# ---- snapshots and what a round can accumulate ------------------------------------------
def test_checkpoints_bound_what_a_boot_replays(tmp_path):
    # Issue 11's boot budget: between rounds, once 4 KB were journalled since the last
    # snapshot, the controller writes a checkpoint, so a power-on replays at most that
    # and the round in play, however full the segment, and comes back identical.
    from pitboss.store import record as R

    t, _ = make(tmp_path)
    for r in play_rounds(t, GAME, 3, 8, seed=9):
        assert r.get("ok") is not False, r
    ctl = t.app.ctl
    assert len(ctl.journal.segments) == 1  # all in one segment: only checkpoints help
    # A round left open: it is replayed on top of the newest checkpoint (written right
    # after its first wager).
    assert all(r["ok"] for r in t.commands(["wager 1 ante=5", "wager 2 ante=5", "deal"]))
    snaps = [s for s, k, _ in ctl.journal.records() if k == R.KIND_SNAPSHOT]
    assert len(snaps) >= 3, snaps
    assert ctl.journal.since_checkpoint <= 2048 + 6144
    before, meters = status(t), t.commands(["meters"])[0]
    replayed = list(ctl.journal.replay())
    assert replayed[0][1] == R.KIND_SNAPSHOT and replayed[0][0] == snaps[-1]
    t2 = reboot(t)
    assert status(t2) == before and t2.commands(["meters"])[0] == meters
    assert t2.app.boot["replayed"] == len(replayed) < 60
    assert recall(t2) == recall(t)
    # The last settlements' seqs (what the journal must keep for recall) came with the
    # snapshot and the replay, not from a scan back, and match what the table had.
    assert t2.app.ctl._settle_seqs == ctl._settle_seqs == ctl.journal.last(
        50, lambda k, p: b'"ev":"settle"' in p, seqs=True)


def test_a_boot_reads_the_journal_tail_and_idle_passes_check_the_rest(tmp_path):
    # Issue 11: a boot checks the newest segment from its newest checkpoint only, so it
    # costs the same whatever the journal holds; the main loop's idle passes check the
    # rest, and damage there still becomes the journal_corrupt tilt.
    t, conf = make(tmp_path)
    for _ in play_rounds(t, GAME, 3, 90, 7):
        pass
    segs = t.app.ctl.journal.segments
    assert len(segs) >= 3, segs
    before = recall(t)
    seq = status(t)["journal_seq"]
    t2 = reboot(t)
    unchecked = t2.app.ctl.journal.unchecked
    assert unchecked > sum(s[3] for s in segs[:-1]), (unchecked, segs)
    assert recall(t2) == before and status(t2)["journal_seq"] == seq
    passes = 0
    while t2.app.ctl.idle():
        passes += 1
    assert passes > 100 and t2.app.ctl.journal.unchecked == 0
    assert not t2.app.ctl.halted() and t2.app.ctl.journal.state == "open"
    damage(str(tmp_path / "flash" / "journal" / ("%08d.jnl" % segs[0][0])))
    t3 = reboot(t)
    assert not t3.app.ctl.halted()  # not read at boot
    for _ in range(100000):
        if not t3.app.ctl.idle():
            break
    assert [a["code"] for a in t3.app.ctl.active_tilts()] == ["journal_corrupt"]
    assert t3.app.ctl.journal.state == "corrupt"
    assert t3.commands(["wager 1 ante=5"])[0]["error"]["code"] == "tilted"


def test_repeated_wagers_keep_the_snapshot_bounded_and_the_table_alive(tmp_path):
    t, _ = make(tmp_path)
    ctl = t.app.ctl
    # Far more than the ~1,045 that once made a 41 KB snapshot, and enough records to
    # rotate the 64 KB segment while the round is open.
    replies = t.commands(["wager 1 ante=%d" % (1 + i % 500) for i in range(2600)])
    assert all(r["ok"] for r in replies), [r for r in replies if not r["ok"]][:1]
    assert len(ctl.journal.segments) >= 2  # a snapshot was taken mid-round
    snap = ctl._snapshot(ctl.journal.next_seq)
    assert len(snap) < 1024, len(snap)
    more = t.commands(["wager 2 ante=7", "deal", "status"])
    assert all(r["ok"] for r in more)
    t2 = reboot(t)
    assert status(t2)["phase"] == "dealing" and status(t2)["seats"] == [1, 2]
    assert t2.app.ctl.table.wagers(1) == {"ante": 1 + 2599 % 500}


def test_worst_case_snapshot_of_every_game_fits(tmp_path):
    # One wager of every kind on every seat, every card dealt, every seat decided more
    # than once: the largest round each game can hold, well under the record limit.
    from host_tools.table.rounds import plan_round
    from pitboss import games
    sizes = {}
    for game in games.ids():
        g = games.module(game)
        t = LocalTarget(str(tmp_path / game), durable=False)
        conf = Configurator(t, "s", KeyStore(str(tmp_path / ("k" + game))))
        conf.provision()
        assert conf.configure(game, g.MAX_SEATS)["ok"]
        before, frames, after = plan_round(game, g.MAX_SEATS, 3)
        t.commands(before * 3)
        t.round([], frames, [])
        t.commands(after[:-1] * 3)  # every decision three times, not settled
        ctl = t.app.ctl
        sizes[game] = len(ctl._snapshot(ctl.journal.next_seq))
        assert sizes[game] <= ctl.journal.max_payload // 2, (game, sizes[game])
    print("largest snapshot per game (bytes):", sizes)


# ---- refused commands change nothing ------------------------------------------------------
def test_refused_wager_after_a_settled_round_opens_nothing(tmp_path):
    t, _ = make(tmp_path)
    [r] = play_rounds(t, GAME, 3, 1, seed=1)
    before, seq = status(t), t.app.ctl.journal.last_seq
    assert before["phase"] == "settled"
    reply = t.commands(["wager 9 ante=5"])[0]
    assert reply["error"]["code"] == "unknown_seat"
    assert status(t) == before and t.app.ctl.journal.last_seq == seq


def test_newround_with_nothing_to_close_changes_nothing(tmp_path):
    t, _ = make(tmp_path)
    before, seq = status(t), t.app.ctl.journal.last_seq
    assert all(r["ok"] for r in t.commands(["newround"] * 50))
    assert status(t) == before and t.app.ctl.journal.last_seq == seq


# ---- the last 50 settlements survive any flood ---------------------------------------------
@pytest.fixture
def fifty(tmp_path):
    t, conf = make(tmp_path)
    rounds = list(play_rounds(t, GAME, 3, 52, seed=100))
    assert all(r["ok"] for r in rounds)
    return t, conf, recall(t)


def test_12000_newround_lines_keep_the_last_50_rounds(fifty):
    t, _, kept = fifty
    assert len(kept) == 50
    seq = t.app.ctl.journal.last_seq
    t.commands(["newround"] * 12000)
    assert recall(t) == kept
    # The settled round closed, once, with the checkpoint written right after it
    # (docs/journal.md, "Checkpoints"): two records for 12,000 lines.
    assert t.app.ctl.journal.last_seq <= seq + 2


def test_3000_bad_auth_lines_keep_the_last_50_rounds_and_are_counted(fifty):
    t, _, kept = fifty
    seq = t.app.ctl.journal.last_seq
    t.commands(["auth %d %s config {}" % (5000 + i, "ab" * 32) for i in range(3000)])
    assert recall(t) == kept
    # Counted, journalled in aggregate: 1, 2, 4 ... 2048 -> 12 records, not 3,000.
    logged = [json.loads(p) for s, _, p in t.app.ctl.journal.records(seq + 1)]
    refused = [e for e in logged if e["ev"] == "auth_refused"]
    assert len(refused) == 12 and refused[-1]["total"] == 2048
    assert sum(e["n"] for e in refused) == 2048
    t.commands(["status"])
    # The count goes on across a reboot (the snapshot and records carry it).
    assert reboot(t).app.ctl._refused_total >= 2048


def test_void_round_flood_halts_the_table_rather_than_losing_settlements(fifty):
    t, _, kept = fifty
    lines = []
    for i in range(6000):
        lines += ["wager 1 ante=%d" % (5 + i % 7), "newround"]
    replies = t.commands(lines)
    assert recall(t) == kept
    st = status(t)
    assert [a["code"] for a in st["tilts"]] == ["journal_full"]
    assert replies[-1]["error"]["code"] in ("tilted", "journal_full")
    t2 = reboot(t)
    assert recall(t2) == kept and [a["code"] for a in status(t2)["tilts"]] == ["journal_full"]


# ---- tilts and the counter cannot go back -------------------------------------------------
def test_damaged_newest_tilt_copy_keeps_the_tilt(tmp_path):
    t, conf = make(tmp_path)
    t.commands(["wager 1 ante=5", "deal", "card As", "card As"])  # duplicate: a tilt
    assert conf.signed("tilt-clear op1")["ok"]  # generation 2: no tilt
    t.commands(["newround", "wager 1 ante=5", "deal", "card Kd", "card Kd"])
    assert [a["code"] for a in status(t)["tilts"]] == ["duplicate_card"]  # generation 3
    damage(newest_copy(t.root + "/state/tilt"))
    t2 = reboot(t)
    assert [a["code"] for a in status(t2)["tilts"]] == ["duplicate_card"]
    assert t2.commands(["card Kd"])[0]["error"]["code"] == "tilted"


def test_damaged_newest_counter_copy_does_not_allow_a_replay(tmp_path):
    t, conf = make(tmp_path)
    line = conf.keys.sign("h1", 'config {"game":"nj-5card","seats":2}')
    assert t.commands([line])[0]["ok"]
    damage(newest_copy(t.root + "/auth/counter"))
    t2 = reboot(t)
    assert t2.commands([line])[0]["error"]["code"] == "replay"
    assert status(t2)["game"] == "nj-5card"


def test_cleared_tilt_stays_cleared_when_both_records_agree(tmp_path):
    t, conf = make(tmp_path)
    t.commands(["wager 1 ante=5", "deal", "card As", "card As"])
    assert conf.signed("tilt-clear op1")["ok"]
    t2 = reboot(t)
    assert status(t2)["tilts"] == []


# ---- meters -------------------------------------------------------------------------------
def test_meters_corrupt_is_not_cleared_by_tilt_clear_and_reset_keeps_the_copies(tmp_path):
    t, conf = make(tmp_path)
    list(play_rounds(t, GAME, 3, 2, seed=5))
    base = t.root + "/state/meters"
    before = {p: open(p, "rb").read() for p in (base + ".a", base + ".b")
              if os.path.exists(p)}
    for p in before:
        damage(p)
    damaged = {p: open(p, "rb").read() for p in before}
    t2 = reboot(t)
    assert [a["code"] for a in status(t2)["tilts"]] == ["meters_corrupt"]
    conf.target = t2
    r = conf.signed("tilt-clear op1")
    assert r["error"]["code"] == "meters_corrupt"
    assert [a["code"] for a in status(t2)["tilts"]] == ["meters_corrupt"]
    assert {p: open(p, "rb").read() for p in damaged} == damaged  # untouched
    assert t2.commands(["meters-reset op1"])[0]["error"]["code"] == "auth_required"
    r = conf.signed("meters-reset op1")
    assert r["ok"] and r["cleared"] == ["meters_corrupt"], r
    kept = {open(p, "rb").read() for p in r["kept"]}
    assert kept == set(damaged.values())
    logged = [json.loads(p) for _, _, p in t2.app.ctl.journal.last(5)]
    assert any(e["ev"] == "meters_reset" and e["op"] == "op1" for e in logged)
    # A healthy meters record is never reset.
    assert conf.signed("meters-reset op1")["error"]["code"] == "wrong_phase"


# ---- truncation and round numbers ---------------------------------------------------------
def _records(path):
    """(offset, seq) of each record of a segment."""
    data = open(path, "rb").read()
    off, out = 16, []
    while off < len(data):
        seq, n = struct.unpack_from("<IH", data, off + 2)
        out.append((off, seq))
        off += 14 + n
    return data, out


def test_truncation_at_a_record_boundary_tilts(tmp_path):
    t, _ = make(tmp_path)
    t.commands(["wager 1 ante=5", "wager 2 ante=5", "deal", "card 2c", "card 3d"])
    jdir = t.root + "/journal"
    seg = sorted(n for n in os.listdir(jdir) if n.endswith(".jnl"))[-1]
    data, recs = _records(os.path.join(jdir, seg))
    with open(os.path.join(jdir, seg), "wb") as f:
        f.write(data[:recs[-2][0]])  # the last two records gone, cut between records
    t2 = reboot(t)
    codes = [a["code"] for a in status(t2)["tilts"]]
    assert codes == ["journal_corrupt"], codes
    assert "truncated" in status(t2)["tilts"][0]["detail"]


def test_round_numbers_go_on_across_configs(tmp_path):
    t, conf = make(tmp_path)
    a = list(play_rounds(t, GAME, 3, 2, seed=1))
    assert conf.configure(GAME, 2)["ok"]
    b = list(play_rounds(t, GAME, 2, 2, seed=9))
    numbers = [r["round"] for r in a + b]
    assert numbers == sorted(set(numbers)), numbers


def test_a_cut_after_a_snapshot_does_not_reopen_a_settled_round(tmp_path):
    t, _ = make(tmp_path)
    [r] = play_rounds(t, GAME, 3, 1, seed=2)
    # The next wager starts a segment (its snapshot), and the power fails before the
    # wager's own record: the newest record is that snapshot.
    t.app.ctl.journal._rotate()
    t2 = reboot(t)
    st = status(t2)
    assert st["phase"] == "settled" and st["round"] == r["round"]
    [r2] = play_rounds(t2, GAME, 3, 1, seed=3)
    assert r2["round"] == r["round"] + 1
    assert [x[1] for x in recall(t2)] == [r["round"], r["round"] + 1]


# ---- export -------------------------------------------------------------------------------
def test_export_verifies_stores_and_acknowledges(tmp_path):
    t, conf = make(tmp_path)
    list(play_rounds(t, GAME, 3, 5, seed=1))
    store = str(tmp_path / "store")
    res = ex.export(t, conf.keys, "h1", store)
    # The acknowledgement is itself journalled (auth_ok), after what it acknowledges.
    last = t.app.ctl.journal.last_seq - 1
    assert res["first"] == 1 and res["last"] == last and res["acked"] == last
    lines = ex.read_store(res["store"])
    assert [x["seq"] for x in lines] == list(range(1, last + 1))
    assert t.app.ctl.journal.acked == last
    # Again: only that acknowledgement's record, nothing duplicated.
    assert ex.export(t, conf.keys, "h1", store)["exported"] == 1
    assert [x["seq"] for x in ex.read_store(res["store"])] == list(range(1, last + 2))


def _tamper_exports(t, change):
    """Every `export` reply the target gives passes through change(reply) first (a line
    that damages or forges what the board sent)."""
    real = t.commands

    def commands(lines):
        out = real(lines)
        if lines[0].startswith("export "):
            change(out[0])
        return out
    t.commands = commands


def test_export_is_written_one_record_at_a_time_as_the_materialised_reply(tmp_path):
    """Issue 11: on the main loop an export reply is streamed (pitboss.verbs.records.ExportRows):
    each record is read, signed and written before the next, never 4 KB of records and
    their MACs at once; the line is exactly the materialised reply."""
    import io

    from pitboss import replies as app
    from pitboss.verbs.records import ExportRows

    t, conf = make(tmp_path)
    assert conf.configure("pr-pai-gow", 6)["ok"]
    list(play_rounds(t, "pr-pai-gow", 6, 3, seed=1))
    ctl = t.app.ctl
    want = ctl.command("export 1")
    assert want["ok"] and len(want["records"]) > 1
    ctl.stream = True
    try:
        reply = ctl.command("export 1")
        assert isinstance(reply["records"], ExportRows)
        buf = io.StringIO()
        app.json_writer(buf)(reply)
    finally:
        ctl.stream = False
    assert buf.getvalue().count("\n") == 1
    assert json.loads(buf.getvalue()) == json.loads(json.dumps(want))


@pytest.mark.parametrize("pad", range(0, 66, 5))
def test_a_raw_payload_is_written_as_the_json_string_of_its_text(pad):
    # app._write_record writes an export row's payload bytes 64 at a time: quotes and
    # backslashes escaped, no piece cut inside a UTF-8 sequence (here a 2- and a 4-byte
    # character placed across the 64-byte boundaries as `pad` moves them).
    import io

    from pitboss import replies as app

    detail = "x" * pad + "caf\u00e9 \"q\" \\ " + "\U0001F0A1" * 30 + " end"
    text = json.dumps({"ev": "tilt", "detail": detail}, ensure_ascii=False,
                      separators=(",", ":"))
    row = {"seq": 7, "kind": "R", "crc": 1, "mac": "ab", "payload": text.encode()}
    buf = io.StringIO()
    app._write_record(buf.write, buf, row, "payload")
    assert json.loads(buf.getvalue()) == dict(row, payload=text)


@pytest.mark.parametrize("pad", range(0, 66, 5))
def test_a_stored_result_is_written_as_its_json(pad):
    # A recall row's result as the journal holds it (a memoryview of its JSON): written
    # as it is, 64 bytes at a time, no piece cut inside a UTF-8 sequence.
    import io

    from pitboss import replies as app

    result = {"game": "qc-caribbean", "note": "x" * pad + "caf\u00e9 \"q\" \\ "
              + "\U0001F0A1" * 30, "seats": [{"seat": 1, "amount": -500}]}
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode()
    row = {"seq": 7, "game": "qc-caribbean", "round": 3, "result": memoryview(text)}
    buf = io.StringIO()
    app._write_record(buf.write, buf, row, "result")
    assert json.loads(buf.getvalue()) == dict(row, result=result)


def test_a_streamed_export_cut_by_damage_keeps_what_came_and_says_so(tmp_path):
    # A record unreadable partway through a streamed reply: json_writer ends the list
    # and says "truncated"; the host stores the records before it (each MAC checked) and
    # reports the damage rather than asking past it.
    t, conf = make(tmp_path)
    list(play_rounds(t, GAME, 3, 3, seed=1))

    def cut(reply):
        if len(reply.get("records", ())) > 3:
            reply["records"] = reply["records"][:3]
            reply["truncated"] = "JournalCorrupt: bad CRC at seq 4"
    _tamper_exports(t, cut)
    with pytest.raises(ex.ExportError, match="damaged after seq 3"):
        ex.export(t, conf.keys, "h1", str(tmp_path / "store"))
    stored = ex.read_store(ex.store_path(str(tmp_path / "store"), "h1"))
    assert [x["seq"] for x in stored] == [1, 2, 3]
    assert t.app.ctl.journal.acked == 0


def test_export_refuses_a_forged_record(tmp_path):
    t, conf = make(tmp_path)
    list(play_rounds(t, GAME, 3, 1, seed=1))

    def forged(reply):
        if reply.get("records"):
            rec = reply["records"][-1]
            rec["payload"] = rec["payload"].replace("settle", "settle ")
    _tamper_exports(t, forged)
    with pytest.raises(ex.ExportError, match="CRC"):
        ex.export(t, conf.keys, "h1", str(tmp_path / "store"))
    assert t.app.ctl.journal.acked == 0


def test_export_interrupted_anywhere_resumes_without_gaps_or_duplicates(tmp_path):
    t, conf = make(tmp_path)
    list(play_rounds(t, GAME, 3, 8, seed=1))
    store = str(tmp_path / "store")
    path = ex.store_path(store, "h1")
    # 1: the host dies after two batches are stored, before any acknowledgement.
    real, calls = t.commands, []

    def dies(lines):
        calls.append(lines[0])
        if len(calls) == 3:
            raise OSError("host crash")
        return real(lines)
    t.commands = dies
    with pytest.raises(OSError):
        ex.export(t, conf.keys, "h1", store, batch=7)
    t.commands = real
    assert t.app.ctl.journal.acked == 0 and len(ex.read_store(path)) == 14
    # 2: the last line is torn (the host died mid-write).
    with open(path, "ab") as f:
        f.write(b'{"seq": 15, "kind"')
    # 3: play on, then export; the ack's reply is lost.
    list(play_rounds(t, GAME, 3, 2, seed=50))

    def ack_lost(lines):
        out = real(lines)
        if "export-ack" in lines[0]:
            raise OSError("reply lost")
        return out
    t.commands = ack_lost
    with pytest.raises(OSError):
        ex.export(t, conf.keys, "h1", store)
    t.commands = real
    # 4: a reboot, more rounds, a clean export.
    t2 = reboot(t)
    conf.target = t2
    list(play_rounds(t2, GAME, 3, 1, seed=60))
    res = ex.export(t2, conf.keys, "h1", store)
    last = t2.app.ctl.journal.last_seq
    seqs = [x["seq"] for x in ex.read_store(path)]
    assert seqs == list(range(1, last))  # all but the final ack's own record
    assert res["acked"] == last - 1 == t2.app.ctl.journal.acked


def test_export_stops_before_the_round_in_play(tmp_path):
    t, conf = make(tmp_path)
    list(play_rounds(t, GAME, 3, 1, seed=1))
    t.commands(["wager 1 ante=5", "deal"])
    limit = t.app.ctl.journal.last_seq
    t.commands(["card 2c", "card 3d", "card 4h"])  # the dealer's among them
    res = ex.export(t, conf.keys, "h1", str(tmp_path / "store"))
    assert res["last"] == limit
    assert not any('"card"' in x["payload"] and x["seq"] > limit
                   for x in ex.read_store(res["store"]))


def test_a_full_table_plays_on_when_its_journal_is_exported(tmp_path):
    # Found by the emulated Pico's 200-round Three Card Prime session (2026-12-02): the
    # journal held every segment from the oldest of the last 50 settlements on, and 50
    # seven-seat rounds with every side bet (~8.5 KB of records each) outgrew the 8 x 64
    # KB budget. journal_full came after 54 rounds though the journal was exported every
    # 40, and tilt-clear was refused for good: no export could free a segment. Now the
    # last 10 settlements are held (issue 5's recall minimum), older ones while there is
    # room, and the budget (10 x 64 KB) still keeps the last 50 of this table for recall.
    from pitboss.store.record import RECALL_MAX

    t, conf = make(tmp_path)
    assert conf.configure(GAME, 7)["ok"]
    for i, r in enumerate(play_rounds(t, GAME, 7, 130, seed=5)):
        assert r["ok"] and not status(t)["tilts"], (i + 1, status(t)["tilts"])
        if (i + 1) % 40 == 0:
            ex.export(t, conf.keys, "h1", str(tmp_path / "store"))
    j = t.app.ctl.journal
    assert j.first_seq > 1 and len(j.segments) == 10  # rotated on, within the budget
    assert len(recall(t, RECALL_MAX)) == RECALL_MAX


def test_journal_keeps_unacknowledged_segments_and_tilts_journal_full(tmp_path):
    from pitboss.controller import Controller
    from host_tools.table.auth import auth_line
    from pitboss.store import auth as fw_auth
    key = bytes(range(1, 33))
    root = str(tmp_path / "c")
    ctl = Controller(root, clock=lambda: 1000, rng=lambda n: 0, segment_size=13000,
                     keep=3)
    fw_auth.provision(key, root + "/auth")
    ctl.boot()
    n = [0]

    def signed(cmd):
        n[0] += 1
        return ctl.command(auth_line(key, n[0], cmd))
    assert signed('config {"game":"%s","seats":3}' % GAME)["ok"]
    i = 0
    while not ctl.halted():
        i += 1
        for ln in ("wager 1 ante=%d" % i, "wager 2 ante=5", "newround"):
            ctl.command(ln)
        assert i < 2000
    assert [a["code"] for a in ctl.active_tilts()] == ["journal_full"]
    assert len(ctl.journal.segments) == 3 and ctl.journal.first_seq == 1  # none deleted
    assert signed("tilt-clear op1")["error"]["code"] == "journal_full"

    class Direct:
        def commands(self, lines):
            return [ctl.command(ln) for ln in lines]

    class Keys:
        def load_key(self, board):
            return key

        def sign(self, board, cmd, board_last=0):
            n[0] += 1
            return auth_line(key, n[0], cmd)
    res = ex.export(Direct(), Keys(), "c", str(tmp_path / "store"))
    # (after it: the ack's auth_ok and the journal_full clear it logged)
    assert res["acked"] == ctl.journal.last_seq - 2 and ctl.active_tilts() == []
    assert ctl.command("wager 1 ante=5")["ok"]
    j = 0
    while ctl.journal.first_seq == 1:  # play on: acknowledged segments go as new ones start
        j += 1
        assert ctl.command("wager 1 ante=%d" % j)["ok"] and j < 1000
    assert len(ctl.journal.segments) == 3 and not ctl.halted()


def test_a_hand_edited_or_damaged_store_line_is_reported_not_trusted(tmp_path):
    # Issue 29 item 6: `{"seq": 5}` appended by hand made the next export write records
    # 6..N a second time. The resume point is the highest seq whose record verifies
    # (CRC and MAC under the board's key); any other line is reported, never trusted.
    t, conf = make(tmp_path)
    list(play_rounds(t, GAME, 3, 3, seed=1))
    store = str(tmp_path / "store")
    path = ex.store_path(store, "h1")
    first = ex.export(t, conf.keys, "h1", store)
    assert first["damaged"] == []
    good = ex.read_store(path)
    forged = dict(good[2], payload=good[2]["payload"].replace("ev", "EV"))
    with open(path, "a") as f:
        f.write('{"seq": 5}\n')
        f.write("not json at all\n")
        f.write(json.dumps(dict(forged, seq=first["last"] + 40)) + "\n")
    list(play_rounds(t, GAME, 3, 1, seed=9))
    res = ex.export(t, conf.keys, "h1", store)
    n = len(good)
    assert res["damaged"] == [n + 1, n + 2, n + 3]  # line numbers in the store
    assert res["first"] == first["last"] + 1  # resumed after the last verified record
    recs = [x for x in ex.read_store_lines(path) if isinstance(x, dict) and "mac" in x]
    seqs = [x["seq"] for x in recs if ex.verifies(x, conf.keys.load_key("h1"))]
    assert seqs == list(range(1, res["last"] + 1))  # each record once, none missing
