"""The floor's two databases behind one interface: SQLite (the default: the standard
library, one file, WAL) and PostgreSQL (psycopg 3, one server for a whole floor).

A backend gives connections; a connection runs SQL written with `?` placeholders (the
store's one dialect: SQLite's; PostgreSQL's %s is put in here), in autocommit unless
inside `transaction()`, which commits on leaving or rolls back on an exception.
"""
import contextlib
import os
import sqlite3


class DatabaseError(RuntimeError):
    """The database cannot be opened or used: the message names it and the fix."""


def open_backend(url):
    """A Backend for `url`: postgresql://... (or postgres://) is PostgreSQL; anything
    else is an SQLite file path (sqlite:///path also)."""
    if url.startswith(("postgresql://", "postgres://")):
        return PostgresBackend(url)
    if url.startswith("sqlite:///"):
        url = url[len("sqlite://"):]
    return SQLiteBackend(url)


class SQLiteBackend:
    dialect = "sqlite"

    def __init__(self, path):
        self.path = os.path.expanduser(path)
        self.url = self.path

    def connect(self):
        folder = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(folder):
            raise DatabaseError("no folder %s for the database %s" % (folder, self.path))
        try:
            c = sqlite3.connect(self.path, isolation_level=None, timeout=30,
                                check_same_thread=False)
            # WAL: the pit view reads while the collector writes. FULL: a commit is on
            # disk before the collector acknowledges the records to the board, so a power
            # cut of the collector's host cannot lose what a board may then delete.
            c.execute("PRAGMA journal_mode=WAL")
            c.execute("PRAGMA synchronous=FULL")
            c.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as e:
            raise DatabaseError("cannot open the SQLite database %s: %s" % (self.path, e))
        return SQLiteConnection(c)


class SQLiteConnection:
    IntegrityError = sqlite3.IntegrityError
    Error = sqlite3.Error

    def __init__(self, c):
        self.c = c

    def execute(self, sql, params=()):
        return self.c.execute(sql, params)

    def executemany(self, sql, rows):
        self.c.executemany(sql, rows)

    def query(self, sql, params=()):
        return self.c.execute(sql, params).fetchall()

    def script(self, statements):
        for s in statements:
            self.c.execute(s)

    @contextlib.contextmanager
    def transaction(self):
        # IMMEDIATE: the write lock is taken at the start, so two writers queue instead
        # of one failing at its commit.
        self.c.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self.c.execute("ROLLBACK")
            raise
        self.c.execute("COMMIT")

    @contextlib.contextmanager
    def migration_lock(self):
        with self.transaction():
            yield self

    def close(self):
        self.c.close()


class PostgresBackend:
    dialect = "postgresql"

    def __init__(self, url):
        self.url = url

    def connect(self):
        try:
            import psycopg
        except ImportError:
            import host_tools
            # The fix for where pitboss runs from: a wheel has its [floor] extra, a
            # checkout its pinned requirements (the same versions).
            how = ("pip install 'pitboss[floor]'" if host_tools.INSTALLED
                   else "python -m pip install -r requirements.txt")
            raise DatabaseError("PostgreSQL needs psycopg 3: " + how)
        try:
            c = psycopg.connect(self.url, autocommit=True)
        except psycopg.Error as e:
            raise DatabaseError("cannot connect to %s: %s" % (_safe(self.url),
                                                               str(e).strip().splitlines()[0]))
        return PostgresConnection(c, psycopg)


def _safe(url):
    """The URL without a password, for messages."""
    head, at, tail = url.rpartition("@")
    if not at:
        return url
    scheme, _, cred = head.partition("://")
    return "%s://%s@%s" % (scheme, cred.split(":")[0], tail)


class PostgresConnection:
    def __init__(self, c, psycopg):
        self.c = c
        self.IntegrityError = psycopg.IntegrityError
        self.Error = psycopg.Error

    @staticmethod
    def _sql(sql):
        return sql.replace("?", "%s")

    def execute(self, sql, params=()):
        return self.c.execute(self._sql(sql), params)

    def executemany(self, sql, rows):
        with self.c.cursor() as cur:
            cur.executemany(self._sql(sql), rows)

    def query(self, sql, params=()):
        return self.c.execute(self._sql(sql), params).fetchall()

    def script(self, statements):
        for s in statements:
            self.c.execute(s)

    @contextlib.contextmanager
    def transaction(self):
        with self.c.transaction():
            yield self

    @contextlib.contextmanager
    def migration_lock(self):
        # Two collectors starting at once against one server: one migrates, the other
        # waits, then finds nothing left to do.
        with self.c.transaction():
            self.c.execute("SELECT pg_advisory_xact_lock(31031031)")
            yield self

    def close(self):
        self.c.close()
