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

/// The migrations a database at schema `version` still needs (none when it
/// is current). A version iolab never wrote, newer or negative, is an
/// error naming it: the file is not read as something it is not.
pub fn pending(version: i64) -> Result<&'static [&'static str], String> {
    match usize::try_from(version) {
        Ok(v) if v <= MIGRATIONS.len() => Ok(&MIGRATIONS[v..]),
        _ if version > VERSION => Err(format!(
            "schema version {version}, newer than this iolab's {VERSION}; use a newer iolab"
        )),
        _ => Err(format!(
            "schema version {version} is not one iolab writes (0 to {VERSION}); \
             the file was changed by another program"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_known_versions_have_pending_migrations() {
        assert_eq!(pending(0).unwrap().len(), MIGRATIONS.len());
        assert!(pending(VERSION).unwrap().is_empty());
        assert!(pending(VERSION + 1).unwrap_err().contains("newer"));
        for v in [-1, i64::MIN, i64::from(i32::MIN)] {
            assert!(
                pending(v).unwrap_err().contains("not one iolab writes"),
                "{v}"
            );
        }
    }
}
