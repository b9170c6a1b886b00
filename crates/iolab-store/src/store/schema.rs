//! The database schema as a list of migrations. `PRAGMA user_version` holds
//! how many have been applied; opening a database to write applies the
//! rest, each in its own transaction, so an older database is brought up to
//! date and a newer one is refused rather than misread. Opening one only to
//! read changes nothing: an older schema is read as it is, each column it
//! does not have yet read as what its migration would have filled in
//! ([`ADDED`]).
//!
//! `PRAGMA application_id` ([`APPLICATION_ID`], set by migration 3) marks
//! the file as iolab's; see `identity.rs` for how a file is recognised
//! before anything is written to it.

/// iolab's `PRAGMA application_id`: "IOLB" in ASCII.
pub const APPLICATION_ID: i32 = 0x494F_4C42;

/// The schema version that stamps [`APPLICATION_ID`]: a database of an
/// earlier version is recognised by its tables instead.
pub const STAMPED: i64 = 3;

/// The status of a run stored before schema 4, worked out from its stored
/// result: an `iolab run` result says `"interrupted": true`, a tree result
/// has a phase `"stopped": "Interrupted"`; anything else (an import, a
/// result that is not JSON) is `complete`. A macro so that migration 4 can
/// splice it into its SQL.
macro_rules! status_from_result {
    () => {
        "CASE WHEN NOT json_valid(result_json) THEN 'complete' \
         WHEN json_extract(result_json, '$.interrupted') = 1 THEN 'interrupted' \
         WHEN kind = 'tree' AND EXISTS (SELECT 1 FROM json_each(result_json, '$.phases') \
             WHERE CASE WHEN type = 'object' THEN json_extract(value, '$.stopped') END \
                 = 'Interrupted') THEN 'interrupted' \
         ELSE 'complete' END"
    };
}

/// SQL for the status of a run of a database older than schema 4 (see
/// [`ADDED`]): what migration 4 fills the `status` column with.
pub const STATUS_FROM_RESULT: &str = status_from_result!();

/// The columns of `v_runs` as migration 5 made them (migration 7 adds
/// the exec figures after them). A macro so both can splice it in.
macro_rules! v_runs_columns {
    () => {
        "
        id,
        created_unix,
        strftime('%Y-%m-%dT%H:%M:%SZ', created_unix, 'unixepoch') AS created_utc,
        label,
        kind,
        status,
        name AS job,
        sweep_id,
        (SELECT group_concat(key || '=' || value, ' ') FROM json_each(point_json)) AS point,
        json_array_length(summary_json, '$.reps') AS reps,
        json_extract(summary_json, '$.total.time_s') AS time_s,
        CAST(round(json_extract(summary_json, '$.total.ops')) AS INTEGER) AS ios,
        CAST(round(json_extract(summary_json, '$.total.bytes')) AS INTEGER) AS bytes,
        json_extract(summary_json, '$.total.iops') AS iops,
        json_extract(summary_json, '$.total.bw_mib_s') * 1048576 AS bw_bytes_per_s,
        CAST(round(json_extract(summary_json, '$.total.p50_us') * 1000) AS INTEGER) AS clat_p50_ns,
        CAST(round(json_extract(summary_json, '$.total.p99_us') * 1000) AS INTEGER) AS clat_p99_ns,
        json_extract(summary_json, '$.total.cpu_pct') AS cpu_pct,
        CAST(round(json_extract(summary_json, '$.total.dev_reads')) AS INTEGER) AS disk_read_ios,
        CAST(round(json_extract(summary_json, '$.total.dev_writes')) AS INTEGER) AS disk_write_ios,
        CAST(round(json_extract(summary_json, '$.total.inodes')) AS INTEGER) AS inodes,
        CAST(round(json_extract(summary_json, '$.total.read_ios')) AS INTEGER) AS read_ios,
        CAST(round(json_extract(summary_json, '$.total.read_bytes')) AS INTEGER) AS read_bytes,
        json_extract(summary_json, '$.total.read_iops') AS read_iops,
        json_extract(summary_json, '$.total.read_bw_bytes_per_s') AS read_bw_bytes_per_s,
        json_extract(summary_json, '$.total.read_clat_mean_ns') AS read_clat_mean_ns,
        CAST(round(json_extract(summary_json, '$.total.read_clat_p50_ns')) AS INTEGER) AS read_clat_p50_ns,
        CAST(round(json_extract(summary_json, '$.total.read_clat_p99_ns')) AS INTEGER) AS read_clat_p99_ns,
        CAST(round(json_extract(summary_json, '$.total.read_clat_p99_9_ns')) AS INTEGER) AS read_clat_p99_9_ns,
        CAST(round(json_extract(summary_json, '$.total.read_clat_max_ns')) AS INTEGER) AS read_clat_max_ns,
        CAST(round(json_extract(summary_json, '$.total.write_ios')) AS INTEGER) AS write_ios,
        CAST(round(json_extract(summary_json, '$.total.write_bytes')) AS INTEGER) AS write_bytes,
        json_extract(summary_json, '$.total.write_iops') AS write_iops,
        json_extract(summary_json, '$.total.write_bw_bytes_per_s') AS write_bw_bytes_per_s,
        json_extract(summary_json, '$.total.write_clat_mean_ns') AS write_clat_mean_ns,
        CAST(round(json_extract(summary_json, '$.total.write_clat_p50_ns')) AS INTEGER) AS write_clat_p50_ns,
        CAST(round(json_extract(summary_json, '$.total.write_clat_p99_ns')) AS INTEGER) AS write_clat_p99_ns,
        CAST(round(json_extract(summary_json, '$.total.write_clat_p99_9_ns')) AS INTEGER) AS write_clat_p99_9_ns,
        CAST(round(json_extract(summary_json, '$.total.write_clat_max_ns')) AS INTEGER) AS write_clat_max_ns,
        CAST(round(json_extract(summary_json, '$.total.trim_ios')) AS INTEGER) AS trim_ios,
        CAST(round(json_extract(summary_json, '$.total.trim_bytes')) AS INTEGER) AS trim_bytes,
        json_extract(summary_json, '$.total.trim_iops') AS trim_iops,
        json_extract(summary_json, '$.total.trim_bw_bytes_per_s') AS trim_bw_bytes_per_s,
        json_extract(summary_json, '$.total.trim_clat_mean_ns') AS trim_clat_mean_ns,
        CAST(round(json_extract(summary_json, '$.total.trim_clat_p50_ns')) AS INTEGER) AS trim_clat_p50_ns,
        CAST(round(json_extract(summary_json, '$.total.trim_clat_p99_ns')) AS INTEGER) AS trim_clat_p99_ns,
        CAST(round(json_extract(summary_json, '$.total.trim_clat_p99_9_ns')) AS INTEGER) AS trim_clat_p99_9_ns,
        CAST(round(json_extract(summary_json, '$.total.trim_clat_max_ns')) AS INTEGER) AS trim_clat_max_ns"
    };
}

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
    // 4: how each run ended ('complete' or 'interrupted', see
    // store::Status), so history can say which results are partial; the
    // runs stored before say it in their result.
    concat!(
        "ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT 'complete';
         UPDATE runs SET status = ",
        status_from_result!(),
        ";"
    ),
    // 5: views for users' own SQL (docs/schema.md): v_runs, one row per
    // run with the named figures of metrics::names (the columns of `iolab
    // export --format csv` but the job's), and v_reps, one row per
    // repetition. Stable: a later change is a new migration that keeps
    // these columns.
    concat!(
        "CREATE VIEW v_runs AS SELECT",
        v_runs_columns!(),
        "
    FROM runs;
    CREATE VIEW v_reps AS SELECT
        runs.id AS run_id,
        CAST(r.key AS INTEGER) + 1 AS rep,
        json_extract(r.value, '$.time_s') AS time_s,
        CAST(round(json_extract(r.value, '$.ops')) AS INTEGER) AS ios,
        CAST(round(json_extract(r.value, '$.bytes')) AS INTEGER) AS bytes,
        json_extract(r.value, '$.iops') AS iops,
        json_extract(r.value, '$.bw_mib_s') * 1048576 AS bw_bytes_per_s,
        CAST(round(json_extract(r.value, '$.p50_us') * 1000) AS INTEGER) AS clat_p50_ns,
        CAST(round(json_extract(r.value, '$.p99_us') * 1000) AS INTEGER) AS clat_p99_ns,
        json_extract(r.value, '$.cpu_pct') AS cpu_pct,
        CAST(round(json_extract(r.value, '$.dev_reads')) AS INTEGER) AS disk_read_ios,
        CAST(round(json_extract(r.value, '$.dev_writes')) AS INTEGER) AS disk_write_ios,
        CAST(round(json_extract(r.value, '$.inodes')) AS INTEGER) AS inodes
    FROM runs, json_each(runs.summary_json, '$.reps') AS r;"
    ),
    // 6: one row per host (rank) of a run over many hosts (`run --hosts`,
    // MPI): its own figures, start, clock offset, counters and environment.
    "CREATE TABLE run_hosts (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        rank INTEGER NOT NULL,
        host TEXT NOT NULL,
        hostname TEXT NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        start_offset_ns INTEGER,
        clock_offset_ns INTEGER NOT NULL,
        runtime_ns INTEGER,
        ops INTEGER,
        iops REAL,
        time_s REAL,
        read_ios INTEGER,
        read_bytes INTEGER,
        read_iops REAL,
        read_clat_mean_ns REAL,
        read_clat_p99_ns INTEGER,
        write_ios INTEGER,
        write_bytes INTEGER,
        write_iops REAL,
        write_clat_mean_ns REAL,
        write_clat_p99_ns INTEGER,
        counters_json TEXT NOT NULL,
        env_json TEXT,
        PRIMARY KEY (run_id, rank)
    );",
    // 7: v_runs gains the figures of `iolab exec` runs (the columns of
    // `iolab export --format csv` after the per-direction ones).
    concat!(
        "DROP VIEW v_runs;
    CREATE VIEW v_runs AS SELECT",
        v_runs_columns!(),
        ",
        json_extract(summary_json, '$.total.cpu_user_s') AS cpu_user_s,
        json_extract(summary_json, '$.total.cpu_sys_s') AS cpu_sys_s,
        CAST(round(json_extract(summary_json, '$.total.storage_read_bytes')) AS INTEGER) AS storage_read_bytes,
        CAST(round(json_extract(summary_json, '$.total.storage_write_bytes')) AS INTEGER) AS storage_write_bytes,
        CAST(round(json_extract(summary_json, '$.total.cache_hits')) AS INTEGER) AS cache_hits,
        CAST(round(json_extract(summary_json, '$.total.cache_misses')) AS INTEGER) AS cache_misses
    FROM runs;"
    ),
];

/// A column of `runs` added after schema 1.
#[derive(Debug, Clone, Copy)]
pub struct Added {
    /// Its name.
    pub column: &'static str,
    /// The schema version that added it.
    pub version: i64,
    /// The SQL selected in its place from a database older than that
    /// (opened only to read, so not migrated).
    pub before: &'static str,
}

/// Columns of `runs` added after schema 1: reading an older database
/// selects NULL in their place, or what their migration fills in.
pub const ADDED: &[Added] = &[
    Added {
        column: "sweep_id",
        version: 2,
        before: "NULL",
    },
    Added {
        column: "point_json",
        version: 2,
        before: "NULL",
    },
    Added {
        column: "source_json",
        version: 2,
        before: "NULL",
    },
    Added {
        column: "status",
        version: 4,
        before: STATUS_FROM_RESULT,
    },
];

/// The schema version this iolab writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// A schema version iolab never wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UnknownVersion {
    /// Written by a newer iolab.
    #[error("schema version {0}, newer than this iolab's {VERSION}; use a newer iolab")]
    Newer(i64),
    /// Negative, or otherwise not iolab's.
    #[error(
        "schema version {0} is not one iolab writes (0 to {VERSION}); the file was changed by another program"
    )]
    Foreign(i64),
}

/// The migrations a database at schema `version` still needs (none when it
/// is current). A version iolab never wrote, newer or negative, is an
/// error naming it: the file is not read as something it is not.
pub fn pending(version: i64) -> Result<&'static [&'static str], UnknownVersion> {
    match usize::try_from(version) {
        Ok(v) if v <= MIGRATIONS.len() => Ok(&MIGRATIONS[v..]),
        _ if version > VERSION => Err(UnknownVersion::Newer(version)),
        _ => Err(UnknownVersion::Foreign(version)),
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
        assert_eq!(
            pending(VERSION + 1),
            Err(UnknownVersion::Newer(VERSION + 1))
        );
        assert!(
            pending(VERSION + 1)
                .unwrap_err()
                .to_string()
                .contains("newer")
        );
        for v in [-1, i64::MIN, i64::from(i32::MIN)] {
            assert!(
                pending(v)
                    .unwrap_err()
                    .to_string()
                    .contains("not one iolab writes"),
                "{v}"
            );
        }
    }

    /// Migration 4 fills the status of the runs stored before it from
    /// their results, and a result it cannot read is complete (the
    /// migration never fails on it).
    #[test]
    fn migration_4_reads_the_status_from_the_result() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        for m in &MIGRATIONS[..3] {
            c.execute_batch(m).unwrap();
        }
        let rows = [
            ("run", r#"{"interrupted":true,"jobs":[]}"#, "interrupted"),
            ("run", r#"{"interrupted":false}"#, "complete"),
            ("fio", r#"{"interrupted":false}"#, "complete"),
            (
                "tree",
                r#"{"phases":[{"stopped":null},{"stopped":"Interrupted"}]}"#,
                "interrupted",
            ),
            (
                "tree",
                r#"{"phases":[{"stopped":"TimeLimit"}]}"#,
                "complete",
            ),
            (
                "tree",
                r#"{"phases":[{"stopped":{"NoSpace":"/x"}}]}"#,
                "complete",
            ),
            ("tree", r#"{"phases":"Interrupted"}"#, "complete"),
            ("tree", r#"{"phases":["Interrupted", 1, null]}"#, "complete"),
            ("run", "not json {", "complete"),
        ];
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let rows: Vec<(&str, &str, &str)> = rows
            .into_iter()
            .chain([("run", deep.as_str(), "complete")])
            .collect();
        for (kind, result, _) in &rows {
            c.execute(
                "INSERT INTO runs (created_unix, kind, name, command, iolab_version,
                    env_json, result_json, summary_json) VALUES (0, ?1, '', '', '', '', ?2, '')",
                [kind, result],
            )
            .unwrap();
        }
        let read = |sql: &str| -> Vec<String> {
            let mut st = c.prepare(sql).unwrap();
            st.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        let want: Vec<&str> = rows.iter().map(|r| r.2).collect();
        let before = read(&format!(
            "SELECT {STATUS_FROM_RESULT} FROM runs ORDER BY id"
        ));
        assert_eq!(before, want, "read as it is");
        c.execute_batch(MIGRATIONS[3]).unwrap();
        assert_eq!(
            read("SELECT status FROM runs ORDER BY id"),
            want,
            "migrated"
        );
    }
}
