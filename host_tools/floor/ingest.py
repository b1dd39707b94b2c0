"""What a stored journal record adds to the floor's tables (docs/journal.md says what the
firmware journals): a settlement or a void is a round, a tilt or its clear is a tilt
row, a configuration names the table's game. Called inside the transaction that stores
the record, so each is added exactly once with it.
"""
import json

# A board whose clock no host has set counts seconds from its power-on: a time before
# this is not a wall time, and the collector's own time stands in for it.
WALL_TIME_MIN = 1577836800  # 2020-01-01 UTC, the firmware's CLOCK_MIN


def record_time(event, now):
    t = event.get("t") if event else None
    if isinstance(t, (int, float)) and not isinstance(t, bool) and t >= WALL_TIME_MIN:
        return float(t)
    return now


def derive(db, board, seq, ev, at, now):
    kind = ev.get("ev")
    if kind == "settle":
        _round(db, board, seq, ev, at, now, void=None)
    elif kind == "void":
        _round(db, board, seq, ev, at, now, void=str(ev.get("why") or
                                                     ev.get("result", {}).get("void")))
    elif kind == "tilt":
        db.execute("INSERT INTO tilts (board, seq, code, action, operator, at) VALUES "
                   "(?, ?, ?, 'raise', NULL, ?) ON CONFLICT DO NOTHING",
                   (board, seq, str(ev.get("code")), at))
    elif kind == "tilt_clear":
        for code in ev.get("codes") or ():
            db.execute("INSERT INTO tilts (board, seq, code, action, operator, at) VALUES "
                       "(?, ?, ?, 'clear', ?, ?) ON CONFLICT DO NOTHING",
                       (board, seq, str(code), str(ev.get("op")), at))
    elif kind == "config":
        cfg = ev.get("cfg") or {}
        db.execute("UPDATE boards SET game = ?, seats = ? WHERE board = ?",
                   (cfg.get("game"), cfg.get("seats"), board))


def _round(db, board, seq, ev, at, now, void):
    result = ev.get("result") or {}
    wagered = paid = 0
    if void is None:
        # Each line is (wager type, wagered, paid back): the meters' own lines
        # (pitboss.store.meters.lines_from_result), so the floor's drop is the board's.
        for line in ev.get("lines") or ():
            wagered += int(line[1])
            paid += int(line[2])
    number = int(ev.get("round") or result.get("round") or 0)
    game = str(ev.get("game") or result.get("game"))
    net = int(result.get("house_net") or 0)
    cur = db.execute(
        "INSERT INTO rounds (board, seq, round, game, at, wagered, paid, house_net, void, "
        "seats, result, stored) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        (board, seq, number, game, at, wagered, paid, net, void,
         len(result.get("seats") or ()), json.dumps(result, separators=(",", ":")), now))
    if cur.rowcount != 1:
        return
    # The grid's own rows (migrations/0002_grid.sql): the day's sums and the last round.
    settled = 0 if void else 1
    db.execute("INSERT INTO board_days (board, day, rounds, voids, wagered, paid) VALUES "
               "(?, ?, ?, ?, ?, ?) ON CONFLICT (board, day) DO UPDATE SET "
               "rounds = board_days.rounds + excluded.rounds, "
               "voids = board_days.voids + excluded.voids, "
               "wagered = board_days.wagered + excluded.wagered, "
               "paid = board_days.paid + excluded.paid",
               (board, int(at) // 86400, settled, 1 - settled, wagered, paid))
    db.execute("UPDATE boards SET last_seq = ?, last_round = ?, last_game = ?, last_net = ?, "
               "last_at = ?, last_void = ? WHERE board = ? AND (last_seq IS NULL OR "
               "last_seq < ?)", (seq, number, game, net, at, void, board, seq))
