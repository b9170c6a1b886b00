//! The results database: runs stored and listed, shown and exported again,
//! fio results imported, runs removed; migration from schema 1, SIGKILL in
//! the middle of a write, two writers at once, bad database paths.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The options of job `st`: 200 random 4 KiB reads of a 1 MiB file.
const SMALL: &str = "--size=1M --rw=randread --bs=4k --number_ios=200";

/// Runs job `st` on `file` with `extra` options, stores it into `db` under
/// `label`, and checks that it says so.
fn small_run(db: &Path, file: &Path, label: &str, extra: &str) {
    let err = run_into(
        db,
        &job(
            "st",
            file,
            &format!("{SMALL} --label {label} --verbose {extra}"),
        ),
    );
    assert!(err.contains("stored as run"), "{err}");
}

/// How many runs `db` holds.
fn count_runs(db: &Path) -> i64 {
    query_one(db, "SELECT count(*) FROM runs")
}

#[test]
fn runs_are_stored_listed_shown_exported_and_removed() {
    let (d, f) = scratch_file();
    let db = d.path().join("r.db");
    small_run(&db, &f, "before", "");
    small_run(&db, &f, "after", "--repeat=3");

    let h = stdout_text(with_db(&db).arg("history"));
    let lines: Vec<&str> = h.lines().collect();
    assert_eq!(lines.len(), 4, "{h}");
    assert!(lines[0].starts_with("id") && lines[0].contains("IOPS") && lines[0].contains("p99"));
    assert!(
        lines[2].trim_start().starts_with("2 ") && lines[2].contains("after"),
        "{h}"
    );
    assert!(
        lines[3].trim_start().starts_with("1 ") && lines[3].contains("before"),
        "{h}"
    );
    // Filters.
    let h = stdout_text(with_db(&db).args(["history", "--label", "before"]));
    assert_eq!(h.lines().count(), 3, "{h}");
    let h = stdout_text(with_db(&db).args(["history", "--since", "1h", "--job", "st"]));
    assert_eq!(h.lines().count(), 4, "{h}");
    let h = stdout_text(with_db(&db).args(["history", "--until", "2000-01-01", "--format", "csv"]));
    assert_eq!(h.lines().count(), 1, "only the CSV header: {h}");

    // show: the full result with the stored environment, and fio's JSON.
    let show = stdout_text(with_db(&db).args(["show", "2"]));
    assert!(
        show.contains("run 2") && show.contains("label after"),
        "{show}"
    );
    assert!(
        show.contains("ext4") || show.contains("tmpfs") || show.contains("xfs"),
        "{show}"
    );
    assert!(show.contains("read: IOPS="), "{show}");
    let j = stdout_json(with_db(&db).args(["show", "2", "--output-format", "json"]));
    assert_eq!(j["jobs"][0]["read"]["total_ios"], 600);
    assert_eq!(j["iolab_run"]["label"], "after");
    assert_eq!(
        j["iolab_run"]["summary"]["reps"].as_array().unwrap().len(),
        3
    );
    assert!(j["iolab_run"]["environment"]["cpus"].as_u64().unwrap() >= 1);

    // export: CSV and Markdown rows, JSON documents.
    let csv = stdout_text(with_db(&db).args(["export", "1", "2", "--format", "csv"]));
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(
        rows[0].starts_with("id,created_unix,created_utc,label,kind,status,job"),
        "{csv}"
    );
    assert!(rows[1].starts_with("1,") && rows[2].starts_with("2,"));
    let md = stdout_text(with_db(&db).args(["export", "1", "--format", "markdown"]));
    assert!(md.starts_with("| id |") && md.lines().nth(1).unwrap().contains("---"));
    let all = stdout_json(with_db(&db).args(["export", "1", "2"]));
    assert_eq!(all.as_array().unwrap().len(), 2);
    assert_eq!(all[0]["jobs"][0]["read"]["total_ios"], 200);

    // rm: unknown id deletes nothing; a known one goes.
    let err = fails_with(with_db(&db).args(["rm", "1", "99"]), 2, "no run 99");
    assert!(err.contains("nothing deleted"), "{err}");
    assert_eq!(count_runs(&db), 2);
    succeed(with_db(&db).args(["rm", "1"]));
    assert_eq!(count_runs(&db), 1);
    let (_, err) = fail(with_db(&db).args(["show", "1"]));
    assert!(err.contains("no run 1"), "{err}");
}

#[test]
fn no_store_leaves_the_database_alone() {
    let (d, f) = scratch_file();
    let db = d.path().join("n.db");
    small_run(&db, &f, "x", "");
    let (_, err) = succeed_text(with_db(&db).args(["run", "--no-store"]).args(job(
        "n",
        &f,
        "--size=1M --rw=read --number_ios=10",
    )));
    assert!(!err.contains("stored"), "{err}");
    assert_eq!(count_runs(&db), 1);
}

/// fio's own results, as json and json+, become runs whose latency
/// percentiles are fio's and which compare with iolab's.
#[test]
fn fio_results_are_imported() {
    skip_unless_installed!("fio");
    let (d, f) = scratch_file();
    let db = d.path().join("i.db");
    small_run(&db, &f, "iolab", "");
    for fmt in ["json", "json+"] {
        let out = succeed(
            Command::new("fio")
                .args(job("fj", &f, SMALL))
                .arg(format!("--output-format={fmt}")),
        );
        let path = d.path().join(format!("{fmt}.out"));
        std::fs::write(&path, &out).unwrap();
        let fio = parse_json(&out);
        let (_, err) = succeed_text(with_db(&db).args(["import", s(&path), "--label", "fio"]));
        let id: i64 = err
            .split("as run ")
            .nth(1)
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or_else(|| panic!("{err}"));
        if fmt == "json" {
            assert!(err.contains("rebuilt from fio's percentile list"), "{err}");
        }
        let id = id.to_string();
        let shown = stdout_json(with_db(&db).args(["show", &id, "--output-format", "json"]));
        let (ours, theirs) = (&shown["jobs"][0]["read"], &fio["jobs"][0]["read"]);
        assert_eq!(ours["total_ios"], theirs["total_ios"]);
        assert_eq!(ours["io_bytes"], theirs["io_bytes"]);
        for p in ["50.000000", "99.000000"] {
            let a = ours["clat_ns"]["percentile"][p].as_f64().unwrap();
            let b = theirs["clat_ns"]["percentile"][p].as_f64().unwrap();
            assert!((a - b).abs() <= b * 0.002, "{fmt} p{p}: {a} vs fio {b}");
        }
        let mean = ours["clat_ns"]["mean"].as_f64().unwrap();
        let fmean = theirs["clat_ns"]["mean"].as_f64().unwrap();
        assert!((mean - fmean).abs() <= 1.0, "mean {mean} vs {fmean}");
        // The original document is kept.
        let src = stdout_json(with_db(&db).args(["show", &id, "--source"]));
        assert_eq!(src["fio version"], fio["fio version"]);
    }
    let cmp = stdout_text(with_db(&db).args(["compare", "iolab", "fio", "--all"]));
    assert!(cmp.contains("IOPS") && cmp.contains('%'), "{cmp}");
    fails_with(with_db(&db).args(["import", s(&f)]), 2, s(&f));
}

#[test]
fn bad_database_paths_are_clear_errors() {
    let (d, f) = scratch_file();
    let missing = d.path().join("no/such/dir/r.db");
    let err = fails_with(
        bin()
            .args(["run", "--db", s(&missing)])
            .args(job("b", &f, "--size=1M --rw=read")),
        2,
        "does not exist",
    );
    assert!(err.contains(s(&missing)), "{err}");
    assert!(!f.exists(), "nothing ran before the database check");

    fails_with(
        bin().args(["history", "--db", s(d.path())]),
        2,
        "is a directory",
    );

    let junk = d.path().join("junk.db");
    std::fs::write(&junk, vec![b'x'; 8192]).unwrap();
    fails_with(
        bin().args(["history", "--db", s(&junk)]),
        2,
        "not an iolab database",
    );
    assert_eq!(
        std::fs::read(&junk).unwrap(),
        vec![b'x'; 8192],
        "left untouched"
    );
}

/// A database written by schema version 1 (tests/fixtures/store-v1.db: one
/// run stored by iolab 0.1.0, before sweeps, imports and the registries) is
/// read as it is by the commands that only read, and migrated by the first
/// one that stores; its run is still readable.
#[test]
fn old_schema_is_migrated() {
    let (d, db) = scratch_db();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v1.db"),
        &db,
    )
    .unwrap();
    assert_eq!(query_one::<i64>(&db, "PRAGMA user_version"), 1);
    let h = stdout_text(with_db(&db).arg("history"));
    assert!(h.contains("old-schema") && h.contains("v1"), "{h}");
    assert_eq!(
        query_one::<i64>(&db, "PRAGMA user_version"),
        1,
        "reading changes nothing"
    );
    let show = stdout_text(with_db(&db).args(["show", "1"]));
    assert!(
        show.contains("label old-schema") && show.contains("read: IOPS="),
        "{show}"
    );
    // Fields stored before the registries read back under today's names.
    let v = stdout_json(with_db(&db).args(["show", "1", "--output-format", "json"]));
    let j = &v["jobs"][0];
    assert_eq!(
        j["iolab"]["engine"], "psync",
        "\"Psync\" of the old engine enum"
    );
    assert_eq!(j["iolab"]["counters"]["process_io"]["read_bytes"], 409600);
    assert_eq!(j["iolab"]["counters"]["vmstat"]["pgpgin"], 400);
    // New runs go in beside it, and the schema is brought up to date.
    small_run(&db, &d.path().join("f"), "new", "");
    assert_eq!(count_runs(&db), 2);
    assert_eq!(
        query_one::<i64>(&db, "PRAGMA user_version"),
        iolab::store::schema::VERSION
    );
    assert_eq!(
        query_one::<i32>(&db, "PRAGMA application_id"),
        iolab::store::schema::APPLICATION_ID,
        "stamped as iolab's"
    );
    let cols: Vec<String> = rusqlite::Connection::open(&db)
        .unwrap()
        .prepare("SELECT name FROM pragma_table_info('runs')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(cols.contains(&"sweep_id".to_string()), "{cols:?}");
    let h = stdout_text(with_db(&db).arg("history"));
    assert!(h.contains("old-schema") && h.contains("new"), "{h}");
}

/// SIGKILL while a run is being written (the process is inside the insert
/// transaction): the database stays sound, the half-written run is absent,
/// and the next run is stored normally.
#[test]
fn sigkill_mid_write_never_corrupts() {
    let (d, f) = scratch_file();
    let db = d.path().join("k.db");
    small_run(&db, &f, "first", "");
    let marker = d.path().join("in-transaction");
    let mut child = with_db(&db)
        .env("IOLAB_TEST_STORE_PAUSE", &marker)
        .arg("run")
        .args(job(
            "k",
            &f,
            "--size=1M --rw=randread --number_ios=100 --label killed",
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(30), "never reached the write", || {
        marker.exists()
    });
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(query_one::<String>(&db, "PRAGMA integrity_check"), "ok");
    assert_eq!(count_runs(&db), 1, "the killed run left nothing behind");
    let h = stdout_text(with_db(&db).arg("history"));
    assert!(!h.contains("killed"), "{h}");
    small_run(&db, &f, "after-kill", "");
    assert_eq!(count_runs(&db), 2);
}

/// A minimal fio result document, imported many times by each writer in
/// concurrent_writers_lose_nothing.
const MINIMAL_FIO_RESULT: &str = r#"{"fio version":"fio-3.33","timestamp":1,"jobs":[{"jobname":"c","job options":{"rw":"read"},
    "job_runtime":10,"usr_cpu":1.0,"sys_cpu":2.0,"read":{"io_bytes":4096,"total_ios":1,
    "clat_ns":{"N":1,"min":1000,"max":1000,"mean":1000.0,"stddev":0.0,"percentile":{"50.000000":1000}},
    "lat_ns":{"N":1,"min":1100,"max":1100,"mean":1100.0,"stddev":0.0}},
    "write":{"io_bytes":0,"total_ios":0}}]}"#;

/// Two processes storing at the same time lose nothing.
#[test]
fn concurrent_writers_lose_nothing() {
    let (d, db) = scratch_db();
    let fio_json = write_file(d.path(), "r.json", MINIMAL_FIO_RESULT);
    let per = 30;
    let kids: Vec<_> = (0..2)
        .map(|_| {
            with_db(&db)
                .arg("import")
                .args(std::iter::repeat_n(s(&fio_json), per))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for k in kids {
        let out = k.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(count_runs(&db), 2 * per as i64);
}

/// An imported run keeps fio's engine as fio wrote it, also one iolab does
/// not have (it was labelled `null` before the engine registry).
#[test]
fn import_keeps_the_engine_fio_named() {
    let (d, db) = scratch_db();
    let doc =
        MINIMAL_FIO_RESULT.replace(r#"{"rw":"read"}"#, r#"{"rw":"read","ioengine":"posixaio"}"#);
    let path = write_file(d.path(), "p.json", &doc);
    succeed(with_db(&db).args(["import", s(&path)]));
    let v = stdout_json(with_db(&db).args(["show", "1", "--output-format", "json"]));
    assert_eq!(v["jobs"][0]["iolab"]["engine"], "posixaio");
    assert_eq!(v["jobs"][0]["job options"]["ioengine"], "posixaio");
    let text = stdout_text(with_db(&db).args(["show", "1"]));
    assert!(text.contains("ioengine=posixaio"), "{text}");
}
