-- What the grid shows, kept as rounds are stored instead of summed from `rounds` at
-- every redraw: at 1,000 tables and a shift's rounds the grid's query took 1.0 s on
-- SQLite (host_tools.floor.bench --database), for every page and every event.
-- Each table's last round on its row:
ALTER TABLE boards ADD COLUMN last_seq BIGINT;
ALTER TABLE boards ADD COLUMN last_round BIGINT;
ALTER TABLE boards ADD COLUMN last_game TEXT;
ALTER TABLE boards ADD COLUMN last_net BIGINT;
ALTER TABLE boards ADD COLUMN last_at DOUBLE PRECISION;
ALTER TABLE boards ADD COLUMN last_void TEXT;

-- Each table's rounds a UTC day (day: Unix days), added to in the transaction that
-- stores the round.
CREATE TABLE board_days (
    board       TEXT NOT NULL,
    day         BIGINT NOT NULL,
    rounds      BIGINT NOT NULL DEFAULT 0,   -- settled (voids not counted)
    voids       BIGINT NOT NULL DEFAULT 0,
    wagered     BIGINT NOT NULL DEFAULT 0,
    paid        BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (board, day)
);

-- What was stored before this migration.
INSERT INTO board_days (board, day, rounds, voids, wagered, paid)
    SELECT board, CAST(at AS BIGINT) / 86400,
           sum(CASE WHEN void IS NULL THEN 1 ELSE 0 END),
           sum(CASE WHEN void IS NULL THEN 0 ELSE 1 END), sum(wagered), sum(paid)
    FROM rounds GROUP BY board, CAST(at AS BIGINT) / 86400;
UPDATE boards SET last_seq = (SELECT max(seq) FROM rounds r WHERE r.board = boards.board);
UPDATE boards SET
    last_round = (SELECT round FROM rounds r WHERE r.board = boards.board AND r.seq = boards.last_seq),
    last_game = (SELECT game FROM rounds r WHERE r.board = boards.board AND r.seq = boards.last_seq),
    last_net = (SELECT house_net FROM rounds r WHERE r.board = boards.board AND r.seq = boards.last_seq),
    last_at = (SELECT at FROM rounds r WHERE r.board = boards.board AND r.seq = boards.last_seq),
    last_void = (SELECT void FROM rounds r WHERE r.board = boards.board AND r.seq = boards.last_seq);
