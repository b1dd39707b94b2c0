"""The floor's configuration: which tables to follow (a serial port, a kept board's pty,
an emulated Pico's), where their keys are, the database, the shifts and the pit view's
address. From a TOML file (docs/floor.md has an example), overridden by the command line:

    [floor]
    db = "floor.sqlite"            # or "postgresql://user@host/dbname"
    keys = "~/.pitboss/keys"       # the host key store (host_tools.table.auth.KeyStore)
    http = "127.0.0.1:8031"        # the pit view; "" for none
    poll = 0.5                     # seconds between a table's status and export rounds
    shifts = [6, 14, 22]           # shift start hours, UTC (default 3 x 8 h)

    [[table]]
    id = "bj-01"                   # the board id in the key store, and on the floor
    port = "/dev/ttyACM0"
"""
import os
import re
import tomllib

DEFAULT_SHIFTS = (6, 14, 22)
DEFAULT_HTTP = "127.0.0.1:8031"
_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class ConfigError(ValueError):
    """The configuration names something wrong: the message says what and where."""


class Table:
    __slots__ = ("id", "port")

    def __init__(self, id, port):
        if not isinstance(id, str) or not _ID.match(id):
            raise ConfigError("table id %r: 1..64 of letters, digits, _ . -" % (id,))
        if not isinstance(port, str) or not port:
            raise ConfigError("table %s: no port" % id)
        self.id = id
        self.port = port

    def __repr__(self):
        return "Table(%r, %r)" % (self.id, self.port)


class Config:
    def __init__(self, tables=(), db="floor.sqlite", keys=None, http=DEFAULT_HTTP,
                 poll=0.5, shifts=DEFAULT_SHIFTS, backoff_max=30.0):
        self.tables = list(tables)
        self.db = db
        self.keys = keys
        self.http = http
        self.poll = float(poll)
        self.shifts = check_shifts(shifts)
        self.backoff_max = float(backoff_max)
        seen = set()
        for t in self.tables:
            if t.id in seen:
                raise ConfigError("table %s is listed twice" % t.id)
            seen.add(t.id)


def check_shifts(hours):
    hours = list(hours)
    if not hours or any(not isinstance(h, int) or not 0 <= h < 24 for h in hours) \
            or sorted(set(hours)) != hours:
        raise ConfigError("shifts: start hours 0..23 in increasing order, e.g. [6, 14, 22]")
    return tuple(hours)


def parse_table_arg(text):
    """`ID=PORT` from the command line."""
    ident, sep, port = text.partition("=")
    if not sep:
        raise ConfigError("--table takes ID=PORT (e.g. bj-01=/dev/ttyACM0), got %r" % text)
    return Table(ident, port)


def load(path=None, tables=(), db=None, keys=None, http=None, poll=None, shifts=None):
    """The file's configuration (if any), with the command line's values over it."""
    conf = {}
    file_tables = []
    if path:
        try:
            with open(path, "rb") as f:
                doc = tomllib.load(f)
        except FileNotFoundError:
            raise ConfigError("no configuration file %s" % path)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError("%s: %s" % (path, e))
        conf = dict(doc.get("floor", {}))
        unknown = set(conf) - {"db", "keys", "http", "poll", "shifts", "backoff_max"}
        if unknown:
            raise ConfigError("%s: unknown [floor] keys %s" % (path, ", ".join(sorted(unknown))))
        for i, t in enumerate(doc.get("table", [])):
            if not isinstance(t, dict) or set(t) - {"id", "port"}:
                raise ConfigError("%s: [[table]] %d takes id and port" % (path, i + 1))
            tbl = Table(t.get("id"), t.get("port"))
            if any(x.id == tbl.id for x in file_tables):
                raise ConfigError("%s: table %s is listed twice" % (path, tbl.id))
            file_tables.append(tbl)
        base = os.path.dirname(os.path.abspath(path))
        # A relative SQLite file or key folder is beside the configuration file.
        for k in ("db", "keys"):
            v = conf.get(k)
            if isinstance(v, str) and v and "://" not in v and not os.path.isabs(
                    os.path.expanduser(v)):
                conf[k] = os.path.join(base, v)
    byid = {t.id: t for t in file_tables}
    for t in tables:
        byid[t.id] = t  # the command line names a port anew
    for k, v in (("db", db), ("keys", keys), ("http", http), ("poll", poll),
                 ("shifts", shifts)):
        if v is not None:
            conf[k] = v
    if conf.get("keys"):
        conf["keys"] = os.path.expanduser(conf["keys"])
    return Config(list(byid.values()), **conf)
