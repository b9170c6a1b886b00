//! The database schema as a list of migrations. `PRAGMA user_version` holds
//! how many have been applied; opening a database to write applies the
//! rest, each in its own transaction, so an older database is brought up to
//! date and a newer one is refused rather than misread. Opening one only to
//! read changes nothing: an older schema is read as it is, with NULL for
//! the columns it does not have yet ([`ADDED`]).
//!
//! `PRAGMA application_id` ([`APPLICATION_ID`], set by migration 3) marks
//! the file as iolab's; see `identity.rs` for how a file is recognised
//! before anything is written to it.

/// iolab's `PRAGMA application_id`: "IOLB" in ASCII.
pub const APPLICATION_ID: i32 = 0x494F_4C42;

/// The schema version that stamps [`APPLICATION_ID`]: a database of an
/// earlier version is recognised by its tables instead.
pub const STAMPED: i64 = 3;

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
    // 3: the file says it is iolab's (APPLICATION_ID, 0x494F4C42), so a
    // foreign SQLite file named with --db is recognised and left alone.
    "PRAGMA application_id = 1229933634;",
];

/// Columns of `runs` added after schema 1, with the version that added
/// each: reading an older database selects NULL in their place.
pub const ADDED: &[(&str, i64)] = &[("sweep_id", 2), ("point_json", 2), ("source_json", 2)];

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
    fn the_stamp_is_the_application_id() {
        assert_eq!(APPLICATION_ID, 1_229_933_634);
        assert_eq!(&APPLICATION_ID.to_be_bytes(), b"IOLB");
        let stamp = MIGRATIONS[STAMPED as usize - 1];
        assert!(stamp.contains(&format!("application_id = {APPLICATION_ID};")));
    }

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
