//! Regression tests of issue 14 for the results database: one per defect,
//! named after it (defects 6, 7, 11 and 12, the store's part of each).

mod common;
use common::*;
use std::path::Path;

/// A minimal fio result document (one job, one read).
const FIO_RESULT: &str = r#"{"fio version":"fio-3.33","timestamp":1,"jobs":[{"jobname":"d","job options":{"rw":"read"},
    "job_runtime":10,"usr_cpu":1.0,"sys_cpu":2.0,"read":{"io_bytes":4096,"total_ios":1,
    "clat_ns":{"N":1,"min":1000,"max":1000,"mean":1000.0,"stddev":0.0,"percentile":{"50.000000":1000}},
    "lat_ns":{"N":1,"min":1100,"max":1100,"mean":1100.0,"stddev":0.0}},
    "write":{"io_bytes":0,"total_ios":0}}]}"#;

/// Makes an iolab database at `db` holding one run (an imported fio result).
fn iolab_db(db: &Path) {
    let dir = db.parent().unwrap();
    let doc = write_file(dir, "fio-result.json", FIO_RESULT);
    succeed(with_db(db).args(["import", s(&doc), "--label", "one"]));
}

/// Runs `sql` on the database `db` directly (not through iolab).
fn sql(db: &Path, sql: &str) {
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch(sql)
        .unwrap();
}

/// A `user_version` iolab never wrote (negative, or past every known
/// schema) is a clear error, never a panic; the file is left alone.
#[test]
fn defect_07_negative_user_version() {
    let (_d, db) = scratch_db();
    iolab_db(&db);
    for v in ["-1", "-2147483648"] {
        sql(&db, &format!("PRAGMA user_version = {v}"));
        let before = std::fs::read(&db).unwrap();
        for args in [&["history"][..], &["show", "1"], &["rm", "1"]] {
            let err = fails_with(
                with_db(&db).args(args),
                code::USAGE,
                &format!("schema version {v} is not one iolab writes"),
            );
            assert_one_line(&err, &[s(&db)]);
        }
        assert_eq!(std::fs::read(&db).unwrap(), before, "left as it was");
    }
    sql(&db, "PRAGMA user_version = 99");
    fails_with(
        with_db(&db).arg("history"),
        code::USAGE,
        "newer than this iolab's",
    );
}

/// `cmd` as the unprivileged user nobody when the tests run as root (root
/// ignores file permissions), else as it is; `None` when root cannot drop
/// its privileges here (no setpriv).
fn unprivileged(args: &[&str]) -> Option<std::process::Command> {
    let iolab = assert_cmd::cargo::cargo_bin("iolab");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        let mut c = std::process::Command::new(iolab);
        c.args(args);
        return Some(c);
    }
    let drop = ["--reuid=65534", "--regid=65534", "--clear-groups"];
    let ok = std::process::Command::new("setpriv")
        .args(drop)
        .arg("true")
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| {
        let mut c = std::process::Command::new("setpriv");
        c.args(drop).arg(iolab).args(args);
        c
    })
}

/// Sets the permission bits of `p`.
fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The names in directory `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A read-only copy of a database (mode 0444 in a directory of mode 0555,
/// read by a user who may write neither) serves history, show, export and
/// report, and is left as it was; a command that stores says clearly that
/// it cannot write there.
#[test]
fn defect_11_read_only_database_can_be_read() {
    let (d, db) = scratch_db();
    iolab_db(&db);
    chmod(d.path(), 0o755);
    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let copy = ro.join("copy.db");
    std::fs::copy(&db, &copy).unwrap();
    chmod(&copy, 0o444);
    chmod(&ro, 0o555);
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    chmod(&out, 0o777);
    let before = std::fs::read(&copy).unwrap();
    let dbarg = format!("--db={}", s(&copy));
    let report = out.join("r.html");
    if unprivileged(&["--version"]).is_none() {
        eprintln!("SKIP defect_11_read_only_database_can_be_read: root and no setpriv");
        return;
    }
    let as_user = |args: &[&str]| unprivileged(&[args, &[dbarg.as_str()]].concat()).unwrap();

    let h = stdout_text(&mut as_user(&["history"]));
    assert!(h.contains(" one ") && h.contains("fio"), "{h}");
    let rows = stdout_json(&mut as_user(&["history", "--format", "json"]));
    assert_eq!(rows[0]["label"], "one", "{rows}");
    let show = stdout_json(&mut as_user(&["show", "1", "--output-format", "json"]));
    assert_eq!(show["jobs"][0]["read"]["total_ios"], 1);
    let csv = stdout_text(&mut as_user(&["export", "1", "--format", "csv"]));
    assert!(csv.lines().nth(1).unwrap().starts_with("1,"), "{csv}");
    succeed(&mut as_user(&["report", "1", "-o", s(&report)]));
    assert!(std::fs::read_to_string(&report).unwrap().contains("<html"));

    // A command that stores is refused, clearly, before any work.
    let doc = write_file(&out, "again.json", FIO_RESULT);
    let err = fails_with(
        &mut as_user(&["import", s(&doc)]),
        code::USAGE,
        "cannot be written",
    );
    assert_one_line(&err, &[s(&copy), "Permission denied"]);

    assert_eq!(names_in(&ro), ["copy.db"], "no -wal or -shm was made");
    assert_eq!(std::fs::read(&copy).unwrap(), before, "left as it was");
    chmod(&ro, 0o755);
}

/// A foreign SQLite file named with --db (another program's database, in
/// rollback or WAL mode, with or without its own application_id) is
/// refused by every command before anything is written: its bytes stay the
/// same and no -wal, -shm or -journal appears beside it. An empty file is
/// fine to initialise, and is stamped as iolab's.
#[test]
fn defect_11_foreign_database_is_untouched() {
    let (d, f) = scratch_file();
    let doc = write_file(d.path(), "fio.json", FIO_RESULT);
    let report = d.path().join("r.html");
    let foreign = [
        (
            "rollback.db",
            "CREATE TABLE runs (x); INSERT INTO runs VALUES (1);",
        ),
        ("wal.db", "PRAGMA journal_mode=WAL; CREATE TABLE t (x);"),
        (
            "app.db",
            "PRAGMA application_id = 1234; CREATE TABLE t (x);",
        ),
        (
            "versioned.db",
            "PRAGMA user_version = 2; CREATE TABLE runs (id INTEGER PRIMARY KEY);",
        ),
    ];
    for (name, setup) in foreign {
        let dir = d.path().join(name.replace(".db", ""));
        std::fs::create_dir(&dir).unwrap();
        let db = dir.join(name);
        sql(&db, setup);
        let before = std::fs::read(&db).unwrap();
        let dbarg = format!("--db={}", s(&db));
        let file = format!("--filename={}", s(&f));
        let commands: [&[&str]; 7] = [
            &["history"],
            &["show", "1"],
            &["export", "1"],
            &["report", "1", "-o", s(&report)],
            &["import", s(&doc)],
            &["rm", "1"],
            &["run", "--name=x", &file, "--size=64k"],
        ];
        for args in commands {
            let err = fails_with(
                bin().args(args).arg(&dbarg),
                code::USAGE,
                "not an iolab database",
            );
            assert_one_line(&err, &[s(&db), "left untouched"]);
            assert_eq!(std::fs::read(&db).unwrap(), before, "{name}: {args:?}");
            assert_eq!(names_in(&dir), [name], "{name}: {args:?}");
        }
    }
    assert!(!f.exists(), "nothing ran");
    assert!(!report.exists(), "no report");

    let empty = d.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    succeed(with_db(&empty).args(["import", s(&doc)]));
    let c = rusqlite::Connection::open(&empty).unwrap();
    let app: i32 = c
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app, 0x494F_4C42, "stamped as iolab's (\"IOLB\")");
}
