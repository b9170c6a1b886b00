//! docs/schema.md documents the database as it is: every table and view
//! of a freshly made database, each with every column (and no column it
//! lacks), and the views answer queries.

mod common;
use common::*;
use std::path::Path;

/// The tables and views of `db` (SQLite's own internals aside), each with
/// its columns.
fn live_schema(db: &Path) -> Vec<(String, Vec<String>)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')
             AND name NOT LIKE 'sqlite_stat%' ORDER BY name",
        )
        .unwrap();
    let names: Vec<String> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    names
        .into_iter()
        .map(|n| {
            let mut st = c.prepare(&format!("PRAGMA table_info({n})")).unwrap();
            let cols = st
                .query_map([], |r| r.get::<_, String>(1))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            (n, cols)
        })
        .collect()
}

/// The section of the doc headed "### `name`", up to the next heading.
fn section<'a>(doc: &'a str, name: &str) -> &'a str {
    let head = format!("### `{name}`");
    let at = doc
        .find(&head)
        .unwrap_or_else(|| panic!("docs/schema.md has no section {head}"));
    let rest = &doc[at + head.len()..];
    &rest[..rest.find("\n#").unwrap_or(rest.len())]
}

/// The names in backquotes in the first cell of each table row.
fn documented(section: &str) -> Vec<String> {
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| {
            l.split('|')
                .nth(1)
                .unwrap()
                .split(',')
                .map(|c| c.trim().trim_matches('`').to_string())
        })
        .collect()
}

#[test]
fn the_schema_doc_names_every_table_view_and_column() {
    let (d, f) = scratch_file();
    let db = d.path().join("r.db");
    run_into(
        &db,
        &job("d", &f, "--size=1M --rw=read --number_ios=8 --repeat=2"),
    );
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema.md"))
        .unwrap();
    let live = live_schema(&db);
    let names: Vec<&str> = live.iter().map(|(n, _)| n.as_str()).collect();
    for want in ["runs", "sweeps", "v_runs", "v_reps"] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    for (table, cols) in &live {
        let mut doc_cols = documented(section(&doc, table));
        for c in cols {
            assert!(
                doc_cols.contains(c),
                "docs/schema.md: `{table}` lacks column `{c}`"
            );
        }
        doc_cols.retain(|c| !cols.contains(c));
        assert!(
            doc_cols.is_empty(),
            "docs/schema.md: `{table}` has no {doc_cols:?}"
        );
    }
    let version: i64 = query_one(&db, "PRAGMA user_version");
    assert!(
        doc.contains(&format!("schema version ({version}")),
        "the doc's version is {version}"
    );
}

#[test]
fn the_views_answer_queries() {
    let (d, f) = scratch_file();
    let db = d.path().join("r.db");
    let opts = "--size=1M --rw=randread --bs=4k --number_ios=50 --repeat=3 --label v";
    run_into(&db, &job("v", &f, opts));
    run_into(
        &db,
        &job("w", &f, "--size=1M --rw=write --bs=8k --number_ios=20"),
    );
    let n: i64 = query_one(&db, "SELECT count(*) FROM v_runs");
    assert_eq!(n, 2);
    let ios: i64 = query_one(&db, "SELECT read_ios FROM v_runs WHERE label = 'v'");
    assert_eq!(ios, 150);
    let w: i64 = query_one(&db, "SELECT write_bytes FROM v_runs WHERE job = 'w'");
    assert_eq!(w, 20 * 8192);
    let p99: i64 = query_one(&db, "SELECT read_clat_p99_ns FROM v_runs WHERE label = 'v'");
    assert!(
        p99 > 0
            && p99
                >= query_one::<i64>(&db, "SELECT read_clat_p50_ns FROM v_runs WHERE label = 'v'")
    );
    let reps: i64 = query_one(&db, "SELECT count(*) FROM v_reps WHERE run_id = 1");
    assert_eq!(reps, 3);
    let sum: i64 = query_one(&db, "SELECT sum(ios) FROM v_reps WHERE run_id = 1");
    assert_eq!(sum, 150, "the repetitions add up to the run");
    // The README's query.
    let c = rusqlite::Connection::open(&db).unwrap();
    let mut st = c
        .prepare("SELECT id, label, read_iops, read_clat_p99_ns FROM v_runs")
        .unwrap();
    let rows: Vec<(i64, Option<String>, Option<f64>)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2);
    assert!(rows[0].2.unwrap() > 0.0 && rows[1].2.is_none(), "{rows:?}");
    let none: Option<i64> = query_one(&db, "SELECT write_ios FROM v_runs WHERE label = 'v'");
    assert_eq!(none, None, "no writes: NULL");
}
