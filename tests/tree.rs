//! `iolab tree`: the shape made is counted with find(1); walk, read, copy
//! and remove are checked against the file system; the time limit and a
//! full file system stop cleanly; foreign trees are not removed.

mod common;
use common::*;
use serde_json::Value;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

/// `find DIR -type T | wc -l`, by find itself.
fn find_count(dir: &Path, kind: &str) -> u64 {
    let out = succeed(Command::new("find").args([s(dir), "-type", kind]));
    String::from_utf8_lossy(&out).lines().count() as u64
}

/// Runs `iolab tree ARGS --output-format json` storing into `db`, asserts
/// it exits with `code`; returns the JSON result and stderr.
fn tree_json(db: &Path, args: &[&str], code: i32) -> (Value, String) {
    let out = with_db(db)
        .arg("tree")
        .args(args)
        .args(["--output-format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{err}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_eq!(out.status.code(), Some(code), "{err}");
    (v, err)
}

/// `iolab tree create TOP OPTS` (OPTS split at whitespace), as [`tree_json`].
fn tree_create(db: &Path, top: &Path, opts: &str, code: i32) -> (Value, String) {
    let mut args = vec!["create", s(top)];
    args.extend(opts.split_whitespace());
    tree_json(db, &args, code)
}

/// The phase called `name` in a tree result.
fn phase<'a>(v: &'a Value, name: &str) -> &'a Value {
    json_item(&v["phases"], "name", name)
}

#[test]
fn create_makes_exactly_the_fdtree_shape() {
    let (d, db) = scratch_db();
    let top = d.path().join("t");
    let opts = "--dirs 10 --levels 3 --files 10 --size 4k --threads 2";
    let (v, err) = tree_create(&db, &top, opts, 0);
    assert_eq!(find_count(&top, "d"), 1111);
    assert_eq!(find_count(&top, "f"), 11110);
    let big = succeed(Command::new("find").args([s(&top), "-type", "f", "!", "-size", "4096c"]));
    assert!(big.is_empty(), "every file is 4096 bytes");
    let dirs = phase(&v, "dir create");
    let files = phase(&v, "file create");
    assert_eq!(dirs["dirs"], 1110, "below the top");
    assert_eq!(dirs["latency_ns"]["mkdir"]["N"], 1110);
    assert_eq!(files["files"], 11110);
    assert_eq!(files["bytes"], 11110 * 4096);
    assert_eq!(files["latency_ns"]["create"]["N"], 11110);
    assert_eq!(files["latency_ns"]["write"]["N"], 11110);
    assert_eq!(files["latency_ns"]["close"]["N"], 11110);
    assert_eq!(v["stopped"], Value::Null);
    assert!(err.contains("stored as run 1"), "{err}");
    // The table in normal output shows the same numbers.
    let r = stdout_text(with_db(&db).args(["show", "1"]));
    assert!(r.contains("1111 directories, 11110 files"), "{r}");
    let fc = table_row(&r, "file create");
    assert!(fc.contains("11110"), "{fc}");

    // walk and read see what find sees.
    let (w, _) = tree_json(&db, &["walk", s(&top)], 0);
    assert_eq!(phase(&w, "walk")["dirs"], 1111);
    assert_eq!(phase(&w, "walk")["files"], 11110);
    assert_eq!(phase(&w, "walk")["latency_ns"]["readdir"]["N"], 1111);
    assert_eq!(phase(&w, "walk")["latency_ns"]["stat"]["N"], 1110 + 11110);
    let (r, _) = tree_json(&db, &["read", s(&top)], 0);
    assert_eq!(phase(&r, "read")["bytes"], 11110 * 4096);

    // Refuses a non-empty directory.
    let create = |top: &Path| {
        let mut c = with_db(&db);
        c.args(["tree", "create", s(top), "--dirs", "1", "--levels", "1"]);
        c
    };
    fails_with(&mut create(&top), code::REFUSED, "not empty");
    // Missing parents are made (mkdir -p), only the top is iolab's: the
    // tree goes, its parents stay.
    let deep = d.path().join("no/such/t");
    assert!(create(&deep).status().unwrap().success());
    assert!(deep.join("d0").is_dir());
    let mut rm = with_db(&db);
    assert!(
        rm.args(["tree", "remove", s(&deep)])
            .status()
            .unwrap()
            .success()
    );
    assert!(!deep.exists() && d.path().join("no/such").is_dir());
    // A parent that is a file is an error naming the path.
    std::fs::write(d.path().join("file"), b"x").unwrap();
    fails_with(&mut create(&d.path().join("file/t")), 1, "Not a directory");
}

#[test]
fn copy_is_rsync_a_and_remove_removes_only_ours() {
    let (d, db) = scratch_db();
    let top = d.path().join("src");
    let (v, _) = tree_create(&db, &top, "-d 3 -l 2 -f 4 -s 10000 --sync", 0);
    // --sync: a timed syncfs phase that carries the device writes.
    let sync = phase(&v, "sync");
    assert_eq!(sync["latency_ns"]["fsync"]["N"], 1);
    if let Some(d) = sync["counters"]["disks"].as_array().and_then(|d| d.first()) {
        assert!(d["write_ios"].as_u64().unwrap() > 0, "{sync}");
    }
    // Odd modes, a symlink and an old mtime, to see them kept.
    std::fs::set_permissions(top.join("d1/f2"), std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::set_permissions(top.join("d2"), std::fs::Permissions::from_mode(0o750)).unwrap();
    std::os::unix::fs::symlink("d1/f2", top.join("link")).unwrap();
    succeed(Command::new("touch").args(["-d", "2001-02-03 04:05:06", s(&top.join("d0/f1"))]));
    let dst = d.path().join("dst");
    let (v, _) = tree_json(&db, &["copy", s(&top), s(&dst)], 0);
    succeed(Command::new("diff").args(["-r", "--no-dereference", s(&top), s(&dst)]));
    for rel in ["d1/f2", "d2", "d0/f1", "d0", "link", "d2/d1/f3"] {
        let (a, b) = (
            std::fs::symlink_metadata(top.join(rel)).unwrap(),
            std::fs::symlink_metadata(dst.join(rel)).unwrap(),
        );
        assert_eq!(a.mode(), b.mode(), "{rel} mode");
        assert_eq!(a.mtime(), b.mtime(), "{rel} mtime");
        assert_eq!(a.mtime_nsec(), b.mtime_nsec(), "{rel} mtime ns");
        assert_eq!((a.uid(), a.gid()), (b.uid(), b.gid()), "{rel} owner");
    }
    let c = phase(&v, "copy");
    let files = find_count(&top, "f") + find_count(&top, "l");
    assert_eq!(c["files"].as_u64().unwrap(), files);
    assert_eq!(
        c["inodes_created"].as_u64().unwrap(),
        files + find_count(&top, "d") - 1
    );

    // A directory iolab did not make is refused and left alone...
    let foreign = d.path().join("foreign");
    std::fs::create_dir_all(foreign.join("keep")).unwrap();
    std::fs::write(foreign.join("keep/x"), b"x").unwrap();
    fails_with(
        with_db(&db).args(["tree", "remove", s(&foreign)]),
        code::REFUSED,
        "--not-mine",
    );
    assert!(foreign.join("keep/x").exists());
    // ...unless told explicitly.
    succeed(with_db(&db).args(["tree", "remove", s(&foreign), "--not-mine"]));
    assert!(!foreign.exists());

    // The copy is iolab's: removed, phases counted.
    let (v, _) = tree_json(&db, &["remove", s(&dst)], 0);
    assert!(!dst.exists());
    assert_eq!(
        phase(&v, "file remove")["inodes_removed"].as_u64().unwrap(),
        files
    );
    assert_eq!(
        phase(&v, "dir remove")["dirs"].as_u64().unwrap(),
        find_count(&top, "d")
    );
    assert!(top.exists(), "the source is untouched");
}

#[test]
fn time_limit_stops_cleanly_and_reports_what_was_made() {
    let (d, db) = scratch_db();
    let top = d.path().join("big");
    let opts = "-d 10 -l 4 -f 20 -s 1k --time-limit 300ms";
    let (v, err) = tree_create(&db, &top, opts, 0);
    assert!(err.contains("time limit"), "{err}");
    assert_eq!(v["stopped"], "time limit reached");
    let made_dirs: u64 = phase(&v, "dir create")["dirs"].as_u64().unwrap() + 1;
    let made_files: u64 = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["files"].as_u64().unwrap())
        .sum();
    assert!(made_files < 11111 * 20, "stopped before the end");
    assert_eq!(find_count(&top, "d"), made_dirs);
    assert_eq!(find_count(&top, "f"), made_files);
    let h = stdout_text(with_db(&db).arg("history"));
    assert!(h.contains("tree create"), "stored: {h}");
}

/// A 2 MiB tmpfs fills up: the run stops at ENOSPC with exit 3, says so,
/// reports what exists (counted by find), is stored, and touches nothing
/// outside its directory.
#[test]
fn enospc_stops_cleanly() {
    let d = scratch();
    let Some(fs) = small_tmpfs(d.path(), "small", "2m", "enospc_stops_cleanly") else {
        return;
    };
    let mnt = fs.0.clone();
    std::fs::write(mnt.join("neighbour"), b"keep me").unwrap();
    let db = d.path().join("e.db");
    let top = mnt.join("t");
    let (v, err) = tree_create(&db, &top, "-d 4 -l 2 -f 10 -s 64k", 3);
    assert!(err.contains("ENOSPC"), "{err}");
    assert!(v["stopped"].as_str().unwrap().contains("ENOSPC"), "{v}");
    let made_files: u64 = phase(&v, "file create")["files"].as_u64().unwrap();
    assert!(made_files > 0 && made_files < 210, "{made_files}");
    assert_eq!(find_count(&top, "f"), made_files);
    assert_eq!(find_count(&top, "d"), 21);
    let mut names: Vec<String> = std::fs::read_dir(&mnt)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["neighbour", "t"],
        "nothing else made beside the tree"
    );
    assert_eq!(std::fs::read(mnt.join("neighbour")).unwrap(), b"keep me");
    let h = stdout_text(with_db(&db).args(["history", "--format", "csv"]));
    assert_eq!(h.lines().count(), 2, "stored: {h}");
}

/// Seed 003's table: two tree runs compared with % change, inodes included;
/// the shape read from a job file section.
#[test]
fn tree_runs_compare_and_job_file_shape() {
    let (d, db) = scratch_db();
    let job_file = write_file(
        d.path(),
        "trees.fio",
        "[small]\ndirs=2\nlevels=2\nfiles=3\nsize=2k\n\n[large]\ndirs=3\nlevels=2\nfiles=5\nsize=8k\n",
    );
    for (name, section) in [("a", "small"), ("b", "large")] {
        succeed(with_db(&db).args([
            "tree",
            "create",
            s(&d.path().join(name)),
            "--job",
            &format!("{}:{section}", s(&job_file)),
            "--label",
            name,
        ]));
    }
    assert_eq!(find_count(&d.path().join("a"), "f"), 7 * 3);
    assert_eq!(find_count(&d.path().join("b"), "f"), 13 * 5);
    let t = stdout_text(with_db(&db).args(["compare", "a", "b", "--all"]));
    let inodes = table_row(&t, "inodes");
    // a: 6 dirs + 21 files = 27; b: 12 dirs + 65 files = 77.
    assert!(
        inodes.contains("27") && inodes.contains("77") && inodes.contains("+185.2%"),
        "{inodes}"
    );
    for row in ["time (s)", "reads", "writes", "bytes"] {
        assert!(t.lines().any(|l| l.starts_with(row)), "no {row} row: {t}");
    }
    // Trees are judged on their run time (which way depends on the
    // machine's load: the larger tree is not always slower to make).
    let verdict = t
        .lines()
        .find(|l| l.starts_with("verdict on time (s): B ran "));
    assert!(
        verdict.is_some_and(|l| l.contains(" than A, not tested: 1 run per side")),
        "{t}"
    );
    let nope = format!("{}:nope", s(&job_file));
    let c = d.path().join("c");
    fails_with(
        with_db(&db).args(["tree", "create", s(&c), "--job", &nope]),
        2,
        "no section [nope]",
    );
}
