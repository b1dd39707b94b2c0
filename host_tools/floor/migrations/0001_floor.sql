-- The floor's schema, the same on SQLite and PostgreSQL (docs/floor.md). Applied once,
-- in one transaction, by host_tools.floor.store.migrate; never edited once released:
-- a change is a new numbered file.

-- One row a table: where the collector reaches it and what it last said.
CREATE TABLE boards (
    board       TEXT PRIMARY KEY,
    port        TEXT,
    game        TEXT,
    seats       INTEGER,
    round       BIGINT,
    phase       TEXT,
    tilts       TEXT,              -- the active tilts' codes, comma-separated
    online      INTEGER NOT NULL DEFAULT 0,
    last_seen   DOUBLE PRECISION,  -- collector time of the last answer
    last_error  TEXT,
    acked       BIGINT NOT NULL DEFAULT 0,  -- the last seq the board acknowledged
    updated     DOUBLE PRECISION
);

-- Every journal record exactly as exported and verified: (board, seq) once, ever.
CREATE TABLE records (
    board       TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    kind        TEXT NOT NULL,     -- R event, S snapshot
    crc         BIGINT NOT NULL,
    mac         TEXT NOT NULL,
    payload     TEXT NOT NULL,
    ev          TEXT,
    at          DOUBLE PRECISION NOT NULL,  -- the board's time, else the collector's
    stored      DOUBLE PRECISION NOT NULL,  -- when the transaction that stored it began
    PRIMARY KEY (board, seq)
);

-- Every settled or voided round (from its settle or void record).
CREATE TABLE rounds (
    board       TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    round       BIGINT NOT NULL,
    game        TEXT NOT NULL,
    at          DOUBLE PRECISION NOT NULL,
    wagered     BIGINT NOT NULL,
    paid        BIGINT NOT NULL,
    house_net   BIGINT NOT NULL,
    void        TEXT,              -- the misdeal's code for a voided round
    seats       INTEGER NOT NULL,
    result      TEXT NOT NULL,     -- the settlement as the board journalled it (JSON)
    stored      DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (board, seq)
);
CREATE INDEX rounds_by_number ON rounds (board, round);
CREATE INDEX rounds_by_time ON rounds (at);

-- Tilts raised and cleared, with their times and operator (from the journal).
CREATE TABLE tilts (
    board       TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    code        TEXT NOT NULL,
    action      TEXT NOT NULL,     -- raise or clear
    operator    TEXT,
    at          DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (board, seq, code)
);
CREATE INDEX tilts_by_time ON tilts (at);

-- What the collector refused or found missing: never stored as records, never hidden.
CREATE TABLE anomalies (
    board       TEXT NOT NULL,
    kind        TEXT NOT NULL,     -- gap, forged, truncated, replayed, garbled, refused
    seq_from    BIGINT NOT NULL,
    seq_to      BIGINT NOT NULL,
    detail      TEXT,
    first_seen  DOUBLE PRECISION NOT NULL,
    last_seen   DOUBLE PRECISION NOT NULL,
    count       BIGINT NOT NULL DEFAULT 1,
    PRIMARY KEY (board, kind, seq_from)
);
