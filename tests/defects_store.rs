//! Regression tests of issue 14 for the results database: one per defect,
//! named after it (defects 6, 7, 11 and 12, the store's part of each).

mod common;
use common::process::peak_rss;
use common::*;
use std::path::Path;
use std::time::Duration;

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
    assert!(h.contains(" one "), "{h}");
    let rows = stdout_json(&mut as_user(&["history", "--format", "json"]));
    assert_eq!(rows[0]["label"], "one", "{rows}");
    assert_eq!(rows[0]["kind"], "fio", "{rows}");
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

/// The `status` cell of run `id` in the table `history` printed: csv (by
/// its header) or aligned text (the word under the header `status`; text
/// cells may be empty, so the words of a row do not line up with the
/// headers).
fn status_cell(table: &str, id: &str) -> String {
    let mut lines = table.lines();
    let head = lines.next().unwrap();
    let row = lines
        .find(|l| l.trim_start().split([' ', ',']).next() == Some(id))
        .unwrap_or_else(|| panic!("no run {id} in:\n{table}"));
    if head.contains(',') {
        let col = head.split(',').position(|h| h == "status");
        return row
            .split(',')
            .nth(col.expect("a status column"))
            .unwrap()
            .to_string();
    }
    let at = head.find(" status").expect("a status column") + 1;
    row[at..]
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// A run stopped by SIGINT is stored, and history (text, csv, json) and
/// show say it was interrupted; a run that ended by itself says complete.
/// A database from before the status column reads the same (worked out
/// from the stored result) and keeps it when it is migrated.
#[test]
fn defect_12_interrupted_runs_are_marked_in_history() {
    let (d, db) = scratch_db();
    let f = d.path().join("f");
    let dbarg = format!("--db={}", s(&db));
    let long = job(
        "long",
        &f,
        "--size=8M --rw=randread --time_based --runtime=60s",
    );
    let child = bin()
        .arg("run")
        .args(&long)
        .arg(&dbarg)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Laid out, then a moment into the timed loop.
    wait_until(Duration::from_secs(20), "layout of f", || {
        std::fs::metadata(&f).is_ok_and(|m| m.len() == 8 << 20)
    });
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code::SIGNAL_BASE + libc::SIGINT),
        "{err}"
    );
    assert!(err.contains("stored as run 1"), "{err}");
    let short = job("short", &f, "--size=8M --rw=read --number_ios=16 --verbose");
    let stored = run_into(&db, &[&short[..], std::slice::from_ref(&dbarg)].concat());
    assert!(stored.contains("stored as run 2"), "{stored}");

    let check = |db: &Path| {
        let h = stdout_text(with_db(db).arg("history"));
        assert_eq!(status_cell(&h, "1"), "interrupted", "{h}");
        assert_eq!(status_cell(&h, "2"), "complete", "{h}");
        let csv = stdout_text(with_db(db).args(["history", "--format", "csv"]));
        assert_eq!(status_cell(&csv, "1"), "interrupted", "{csv}");
        assert_eq!(status_cell(&csv, "2"), "complete", "{csv}");
        let rows = stdout_json(with_db(db).args(["history", "--format", "json"]));
        assert_eq!(json_item(&rows, "job", "long")["status"], "interrupted");
        assert_eq!(json_item(&rows, "job", "short")["status"], "complete");
        let show = stdout_text(with_db(db).args(["show", "1"]));
        let first = show.lines().next().unwrap();
        assert!(first.contains("interrupted"), "{show}");
        let show = stdout_text(with_db(db).args(["show", "2"]));
        assert!(show.lines().next().unwrap().contains("complete"), "{show}");
        for (id, want) in [("1", "interrupted"), ("2", "complete")] {
            let v = stdout_json(with_db(db).args(["show", id, "--output-format", "json"]));
            assert_eq!(v["iolab_run"]["status"], want, "run {id}");
        }
    };
    check(&db);

    // The same runs in a database of schema 3 (no status column): read as
    // they are, then migrated by the next command that stores.
    sql(
        &db,
        "DROP VIEW v_runs; DROP VIEW v_reps; DROP TABLE run_hosts;
         ALTER TABLE runs DROP COLUMN status; PRAGMA user_version = 3;",
    );
    check(&db);
    assert_eq!(query_one::<i64>(&db, "PRAGMA user_version"), 3, "read only");
    let doc = write_file(d.path(), "fio.json", FIO_RESULT);
    succeed(with_db(&db).args(["import", s(&doc)]));
    assert_eq!(
        query_one::<i64>(&db, "PRAGMA user_version"),
        iolab::store::schema::VERSION
    );
    let statuses: String = query_one(
        &db,
        "SELECT group_concat(id || '=' || status, ' ') FROM (SELECT * FROM runs ORDER BY id)",
    );
    assert_eq!(statuses, "1=interrupted 2=complete 3=complete");
    check(&db);
}

/// Writes `head`, then `filler` `n` times, then `tail` to `path`, fast.
fn write_big(path: &Path, head: &str, filler: &[u8], n: usize, tail: &str) {
    use std::io::Write;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    w.write_all(head.as_bytes()).unwrap();
    for _ in 0..n {
        w.write_all(filler).unwrap();
    }
    w.write_all(tail.as_bytes()).unwrap();
    w.flush().unwrap();
}

/// The start of one fio json+ job: `ios` reads in 100 bins (10 ns apart
/// from 1000 ns), its percentiles, fields iolab does not read, and an
/// array of them left open (closed by [`JOB_END`]).
fn fio_job(name: &str, ios: u64) -> String {
    let bins: Vec<String> = (0..100)
        .map(|b| format!("\"{}\": {}", 1000 + 10 * b, ios / 100))
        .collect();
    format!(
        r#"{{"jobname": "{name}", "groupid": 0, "error": 0,
        "job options": {{"rw": "randread", "bs": "4k"}},
        "read": {{"io_bytes": {bytes}, "total_ios": {ios},
          "clat_ns": {{"N": {ios}, "min": 1000, "max": 1990, "mean": 1495.0, "stddev": 290.0,
            "percentile": {{"50.000000": 1496, "99.000000": 1984}}, "bins": {{{bins}}}}},
          "lat_ns": {{"N": {ios}, "min": 1100, "max": 2090, "mean": 1595.0, "stddev": 290.0}}}},
        "write": {{"io_bytes": 0, "total_ios": 0}},
        "job_runtime": 1000, "usr_cpu": 10.0, "sys_cpu": 20.0,
        "iodepth_level": {{"1": 100.0}}, "latency_target": 0, "steadystate": ["#,
        bytes = ios * 4096,
        bins = bins.join(", ")
    )
}

/// What closes a job [`fio_job`] began.
const JOB_END: &str = r#"{"last": true}]}"#;

/// Importing a 200 MB fio result (8 jobs and the fields fio adds around
/// them, which iolab does not read) keeps only what it reads: its peak
/// RSS stays under 64 MiB (it was 3.5 GB). A document past the limits (a
/// 100 MB string, 100 MB of nesting, more jobs than fio runs) is refused
/// with the limit it passed, also within 64 MiB, never a panic.
#[test]
fn defect_06_import_memory_is_bounded() {
    const LIMIT_KIB: u64 = 64 << 10;
    let (d, db) = scratch_db();
    // Elements of fio's per-second logs and disk stats: 1 MB a chunk.
    let element = r#"{"name": "nvme0n1", "ios": [123456, 654321], "util": "99.50", "t": 1234.5},"#;
    let chunk = element.repeat((1 << 20) / element.len()).into_bytes();
    let big = d.path().join("big.json");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
    let mut put = |b: &[u8]| std::io::Write::write_all(&mut w, b).unwrap();
    put(b"fio: note: fio prints notes before its JSON\n");
    put(br#"{"fio version": "fio-3.33", "timestamp": 1, "global options": {"ioengine": "psync"}, "jobs": ["#);
    for j in 0..8 {
        put(if j == 0 { b"" } else { b", " });
        put(fio_job(&format!("j{j}"), 1000 * (j + 1)).as_bytes());
        for _ in 0..25 {
            put(&chunk);
        }
        put(JOB_END.as_bytes());
    }
    put(b"], \"disk_util\": []}\n");
    std::io::Write::flush(&mut w).unwrap();
    let size = std::fs::metadata(&big).unwrap().len();
    assert!(size > 200_000_000, "{size}");

    let end = peak_rss(with_db(&db).args(["import", s(&big)]));
    let (code, err, kib) = (end.code, end.stderr, end.peak_kib);
    assert_eq!(code, 0, "{err}");
    eprintln!("import of {size} bytes: peak RSS {kib} KiB");
    assert!(
        kib < LIMIT_KIB,
        "import of {size} bytes peaked at {kib} KiB"
    );
    assert!(
        err.contains("imported") && err.contains("show --source"),
        "{err}"
    );
    let v = stdout_json(with_db(&db).args(["show", "1", "--output-format", "json"]));
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 8);
    for (j, job) in jobs.iter().enumerate() {
        assert_eq!(job["jobname"], format!("j{j}"));
        assert_eq!(job["read"]["total_ios"], 1000 * (j as u64 + 1));
        let p50 = job["read"]["clat_ns"]["percentile"]["50.000000"]
            .as_u64()
            .unwrap();
        assert!((1480..=1510).contains(&p50), "bins read: p50 {p50}");
    }
    fails_with(
        with_db(&db).args(["show", "1", "--source"]),
        code::USAGE,
        "over",
    );

    // Past the limits: refused with the limit named, within the bound.
    let hostile = d.path().join("hostile.json");
    let cases: [(&str, &[u8], usize, &str, &str); 3] = [
        (
            "{\"jobs\": [], \"x\": \"",
            b"xxxxxxxxxxxxxxxx",
            100 << 16,
            "\"}",
            "a string longer than 1.0MiB",
        ),
        (
            "{\"jobs\": [], \"x\": ",
            b"[[[[[[[[[[[[[[[[",
            100 << 16,
            "",
            "nested deeper than 64 levels",
        ),
        (
            "{\"jobs\": [",
            b"{\"jobname\": \"j\"},",
            4097,
            "{\"jobname\": \"j\"}]}",
            "more than 4096 jobs",
        ),
    ];
    for (head, filler, n, tail, want) in cases {
        write_big(&hostile, head, filler, n, tail);
        let end = peak_rss(with_db(&db).args(["import", s(&hostile)]));
        let (code, err, kib) = (end.code, end.stderr, end.peak_kib);
        assert_eq!(code, code::USAGE, "{want}: {err}");
        assert_one_line(&err, &[s(&hostile), want]);
        eprintln!("refused ({want}): peak RSS {kib} KiB");
        assert!(kib < LIMIT_KIB, "{want}: peaked at {kib} KiB");
    }
    assert_eq!(query_one::<i64>(&db, "SELECT count(*) FROM runs"), 1);
}
