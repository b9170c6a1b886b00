//! One table of exit codes for every subcommand (README, "Exit codes";
//! `iolab --help`): each class checked for run, tree, lab, compare and
//! import wherever the class can happen to that command.
//!
//! 0 done · 1 failed · 2 bad usage or job file · 3 file system full ·
//! 4 refused as unsafe · 130 SIGINT · 143 SIGTERM

mod common;
use common::*;
use std::time::Duration;

/// Asserts `iolab ARGS` (into `db`) exits with `exit` naming `want`.
fn exits(db: &std::path::Path, args: &[&str], exit: i32, want: &str) {
    fails_with(with_db(db).args(args), exit, want);
}

#[test]
fn run_exit_codes() {
    let (d, f) = scratch_file();
    let db = d.path().join("e.db");
    let fa = format!("--filename={}", s(&f));
    succeed(with_db(&db).args(["run", "--name=ok", &fa, "--size=1M"]));
    // 1: the run went on and an I/O failed (nowait misses the cache).
    let cold = ["run", "--name=n", &fa, "--size=1M", "--rw=randread"];
    let nowait = [
        &cold[..],
        &["--ioengine=pvsync2", "--nowait=1", "--cache=cold"],
    ]
    .concat();
    exits(
        &db,
        &nowait,
        code::FAILED,
        "Resource temporarily unavailable",
    );
    // 1: a block that does not verify (a laid-out file has no headers).
    // (verify_state_save=0: no fio state file left in the working directory.)
    let verify = [
        "--rw=write",
        "--verify=crc32c",
        "--verify_only=1",
        "--verify_state_save=0",
    ];
    let bad = [&["run", "--name=v", &fa, "--size=1M"][..], &verify].concat();
    exits(&db, &bad, code::FAILED, "verify: bad magic header");
    exits(
        &db,
        &["run", "--name=x", &fa, "--bs=9q"],
        code::USAGE,
        "size suffix 'q'",
    );
    let foreign = d.path().join("foreign");
    std::fs::write(&foreign, vec![1u8; 4096]).unwrap();
    let fo = format!("--filename={}", s(&foreign));
    let write = ["run", "--name=w", &fo, "--size=4k", "--rw=write"];
    exits(&db, &write, code::REFUSED, "refusing to write");
    assert_eq!(std::fs::read(&foreign).unwrap(), vec![1u8; 4096]);
    let long = [
        "run",
        "--name=l",
        &fa,
        "--size=1M",
        "--time_based",
        "--runtime=30s",
    ];
    for (sig, exit) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let (got, err) = exit_after_signal(&long, Duration::from_millis(800), sig);
        assert_eq!(got, exit, "{err}");
        assert!(err.contains("interrupted by SIG"), "{err}");
    }
    if let Some(fs) = small_tmpfs(d.path(), "small", "2m", "run_exit_codes (no space)") {
        let big = format!("--filename={}", s(&fs.0.join("big")));
        let full = ["run", "--name=b", &big, "--size=8M"];
        exits(&db, &full, code::NO_SPACE, "not enough space");
    }
}

#[test]
fn tree_exit_codes() {
    let (d, db) = scratch_db();
    let top = d.path().join("t");
    let shape = [
        "--dirs", "2", "--levels", "1", "--files", "2", "--size", "1k",
    ];
    succeed(with_db(&db).args(["tree", "create", s(&top)]).args(shape));
    let sys = ["tree", "copy", s(&top), "/sys/iolab-exit-code-test"];
    exits(
        &db,
        &sys,
        code::FAILED,
        "cannot create /sys/iolab-exit-code-test",
    );
    let bad = ["tree", "create", "x", "--dirs", "0", "--levels", "2"];
    exits(&db, &bad, code::USAGE, "makes no directories");
    let missing = d.path().join("missing");
    for cmd in ["walk", "remove"] {
        let args = ["tree", cmd, s(&missing)];
        exits(&db, &args, code::USAGE, "missing");
    }
    exits(
        &db,
        &["tree", "create", s(&top)],
        code::REFUSED,
        "not empty",
    );
    for (sig, exit) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let big = d.path().join(format!("big{sig}"));
        let many = ["tree", "create", s(&big), "-d", "10", "-l", "4", "-f", "20"];
        let (got, err) = exit_after_signal(&many, Duration::from_millis(500), sig);
        assert_eq!(got, exit, "{err}");
    }
    if let Some(fs) = small_tmpfs(d.path(), "small", "2m", "tree_exit_codes (no space)") {
        let t = fs.0.join("t");
        let full = [
            "tree",
            "create",
            s(&t),
            "-d",
            "4",
            "-l",
            "2",
            "-f",
            "10",
            "-s",
            "64k",
        ];
        exits(&db, &full, code::NO_SPACE, "ENOSPC");
    }
}

#[test]
fn lab_exit_codes() {
    let (d, db) = scratch_db();
    let out = d.path().join("out");
    let here = ["--dir", s(d.path()), "--out", s(&out)];
    let sys = ["lab", "small-reads", "--dir", "/sys", "--out", s(&out)];
    exits(&db, &sys, code::FAILED, "/sys/iolab-scratch");
    exits(&db, &["lab", "nosuchlab"], code::USAGE, "nosuchlab");
    let bad = [&["lab", "prefetch", "--size", "12x"][..], &here].concat();
    exits(&db, &bad, code::USAGE, "--size '12x'");
    // 30,000 cold reads per distance: signalled as the first distance
    // starts, the lab is surely mid-run.
    let long = [
        &[
            "lab", "prefetch", "--quick", "--size", "256M", "--ops", "30000",
        ][..],
        &here,
        &["--db", s(&db)],
    ]
    .concat();
    for (sig, exit) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let end = process::signal_when(&long, "distance 0", Duration::ZERO, sig);
        assert_eq!(end.code, exit, "{}", end.stderr);
    }
    let scratch: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("iolab-scratch"))
        .collect();
    assert!(
        scratch.is_empty(),
        "the scratch directory goes with the signal"
    );
    if let Some(fs) = small_tmpfs(d.path(), "small", "2m", "lab_exit_codes (no space)") {
        let small = ["--dir", s(&fs.0), "--out", s(&out)];
        let full = [
            &["lab", "small-reads", "--quick", "--size", "8M"][..],
            &small,
        ]
        .concat();
        exits(&db, &full, code::NO_SPACE, "not enough space");
    }
}

#[test]
fn compare_exit_codes() {
    let (d, f) = scratch_file();
    let db = d.path().join("c.db");
    let side = |extra: &str| format!("--name=s --filename={} --size=1M {extra}", s(&f));
    let (a, b) = (side("--rw=read"), side("--rw=randread"));
    succeed(with_db(&db).args(["compare", "--repeat", "2", &a, &b]));
    let nowait = side("--rw=randread --ioengine=pvsync2 --nowait=1 --cache=cold");
    exits(
        &db,
        &["compare", "--repeat", "1", &a, &nowait],
        code::FAILED,
        "Resource temporarily",
    );
    exits(
        &db,
        &["compare", &a, "no-such-thing"],
        code::USAGE,
        "B: 'no-such-thing'",
    );
    // Runs of two workloads under one label: refused unless --force.
    for rw in ["read", "randread"] {
        let run = format!("--name=s --filename={} --size=1M --rw={rw}", s(&f));
        succeed(
            with_db(&db)
                .args(["run", "--label", "mixed"])
                .args(run.split(' ')),
        );
    }
    exits(
        &db,
        &["compare", "mixed", &a],
        code::USAGE,
        "different workloads: rw read (run ",
    );
    let foreign = d.path().join("foreign");
    std::fs::write(&foreign, vec![1u8; 4096]).unwrap();
    let write = format!("--name=w --filename={} --size=4k --rw=write", s(&foreign));
    exits(
        &db,
        &["compare", "--repeat", "1", &a, &write],
        code::REFUSED,
        "refusing to write",
    );
    let long = side("--rw=read --time_based --runtime=30s");
    let args = ["compare", "--repeat", "1", &a, &long];
    for (sig, exit) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let (got, err) = exit_after_signal(&args, Duration::from_millis(1500), sig);
        assert_eq!(got, exit, "{err}");
    }
    if let Some(fs) = small_tmpfs(d.path(), "small", "2m", "compare_exit_codes (no space)") {
        let full = format!("--name=b --filename={} --size=8M", s(&fs.0.join("b")));
        exits(
            &db,
            &["compare", "--repeat", "1", &a, &full],
            code::NO_SPACE,
            "not enough space",
        );
    }
}

#[test]
fn import_exit_codes() {
    let (d, db) = scratch_db();
    let doc = d.path().join("fio.json");
    std::fs::write(
        &doc,
        r#"{"fio version": "fio-3.33", "jobs": [{"jobname": "j"}]}"#,
    )
    .unwrap();
    succeed(with_db(&db).args(["import", s(&doc)]));
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, r#"{"jobs": 3}"#).unwrap();
    exits(
        &db,
        &["import", s(&bad)],
        code::USAGE,
        "not a fio JSON result",
    );
    exits(
        &db,
        &["import", "/no/such.json"],
        code::USAGE,
        "cannot read /no/such.json",
    );
    // A file that is not an iolab database is bad usage (2), whether the
    // command stores or only reads.
    let foreign = d.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("PRAGMA application_id = 7; CREATE TABLE t (x);")
        .unwrap();
    for args in [&["import", s(&doc)][..], &["history"]] {
        exits(&foreign, args, code::USAGE, "not an iolab database");
    }
    // The database refuses the write: the command failed (1), not the input.
    refuse_inserts(&db);
    exits(&db, &["import", s(&doc)], code::FAILED, "disk says no");
}

#[test]
fn trace_exit_codes() {
    let (d, db) = scratch_db();
    // Bad usage (2): nothing to trace, a file that is not a trace or strace
    // output, an unknown tracer.
    exits(
        &db,
        &["trace", "--no-store"],
        code::USAGE,
        "nothing to trace",
    );
    let junk = write_file(d.path(), "junk.txt", "hello\n");
    exits(
        &db,
        &["trace", "import", s(&junk), "--no-store"],
        code::USAGE,
        "junk.txt:1:",
    );
    exits(&db, &["replay", s(&junk)], code::USAGE, "junk.txt:1:");
    exits(
        &db,
        &["trace", "--tracer", "dtrace", "--", "true"],
        code::USAGE,
        "unknown tracer",
    );
    // Refused (4): a file to write that exists is never replaced.
    let strace = write_file(
        d.path(),
        "a.strace",
        "1 1795560000.000001 read(3</etc/hostname>, \"x\", 1) = 1 <0.000002>\n",
    );
    let taken = write_file(d.path(), "taken.trace", "mine");
    exits(
        &db,
        &["trace", "import", s(&strace), "-o", s(&taken), "--no-store"],
        code::REFUSED,
        "never overwrites",
    );
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "mine");
}

/// Makes the database at `db` refuse every new run ("disk says no").
fn refuse_inserts(db: &std::path::Path) {
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER no BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'disk says no'); END;",
        )
        .unwrap();
}

/// A run that cannot be stored is a failed command (1) for every
/// subcommand; the ones that measured still show what they measured.
#[test]
fn a_database_that_refuses_the_write_fails_every_command() {
    let (d, f) = scratch_file();
    let db = d.path().join("r.db");
    succeed(with_db(&db).args([
        "run",
        "--name=ok",
        &format!("--filename={}", s(&f)),
        "--size=64k",
    ]));
    refuse_inserts(&db);
    let job = format!("--name=j --filename={} --size=64k", s(&f));
    let job_args: Vec<&str> = job.split(' ').collect();
    let top = d.path().join("t");
    let out = d.path().join("lab");
    let commands: Vec<(Vec<&str>, &str)> = vec![
        ([&["run"][..], &job_args].concat(), "read: IOPS"),
        (
            vec!["tree", "create", s(&top), "-d", "1", "-l", "1", "-f", "2"],
            "files",
        ),
        (
            [&["sweep", "--vary", "bs=4k,8k"][..], &job_args].concat(),
            "bs",
        ),
        (vec!["compare", "--repeat", "1", &job, &job], "verdict on "),
        (
            vec![
                "lab",
                "small-reads",
                "--quick",
                "--dir",
                s(d.path()),
                "--out",
                s(&out),
            ],
            "",
        ),
    ];
    for (args, shown) in commands {
        let o = with_db(&db).args(&args).output().unwrap();
        let (stdout, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert_eq!(o.status.code(), Some(code::FAILED), "{args:?}: {err}");
        assert!(err.contains("disk says no"), "{args:?}: {err}");
        assert!(!err.contains("stored"), "{args:?} claims it stored: {err}");
        assert!(stdout.contains(shown), "{args:?} hid its results: {stdout}");
    }
}
