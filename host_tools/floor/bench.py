"""The floor's figures (docs/floor.md).

    python -m host_tools.floor.bench --scale [--tables 50] [--rounds 10] [--db URL]
        fifty tables on the floor simulator (the firmware on CPython behind ptys) followed
        by `pitboss collect`: records/s ingested, settlement-to-database lag (p50, p99),
        the collector's resident memory

    python -m host_tools.floor.bench --database [--tables 1000] [--rounds 240] [--db URL]
        the database side of a floor of 1,000 tables: generated, well-formed records (a
        settlement every round, with its wagers, deal and cards) stored through the
        collector's own path (Store.ingest: 50 records a transaction, a table at a time)
        for inserts/s, then the rest of a shift's records loaded in bulk, and the pit's
        queries timed at that volume

With no --db each makes an SQLite file in a temp folder; --db postgresql://... measures
a PostgreSQL server (an empty database: the bench writes into it).
"""
import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time

from host_tools.floor import queries as q


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))] if xs else None


# ---- fifty tables through the collector ---------------------------------------------------
def scale(tables, rounds, db, pace):
    from host_tools.floor import procs as fr  # the tests' floor run: the same processes
    d = tempfile.mkdtemp(prefix="pitboss-floor-scale-")
    db = db or os.path.join(d, "floor.sqlite")
    procs = []
    try:
        half = (tables + 1) // 2
        for prefix, n, first in (("a", half, 1), ("b", tables - half, 1001)):
            if n:
                procs.append(fr.sim(d, prefix, n, first, rounds, pace=pace).start())
        states = [fr.wait_sim(d, p.args[p.args.index("--prefix") + 1]) for p in procs]
        tl = [(t["id"], t["port"]) for s in states for t in s["tables"]]
        fr.write_config(os.path.join(d, "floor.toml"), tl, db, os.path.join(d, "keys"))
        from host_tools.floor.store import Store
        st = Store(db)
        st.migrate()
        t0 = time.time()
        col = fr.collector(os.path.join(d, "floor.toml"), os.path.join(d, "collector.log"))
        col.start()
        procs.append(col)
        rss = []
        while True:
            r = col.rss_kb()
            if r:
                rss.append(r)
            n = st.db.query("SELECT count(*) FROM rounds")[0][0]
            if n >= tables * rounds:
                break
            if time.time() - t0 > 1800:
                raise SystemExit("not every round reached the database in 30 min")
            time.sleep(0.5)
        elapsed = time.time() - t0
        records = st.db.query("SELECT count(*) FROM records")[0][0]
        stored = {(b, r): s for b, r, s in st.db.query("SELECT board, round, stored FROM "
                                                        "rounds")}
        st.close()
        lags = []
        for name in os.listdir(d):
            if name.startswith("settled-"):
                with open(os.path.join(d, name)) as f:
                    for line in f:
                        e = json.loads(line)
                        if (e["board"], e["round"]) in stored:
                            lags.append(stored[(e["board"], e["round"])] - e["at"])
        return {"tables": tables, "rounds": tables * rounds, "records": records,
                "seconds": round(elapsed, 1), "records_per_s": round(records / elapsed),
                "lag_p50_s": round(percentile(lags, 50), 3),
                "lag_p99_s": round(percentile(lags, 99), 3),
                "collector_rss_mb_max": round(max(rss) / 1024.0, 1),
                "db": "postgresql" if "://" in db else "sqlite"}
    finally:
        for p in reversed(procs):
            p.stop()
        shutil.rmtree(d, ignore_errors=True)


# ---- the database side of 1,000 tables ----------------------------------------------------
class Gen:
    """Well-formed records of one table: what a four-seat game journals a round."""

    def __init__(self, board, rng, start_t):
        self.board = board
        self.rng = rng
        self.seq = 0
        self.round = 0
        self.t = start_t

    def round_records(self):
        from host_tools.floor.records import Record
        self.round += 1
        self.t += 120  # a round every two minutes: 30 an hour
        rng = self.rng
        evs = []
        wagers = [rng.randrange(5, 500) for _ in range(4)]
        for s, w in enumerate(wagers, 1):
            evs.append({"ev": "wager", "seat": s, "w": {"ante": w}, "t": self.t})
        evs.append({"ev": "deal", "dice": None, "t": self.t})
        for c in rng.sample(range(52), 20):
            evs.append({"ev": "card", "c": c, "t": self.t})
        paid = [w * rng.choice((0, 0, 1, 2)) for w in wagers]
        result = {"game": "nj-5card", "round": self.round, "house_net": sum(wagers) - sum(paid),
                  "seats": [{"seat": s, "wagers": {"ante": w}, "cards": ["As", "Kd", "7c",
                             "7h", "2s"], "category": "one_pair", "amount": p - w}
                            for s, (w, p) in enumerate(zip(wagers, paid), 1)]}
        evs.append({"ev": "settle", "game": "nj-5card", "round": self.round,
                    "lines": [["ante", w, p] for w, p in zip(wagers, paid)], "t": self.t,
                    "result": result})
        out = []
        for ev in evs:
            self.seq += 1
            out.append(Record(self.seq, "R", 0, "0" * 64,
                              json.dumps(ev, separators=(",", ":")), ev))
        return out


def database(tables, rounds, db, sample_rounds):
    from host_tools.floor.store import Store
    d = None
    if not db:
        d = tempfile.mkdtemp(prefix="pitboss-floor-db-")
        db = os.path.join(d, "floor.sqlite")
    st = Store(db)
    st.migrate()
    rng = random.Random(31)
    t_start = q.current_shift((6, 14, 22))[1]
    gens = [Gen("t%04d" % i, rng, t_start) for i in range(tables)]
    for g in gens:
        st.register(g.board, "/dev/ttyACM%d" % 0)
    # 1) the collector's own path: a table's batch of up to 50 records a transaction
    n = 0
    t0 = time.perf_counter()
    for _ in range(sample_rounds):
        for g in gens:
            recs = g.round_records()
            for i in range(0, len(recs), 50):
                n += st.ingest(g.board, recs[i:i + 50])
    ingest_s = time.perf_counter() - t0
    # 2) the rest of the shift in bulk (the same rows, without the per-record path)
    t1 = time.perf_counter()
    bulk = 0
    now = time.time()
    for _ in range(rounds - sample_rounds):
        rec_rows, round_rows = [], []
        for g in gens:
            for r in g.round_records():
                rec_rows.append((g.board, r.seq, r.kind, r.crc, r.mac, r.payload,
                                 r.event["ev"], float(r.event["t"]), now))
                if r.event["ev"] == "settle":
                    ev = r.event
                    w = sum(x[1] for x in ev["lines"])
                    p = sum(x[2] for x in ev["lines"])
                    round_rows.append((g.board, r.seq, ev["round"], ev["game"],
                                       float(ev["t"]), w, p, ev["result"]["house_net"],
                                       None, 4, json.dumps(ev["result"]), now))
        with st.db.transaction() as tx:
            tx.executemany("INSERT INTO records (board, seq, kind, crc, mac, payload, ev, "
                           "at, stored) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rec_rows)
            tx.executemany("INSERT INTO rounds (board, seq, round, game, at, wagered, paid, "
                           "house_net, void, seats, result, stored) VALUES (?, ?, ?, ?, ?, "
                           "?, ?, ?, ?, ?, ?, ?)", round_rows)
        bulk += len(rec_rows)
    # the grid's rows for what was loaded in bulk: the same statements migration 0002
    # fills them with from `rounds`
    from host_tools.floor.store import migrations
    fill = [x for x in dict((v, st) for v, _, st in migrations())[2]
            if x.startswith(("INSERT", "UPDATE"))]
    with st.db.transaction() as tx:
        tx.execute("DELETE FROM board_days")
        tx.script(fill)
    bulk_s = time.perf_counter() - t1
    st.db.execute("ANALYZE")  # both databases: statistics for the planner
    # 3) the pit's queries at a shift's volume
    times = {}

    def timed(name, fn, *args):
        best = None
        for _ in range(3):
            a = time.perf_counter()
            out = fn(*args)
            dt = time.perf_counter() - a
            best = dt if best is None else min(best, dt)
        times[name] = round(best * 1000, 1)
        return out

    end = gens[0].t + 120
    rows = timed("summary_of_the_shift_ms", q.summary, st, t_start, end, (6, 14, 22))
    assert sum(r["rounds"] for r in rows) == tables * rounds
    timed("grid_of_all_tables_ms", q.tables, st)
    timed("round_recall_ms", q.round_detail, st, gens[tables // 2].board, rounds // 2)
    timed("recent_rounds_of_a_table_ms", q.recent_rounds, st, gens[7].board, 25)
    timed("last_seq_of_a_table_ms", st.last_seq, gens[7].board)
    import io
    timed("csv_of_the_shift_ms", q.write_rounds_csv, st, io.StringIO(), t_start, end)
    total = st.db.query("SELECT count(*) FROM records")[0][0]
    st.close()
    if d:
        size = os.path.getsize(db) + (os.path.getsize(db + "-wal")
                                      if os.path.exists(db + "-wal") else 0)
        shutil.rmtree(d, ignore_errors=True)
    else:
        size = None
    return dict({"db": "postgresql" if "://" in db else "sqlite", "tables": tables,
                 "rounds_per_table": rounds, "records": total,
                 "ingest_records": n, "ingest_per_s": round(n / ingest_s),
                 "bulk_records": bulk, "bulk_per_s": round(bulk / bulk_s) if bulk else None,
                 "db_bytes": size}, **times)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.floor.bench",
                                 description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--scale", action="store_true")
    g.add_argument("--database", action="store_true")
    ap.add_argument("--tables", type=int)
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--sample-rounds", type=int, default=6,
                    help="--database: rounds a table stored through Store.ingest")
    ap.add_argument("--pace", type=float, default=0.05)
    ap.add_argument("--db")
    a = ap.parse_args(argv)
    if a.scale:
        out = scale(a.tables or 50, a.rounds or 10, a.db, a.pace)
    else:
        out = database(a.tables or 1000, a.rounds or 240, a.db,
                       min(a.sample_rounds, a.rounds or 240))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
