//! The database schema as a list of migrations. `PRAGMA user_version` holds
//! how many have been applied; opening a database applies the rest, each in
//! its own transaction, so an older database is brought up to date and a
//! newer one is refused rather than misread.

/// Migration `i` takes the schema from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // 1: one row per run.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created_unix INTEGER NOT NULL,
        label TEXT,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        command TEXT NOT NULL,
        iolab_version TEXT NOT NULL,
        env_json TEXT NOT NULL,
        result_json TEXT NOT NULL,
        summary_json TEXT NOT NULL
    );
    CREATE INDEX runs_label ON runs(label);
    CREATE INDEX runs_created ON runs(created_unix);",
    // 2: sweeps (a run is one point of at most one sweep), and the original
    // document of imported results.
    "CREATE TABLE sweeps (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created_unix INTEGER NOT NULL,
        label TEXT,
        command TEXT NOT NULL,
        vary_json TEXT NOT NULL
    );
    ALTER TABLE runs ADD COLUMN sweep_id INTEGER REFERENCES sweeps(id);
    ALTER TABLE runs ADD COLUMN point_json TEXT;
    ALTER TABLE runs ADD COLUMN source_json TEXT;
    CREATE INDEX runs_sweep ON runs(sweep_id);",
];

/// The schema version this iolab writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;
