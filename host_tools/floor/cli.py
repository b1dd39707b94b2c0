"""`pitboss collect` and `pitboss floor summary|tables|round|tilts|anomalies|csv`.

Every command prints JSON with --json, else aligned text; errors are one line on stderr
and exit 2 (bad input: fix the command), 3 when the database cannot be reached.
"""
import os
import sys
import time

from host_tools.output import emit

EXIT_USAGE = 2
EXIT_DB = 3


def _db_default():
    return os.environ.get("PITBOSS_FLOOR_DB") or "floor.sqlite"


def _fail(msg, code=EXIT_USAGE):
    from host_tools.output import say_failed
    return say_failed(msg, code)


def cmd_collect(args):
    from host_tools.floor import collector, config
    try:
        tables = [config.parse_table_arg(t) for t in args.table or ()]
        conf = config.load(args.config, tables=tables, db=args.db, keys=args.keys,
                           http=("" if args.no_http else args.http), poll=args.poll,
                           shifts=_shifts(args.shifts))
    except config.ConfigError as e:
        return _fail(e)
    if not conf.tables:
        return _fail("no tables to follow: --table ID=PORT, or [[table]] in --config")
    if conf.http:
        # A wheel installed without its [floor] extra has no ASGI stack: say so before
        # following any table, not as a silent missing pit view.
        try:
            import starlette  # noqa: F401
            import uvicorn  # noqa: F401
        except ImportError as e:
            return _fail("the pit view needs %s: pip install 'pitboss[floor]' "
                         "(or --no-http to collect without it)" % e.name)
    from host_tools.floor.backends import DatabaseError
    try:
        collector.run(conf, seconds=args.seconds)
    except DatabaseError as e:
        return _fail(e, EXIT_DB)
    return 0


def _shifts(text):
    if not text:
        return None
    try:
        return [int(h) for h in text.split(",")]
    except ValueError:
        from host_tools.floor.config import ConfigError
        raise ConfigError("--shifts takes start hours, e.g. 6,14,22")


def _open(args):
    from host_tools.floor.backends import DatabaseError
    from host_tools.floor.store import Store
    url = args.db or _db_default()
    if "://" not in url and not os.path.exists(url):
        # a question never makes a database: the path is wrong, or no collector ran
        raise DatabaseError("no floor database %s (pitboss collect --db %s makes it)"
                            % (url, url))
    return Store(url)


def _has_schema(st):
    try:
        st.db.query("SELECT max(version) FROM schema_migrations")
        return True
    except Exception:  # noqa: BLE001  (either database's "no such table")
        return False


def _period(args, hours):
    """[start, end) from --shift (current, previous, or 'YYYY-MM-DD HH:MM'), --date
    (a whole UTC day) or --since/--hours; default: the current shift."""
    from host_tools.floor import queries as q
    now = time.time()
    if getattr(args, "date", None):
        try:
            d = time.strptime(args.date, "%Y-%m-%d")
        except ValueError:
            raise ValueError("--date takes YYYY-MM-DD")
        import calendar
        s = float(calendar.timegm(d))
        return s, s + q.DAY
    if getattr(args, "hours", None):
        return now - args.hours * 3600, now + 1
    which = getattr(args, "shift", None) or "current"
    if which in ("current", "previous"):
        label, s, e = q.current_shift(hours, now)
        if which == "previous":
            label, s, e = [x for x in q.shifts_between(s - 1, s, hours)][-1]
        return s, e
    for label, s, e in q.shifts_between(now - 60 * q.DAY, now + q.DAY, hours):
        if label == which:
            return s, e
    raise ValueError("--shift takes current, previous or 'YYYY-MM-DD HH:MM' (a shift's "
                     "start within the last 60 days)")


def _hours(args):
    from host_tools.floor.config import DEFAULT_SHIFTS
    return tuple(_shifts(args.shifts) or DEFAULT_SHIFTS)


def _floor(fn):
    """Open the store, run fn(args, store), map errors to exit codes."""
    def run(args):
        from host_tools.floor.backends import DatabaseError
        from host_tools.floor.config import ConfigError
        try:
            st = _open(args)
        except DatabaseError as e:
            return _fail(e, EXIT_DB)
        try:
            if not _has_schema(st):
                return _fail("%s holds no floor yet: run `pitboss collect --db ...` first"
                             % (args.db or _db_default()), EXIT_DB)
            return fn(args, st)
        except (ValueError, ConfigError) as e:
            return _fail(e)
        finally:
            st.close()
    return run


def _print_rows(rows, cols):
    widths = [max([len(c)] + [len(_fmt(r.get(c))) for r in rows]) for c in cols]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for r in rows:
        print("  ".join(_fmt(r.get(c)).ljust(w) for c, w in zip(cols, widths)))


def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.2f" % v
    return str(v)


@_floor
def cmd_summary(args, st):
    from host_tools.floor import queries as q
    s, e = _period(args, _hours(args))
    rows = q.summary(st, s, e, _hours(args), board=args.board)
    tot = q.totals(rows)
    if args.json:
        emit({"from": q.iso(s), "to": q.iso(e), "rows": rows, "totals": tot})
        return 0
    print("floor summary %s .. %s (UTC)" % (q.iso(s), q.iso(e)))
    _print_rows(rows + [dict(tot, shift="total", board="")],
                ("shift", "board", "rounds", "drop", "paid", "hold", "voids", "tilts"))
    return 0


@_floor
def cmd_tables(args, st):
    from host_tools.floor import queries as q
    rows = q.tables(st)
    if args.json:
        emit(rows)
        return 0
    for r in rows:
        lr = r["last_round"]
        r["last"] = ("-" if lr is None else "#%d %s%+d" % (
            lr["round"], "void " if lr["void"] else "", lr["house_net"]))
    _print_rows(rows, ("board", "game", "round", "state", "tilts", "last", "wagered",
                       "hold", "anomalies"))
    return 0


@_floor
def cmd_round(args, st):
    from host_tools.floor import queries as q
    from host_tools.table.rounds import describe_round
    r = q.round_detail(st, args.board, args.number)
    if r is None:
        return _fail("the floor holds no round %d of %s" % (args.number, args.board), 1)
    if args.json:
        emit(r)
        return 0
    print("%s round %d  journal seq %d  %s" % (r["board"], r["round"], r["seq"],
                                              q.iso(r["at"])))
    if r["void"]:
        print("  voided (%s): every wager returned" % r["void"])
    else:
        print("\n".join(describe_round(r["result"])[1:]))
    print("  drop %d  paid %d" % (r["wagered"], r["paid"]))
    return 0


@_floor
def cmd_tilts(args, st):
    from host_tools.floor import queries as q
    s, e = _period(args, _hours(args)) if (args.shift or args.date or args.hours) \
        else (None, None)
    rows = q.tilts(st, s, e, board=args.board)
    if args.json:
        emit(rows)
        return 0
    for r in rows:
        r["time"] = q.iso(r["at"])
    _print_rows(rows, ("time", "board", "action", "code", "operator", "seq"))
    return 0


@_floor
def cmd_anomalies(args, st):
    from host_tools.floor import queries as q
    rows = q.anomalies(st, board=args.board)
    if args.json:
        emit(rows)
        return 0
    for r in rows:
        r["last"] = q.iso(r["last_seen"])
    _print_rows(rows, ("last", "board", "kind", "seq_from", "seq_to", "count", "detail"))
    return 0 if not rows else 1


@_floor
def cmd_csv(args, st):
    from host_tools.floor import queries as q
    s, e = _period(args, _hours(args))
    out = open(args.out, "w", newline="") if args.out else sys.stdout
    try:
        if args.what == "rounds":
            q.write_rounds_csv(st, out, s, e, board=args.board)
        else:
            q.write_summary_csv(q.summary(st, s, e, _hours(args), board=args.board), out)
    finally:
        if args.out:
            out.close()
    return 0


def _with_board(a):
    a.board = a.board_id
    return a


def cmd_round_of_board(a):
    """`pitboss floor round BOARD N`: the positional BOARD is the one table asked about."""
    return cmd_round(_with_board(a))
