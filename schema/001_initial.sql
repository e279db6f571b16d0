-- Tablebase metadata: one row per key (board, start, penalty, groups, versions, ...).
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- One row per layer n (number of drawn lines), kept after its blocks are pruned.
-- status: building -> complete -> pruned, or building -> book (kept for good).
CREATE TABLE layers (
    n         INTEGER PRIMARY KEY,
    status    TEXT    NOT NULL CHECK (status IN ('building', 'complete', 'book', 'pruned')),
    positions INTEGER NOT NULL,
    bytes     INTEGER NOT NULL DEFAULT 0,
    seconds   REAL    NOT NULL DEFAULT 0,
    histogram TEXT,            -- JSON object value -> count, when complete
    digest    TEXT             -- 16 hex digits, when complete
);

-- One row per finished block (n; group counts). A block's chunks and this row are
-- written in one transaction, so a row here means the block is whole.
CREATE TABLE blocks (
    n         INTEGER NOT NULL,
    counts    TEXT    NOT NULL,  -- group counts, dot separated: "4.3.3"
    positions INTEGER NOT NULL,
    chunks    INTEGER NOT NULL,
    bytes     INTEGER NOT NULL,
    seconds   REAL    NOT NULL,
    histogram TEXT    NOT NULL,  -- JSON object value -> count
    digest    INTEGER NOT NULL,  -- wrapping sum of digest elements (as i64)
    PRIMARY KEY (n, counts)
);

-- The values: each chunk is a zstd frame of raw i8 values plus their checksum.
CREATE TABLE chunks (
    n        INTEGER NOT NULL,
    counts   TEXT    NOT NULL,
    chunk    INTEGER NOT NULL,
    raw_len  INTEGER NOT NULL,
    checksum INTEGER NOT NULL,  -- checksum of the raw values (as i64)
    data     BLOB    NOT NULL,
    PRIMARY KEY (n, counts, chunk)
);
