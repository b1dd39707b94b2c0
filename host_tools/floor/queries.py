"""The queries a pit needs, on either database (the same SQL): per table and per shift
the rounds, drop (wagered), paid, hold % and voids, the tilts with their times and
operator, any round recalled with its cards and settlement, and CSV of each.

Shifts start at the configured hours (UTC, default 06:00, 14:00, 22:00: three of 8 h);
a shift is named by the date it starts on and its start time ("2026-12-03 06:00").
"""
import calendar
import csv
import json
import time

STATE_OF_PHASE = {"configured": "open", "wagers": "open", "unconfigured": "open",
                  "dealing": "dealing", "setting": "dealing", "deciding": "dealing",
                  "ready": "dealing", "settled": "settled"}
DAY = 86400


def hold(wagered, paid):
    """Hold %: what the house kept of the drop (None without a drop)."""
    if not wagered:
        return None
    wagered, paid = int(wagered), int(paid or 0)  # PostgreSQL's sum() is a numeric
    return round(100.0 * (wagered - paid) / wagered, 2)


def day_start(t):
    return float(calendar.timegm(time.gmtime(t)[:3] + (0, 0, 0)))


def shifts_between(start, end, hours):
    """[(label, shift start, shift end)] of every shift overlapping [start, end)."""
    out = []
    day = day_start(start) - DAY  # the last shift of the day before runs into this one
    while day < end:
        for i, h in enumerate(hours):
            s = day + h * 3600
            e = day + (hours[i + 1] * 3600 if i + 1 < len(hours) else DAY + hours[0] * 3600)
            if e > start and s < end:
                out.append((time.strftime("%Y-%m-%d %H:%M", time.gmtime(s)), s, e))
        day += DAY
    return out


def current_shift(hours, now=None):
    now = time.time() if now is None else now
    return [s for s in shifts_between(now, now + 1, hours)][-1]


def state_of(row):
    """The grid's state of a table: offline, tilted, else its phase's (open, dealing,
    settled)."""
    if not row["online"]:
        return "offline"
    if row["tilts"]:
        return "tilted"
    return STATE_OF_PHASE.get(row["phase"] or "", row["phase"] or "open")


def tables(store, now=None):
    """One row a table for the grid: game, round, state, last settlement, today's drop
    and hold (UTC day), the refusals and gaps found (anomalies). Read from the tables'
    own rows (migrations/0002_grid.sql), not summed from the rounds: a redraw costs the
    same however many rounds the floor holds."""
    now = time.time() if now is None else now
    rows = store.db.query(
        "SELECT b.board, b.port, b.game, b.round, b.phase, b.tilts, b.online, b.last_seen, "
        "b.last_error, b.acked, b.last_round, b.last_net, b.last_at, b.last_void, "
        "b.last_game, d.rounds, d.wagered, d.paid, "
        "(SELECT count(*) FROM anomalies a WHERE a.board = b.board) "
        "FROM boards b LEFT JOIN board_days d ON d.board = b.board AND d.day = ? "
        "ORDER BY b.board", (int(now) // DAY,))
    out = []
    for r in rows:
        d = dict(zip(("board", "port", "game", "round", "phase", "tilts", "online",
                      "last_seen", "last_error", "acked"), r[:10]))
        d["state"] = state_of(d)
        d["last_round"] = None if r[10] is None else {
            "round": r[10], "house_net": r[11], "at": r[12], "void": r[13], "game": r[14]}
        d["rounds_today"] = int(r[15] or 0)
        d["wagered"] = int(r[16] or 0)
        d["paid"] = int(r[17] or 0)
        d["hold"] = hold(d["wagered"], d["paid"])
        d["anomalies"] = int(r[18])
        out.append(d)
    return out


def shift_of(t, hours):
    """(label, start) of the shift that time `t` falls in."""
    day = day_start(t)
    h = (t - day) / 3600.0
    starts = [x for x in hours if x <= h]
    if starts:
        s = day + starts[-1] * 3600
    else:  # before the first start: the day before's last shift
        s = day - DAY + hours[-1] * 3600
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(s)), s


def summary(store, start, end, hours, board=None):
    """Per table and shift within [start, end): rounds, drop, paid, hold %, tilts, voids.
    Summed in the database by the hour (shifts start on whole hours), then by shift
    here: one query however long the period, a row per table and hour at most."""
    cond, args = "", (start, end)
    if board:
        cond, args = " AND board = ?", args + (board,)
    per = {}

    def row(b, hour):
        label, s = shift_of(hour * 3600.0, hours)
        return per.setdefault((s, b), {"shift": label, "board": b, "rounds": 0, "drop": 0,
                                       "paid": 0, "hold": None, "voids": 0, "tilts": 0})
    for b, hour, n, wagered, paid, voids in store.db.query(
            "SELECT board, CAST(at AS BIGINT) / 3600, count(*), sum(wagered), sum(paid), "
            "sum(CASE WHEN void IS NULL THEN 0 ELSE 1 END) FROM rounds "
            "WHERE at >= ? AND at < ?%s GROUP BY board, CAST(at AS BIGINT) / 3600"
            % cond, args):
        r = row(b, int(hour))
        r["rounds"] += int(n) - int(voids or 0)
        r["voids"] += int(voids or 0)
        r["drop"] += int(wagered or 0)
        r["paid"] += int(paid or 0)
    for b, hour, n in store.db.query(
            "SELECT board, CAST(at AS BIGINT) / 3600, count(*) FROM tilts WHERE action = "
            "'raise' AND at >= ? AND at < ?%s GROUP BY board, CAST(at AS BIGINT) / 3600"
            % cond, args):
        row(b, int(hour))["tilts"] += int(n)
    out = [per[k] for k in sorted(per)]
    for r in out:
        r["hold"] = hold(r["drop"], r["paid"])
    return out


def totals(rows):
    t = {"rounds": 0, "drop": 0, "paid": 0, "voids": 0, "tilts": 0}
    for r in rows:
        for k in t:
            t[k] += r[k]
    t["hold"] = hold(t["drop"], t["paid"])
    return t


def recent_rounds(store, board, n=20):
    return [_round_row(r) for r in store.db.query(
        "SELECT board, round, seq, game, at, wagered, paid, house_net, void, seats FROM "
        "rounds WHERE board = ? ORDER BY seq DESC LIMIT ?", (board, n))]


def _round_row(r):
    return dict(zip(("board", "round", "seq", "game", "at", "wagered", "paid", "house_net",
                     "void", "seats"), r))


def round_detail(store, board, number):
    """A round recalled by table and round number: its settlement with every hand's cards
    (or the void), and the journal records of the round (wagers, deal, cards,
    decisions) in order. None if the floor holds no such round."""
    rows = store.db.query(
        "SELECT board, round, seq, game, at, wagered, paid, house_net, void, seats, result "
        "FROM rounds WHERE board = ? AND round = ? ORDER BY seq", (board, number))
    if not rows:
        return None
    r = rows[-1]
    out = _round_row(r[:10])
    out["result"] = json.loads(r[10])
    # The round's own records: after the previous round's end (or configuration) up to
    # its settlement.
    prev = store.db.query(
        "SELECT max(seq) FROM records WHERE board = ? AND seq < ? AND ev IN "
        "('settle', 'void', 'config', 'new')", (board, out["seq"]))[0][0] or 0
    out["events"] = [dict(json.loads(p), seq=s) for s, p in store.db.query(
        "SELECT seq, payload FROM records WHERE board = ? AND seq > ? AND seq <= ? AND "
        "kind = 'R' AND ev IN ('new', 'wager', 'deal', 'card', 'hw', 'set', 'decide', "
        "'lost', 'settle', 'void') ORDER BY seq", (board, prev, out["seq"]))]
    return out


def tilts(store, start=None, end=None, board=None):
    cond, args = [], []
    if start is not None:
        cond.append("at >= ?")
        args.append(start)
    if end is not None:
        cond.append("at < ?")
        args.append(end)
    if board:
        cond.append("board = ?")
        args.append(board)
    where = (" WHERE " + " AND ".join(cond)) if cond else ""
    return [dict(zip(("board", "seq", "code", "action", "operator", "at"), r))
            for r in store.db.query("SELECT board, seq, code, action, operator, at FROM "
                                    "tilts%s ORDER BY at, board, seq" % where, tuple(args))]


def anomalies(store, board=None):
    where, args = ("WHERE board = ? ", (board,)) if board else ("", ())
    return [dict(zip(("board", "kind", "seq_from", "seq_to", "detail", "first_seen",
                      "last_seen", "count"), r))
            for r in store.db.query("SELECT board, kind, seq_from, seq_to, detail, "
                                    "first_seen, last_seen, count FROM anomalies %s"
                                    "ORDER BY last_seen DESC" % where, args)]


ROUND_COLUMNS = ("board", "round", "seq", "game", "time", "wagered", "paid", "house_net",
                 "void", "seats")


def write_rounds_csv(store, out, start, end, board=None):
    """Every round in [start, end) as CSV (one line a round, times in UTC ISO 8601)."""
    w = csv.writer(out)
    w.writerow(ROUND_COLUMNS)
    cond, args = "", (start, end)
    if board:
        cond, args = " AND board = ?", args + (board,)
    n = 0
    for r in store.db.query(
            "SELECT board, round, seq, game, at, wagered, paid, house_net, void, seats FROM "
            "rounds WHERE at >= ? AND at < ?%s ORDER BY board, seq" % cond, args):
        r = list(r)
        r[4] = iso(r[4])
        w.writerow(["" if v is None else v for v in r])
        n += 1
    return n


def write_summary_csv(rows, out):
    w = csv.writer(out)
    cols = ("shift", "board", "rounds", "drop", "paid", "hold", "voids", "tilts")
    w.writerow(cols)
    for r in rows:
        w.writerow(["" if r[c] is None else r[c] for c in cols])


def iso(t):
    return None if t is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
