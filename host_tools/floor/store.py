"""Every write the floor makes, in transactions, and the schema's migrations.

The schema is the numbered SQL files in migrations/ (the same SQL on SQLite and
PostgreSQL); `migrate()` applies those not yet applied, each in one transaction with its
row in schema_migrations, so a collector killed halfway leaves the schema as it was.

Exactly once: a record is keyed by (board, seq) and inserted with ON CONFLICT DO
NOTHING; what it adds (a round, a tilt) is inserted in the same transaction and only when
the record itself was new, so a record sent twice (a collector killed between its commit
and the acknowledgement, a board asked again) is stored once with everything it adds.
"""
import os
import re
import time

from host_tools.floor import ingest
from host_tools.floor.backends import open_backend

MIGRATIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "migrations")
_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


def migrations():
    """[(version, name, [statement, ...])] in order."""
    out = []
    for name in sorted(os.listdir(MIGRATIONS)):
        m = _FILE.match(name)
        if not m:
            continue
        with open(os.path.join(MIGRATIONS, name)) as f:
            text = f.read()
        out.append((int(m.group(1)), m.group(2), split_sql(text)))
    return out


def split_sql(text):
    """The statements of a migration file: `;` ends one; `--` comments dropped."""
    lines = [ln.split("--", 1)[0] for ln in text.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


class Store:
    def __init__(self, url):
        self.backend = open_backend(url)
        self.dialect = self.backend.dialect
        self.db = self.backend.connect()

    def close(self):
        self.db.close()

    # ---- schema ------------------------------------------------------------------------
    def migrate(self):
        """Apply every migration not yet applied; returns the versions applied now."""
        done = []
        with self.db.migration_lock() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER "
                       "PRIMARY KEY, name TEXT NOT NULL, applied DOUBLE PRECISION NOT NULL)")
            have = {r[0] for r in db.query("SELECT version FROM schema_migrations")}
            for version, name, statements in migrations():
                if version in have:
                    continue
                db.script(statements)
                db.execute("INSERT INTO schema_migrations (version, name, applied) "
                           "VALUES (?, ?, ?)", (version, name, time.time()))
                done.append(version)
        return done

    def schema_version(self):
        rows = self.db.query("SELECT max(version) FROM schema_migrations")
        return rows[0][0] or 0

    # ---- the tables followed ---------------------------------------------------------
    def register(self, board, port):
        with self.db.transaction() as db:
            db.execute("INSERT INTO boards (board, port, updated) VALUES (?, ?, ?) "
                       "ON CONFLICT (board) DO UPDATE SET port = excluded.port",
                       (board, port, time.time()))

    def set_state(self, board, **fields):
        """The live state: online, last_error, game, round, phase, tilts, last_seen."""
        if not fields:
            return
        fields["updated"] = time.time()
        names = sorted(fields)
        self.db.execute("UPDATE boards SET %s WHERE board = ?"
                        % ", ".join("%s = ?" % n for n in names),
                        tuple(fields[n] for n in names) + (board,))

    def set_acked(self, board, seq):
        self.db.execute("UPDATE boards SET acked = ? WHERE board = ? AND acked < ?",
                        (seq, board, seq))

    def last_seq(self, board):
        return self.db.query("SELECT max(seq) FROM records WHERE board = ?",
                             (board,))[0][0] or 0

    def stored_record(self, board, seq):
        rows = self.db.query("SELECT kind, crc, mac, payload FROM records WHERE board = ? "
                             "AND seq = ?", (board, seq))
        return rows[0] if rows else None

    # ---- records -----------------------------------------------------------------------
    def ingest(self, board, records, gap=None):
        """Store verified records (host_tools.floor.records.Record) and what they add,
        in one transaction; `gap` (from, to, detail): records the board no longer has,
        flagged in the same transaction. Returns how many records were new."""
        now = time.time()
        new = 0
        with self.db.transaction() as db:
            if gap is not None:
                _anomaly(db, board, "gap", gap[0], gap[1], gap[2], now)
            for r in records:
                at = ingest.record_time(r.event, now)
                cur = db.execute(
                    "INSERT INTO records (board, seq, kind, crc, mac, payload, ev, at, "
                    "stored) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (board, seq) DO NOTHING",
                    (board, r.seq, r.kind, r.crc, r.mac, r.payload,
                     r.event.get("ev") if r.event else None, at, now))
                if cur.rowcount != 1:
                    continue  # stored before: so is everything it adds
                new += 1
                if r.event is not None:
                    ingest.derive(db, board, r.seq, r.event, at, now)
        return new

    def anomaly(self, board, kind, seq_from, seq_to, detail):
        with self.db.transaction() as db:
            _anomaly(db, board, kind, seq_from, seq_to, detail, time.time())


def _anomaly(db, board, kind, seq_from, seq_to, detail, now):
    # The same problem found again (a forged record the board keeps sending, asked for
    # at every poll) is one row with a count, not a row per poll.
    seq_from = -1 if seq_from is None else seq_from
    seq_to = seq_from if seq_to is None else seq_to
    db.execute("INSERT INTO anomalies (board, kind, seq_from, seq_to, detail, first_seen, "
               "last_seen, count) VALUES (?, ?, ?, ?, ?, ?, ?, 1) "
               "ON CONFLICT (board, kind, seq_from) DO UPDATE SET "
               "last_seen = excluded.last_seen, count = anomalies.count + 1, "
               "detail = excluded.detail, seq_to = excluded.seq_to",
               (board, kind, seq_from, seq_to, (detail or "")[:500], now, now))
