//! `iolab replay`: a trace's calls issued again on scratch copies, with
//! traces written by hand over real files (`replay_trace`); with strace
//! and the ebpf tracer: tests/replay_tools.rs.

mod common;
mod replay_trace;

use common::*;
use iolab::trace::{Event, Trace, file};
use replay_trace::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[test]
fn max_speed_replays_every_read_and_leaves_the_original_alone() {
    let d = scratch();
    let (f, t) = random_reads(d.path(), 1000);
    let before = fingerprint(&f);
    std::thread::sleep(Duration::from_millis(20));
    let v = replay_json(&[s(&t), "--speed", "max"]);
    let pr = &v["calls"]["pread64"];
    assert_eq!(pr["original"]["count"], 1000, "{v:#}");
    assert_eq!(pr["replayed"]["count"], 1000, "{v:#}");
    assert_eq!(pr["replayed"]["errors"], 0, "{v:#}");
    // The copy holds the data: every read got its 4 KiB.
    assert_eq!(pr["replayed"]["bytes"], 1000 * 4096, "{v:#}");
    assert_eq!(v["calls"]["openat"]["replayed"]["count"], 1);
    assert_eq!(v["calls"]["close"]["replayed"]["count"], 1);
    assert_eq!(v["replayed"]["ops"], 1002);
    assert_eq!(v["made"]["copied"], 1);
    assert_eq!(v["made"]["copied_bytes"], 4 << 20);
    assert!(v["lag"].is_null(), "no schedule at max speed: {v:#}");
    assert_eq!(fingerprint(&f), before, "the original changed");
    let dir = PathBuf::from(v["dir"].as_str().unwrap());
    assert_eq!(v["kept"], false);
    assert!(!dir.exists(), "scratch {} left behind", dir.display());
    assert!(
        !dir.starts_with(d.path()),
        "scratch is a temporary directory"
    );
}

#[test]
fn text_shows_calls_side_by_side_and_skipped_calls() {
    let d = scratch();
    let f = data_file(d.path(), "data", 64 << 10);
    let evs = vec![
        open(0, 0, libc::O_RDONLY, 3),
        pread(10, 3, 0, 0, 4096),
        Event {
            len: 8192,
            ..ev(20, "mmap", 3, Some(0))
        },
        Event {
            len: 8192,
            ..ev(30, "madvise", -1, None)
        },
        ev(40, "io_uring_enter", 5, None),
        Event {
            len: 10,
            result: 10,
            ..ev(50, "write", 1, Some(1))
        },
        open(55, 2, libc::O_RDONLY, 4),
        Event {
            offset: Some(0),
            len: 100,
            result: 100,
            ..ev(60, "read", 4, Some(2))
        },
        ev(65, "close", 4, None),
        ev(70, "close", 3, Some(0)),
    ];
    let t = trace_file(
        d.path(),
        &[&f, Path::new("pipe:[1234]"), Path::new("/proc/self/stat")],
        evs,
    );
    let (out, err) = succeed_text(bin().args(["replay", s(&t), "--speed", "max"]));
    assert_eq!(err, "", "nothing on stderr when it succeeds");
    let row = table_row(&out, "pread64");
    assert_eq!(row.split_whitespace().nth(1), Some("1"), "{out}");
    assert_eq!(row.split_whitespace().nth(2), Some("1"), "{out}");
    for (call, why) in [
        ("mmap", "memory mappings"),
        ("madvise", "memory mappings"),
        ("io_uring_enter", "io_uring"),
        ("write", "pipe, socket"),
        ("read", "/proc, /sys, /dev"),
        ("openat", "/proc, /sys, /dev"),
        ("close", "/proc, /sys, /dev"),
    ] {
        let row = table_row(&out, &format!("{call} "));
        let line = out
            .lines()
            .find(|l| l.starts_with(call) && l.contains(why))
            .unwrap_or_else(|| panic!("no skipped {call} ({why}) in:\n{out}\n{row}"));
        assert_eq!(line.split_whitespace().nth(1), Some("1"), "{line}");
    }
    let v = replay_json(&[s(&t), "--speed", "max"]);
    let skipped: u64 = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["count"].as_u64().unwrap())
        .sum();
    assert_eq!(skipped, 7, "{v:#}");
    assert_eq!(v["replayed"]["ops"], 3, "{v:#}");
}

#[test]
fn original_pace_keeps_the_schedule() {
    let d = scratch();
    let f = data_file(d.path(), "data", 64 << 10);
    let evs = vec![
        pread(0, 3, 0, 0, 4096),
        pread(100 * MS, 3, 0, 8192, 4096),
        pread(200 * MS, 3, 0, 16384, 4096),
    ];
    let t = trace_file(d.path(), &[&f], evs);
    let t0 = Instant::now();
    let v = replay_json(&[s(&t)]);
    assert!(t0.elapsed() >= Duration::from_millis(200));
    assert_eq!(v["speed"], "original");
    assert_eq!(v["calls"]["pread64"]["replayed"]["count"], 3, "{v:#}");
    assert_eq!(v["lag"]["count"], 3, "{v:#}");
    // Twice as fast: the last call is due at 100 ms.
    let t0 = Instant::now();
    let v = replay_json(&[s(&t), "--speed", "2"]);
    assert!(t0.elapsed() >= Duration::from_millis(100));
    assert_eq!(v["lag"]["count"], 3, "{v:#}");
    // At max speed the schedule is not kept: calls 100 s apart replay in
    // far less than their 200 s (microseconds here; 10 s is a liveness
    // bound, not a timing).
    let far = vec![
        pread(0, 3, 0, 0, 4096),
        pread(100_000 * MS, 3, 0, 8192, 4096),
        pread(200_000 * MS, 3, 0, 16384, 4096),
    ];
    let sub = d.path().join("far");
    std::fs::create_dir(&sub).unwrap();
    let t = trace_file(&sub, &[&f], far);
    let v = replay_json(&[s(&t), "--speed", "max"]);
    assert_eq!(v["calls"]["pread64"]["replayed"]["count"], 3, "{v:#}");
    assert!(v["replayed"]["time_s"].as_f64().unwrap() < 10.0, "{v:#}");
}

#[test]
fn target_refuses_a_directory_iolab_did_not_make() {
    let d = scratch();
    let (f, t) = random_reads(d.path(), 10);
    let foreign = d.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    let theirs = write_file(&foreign, "theirs", "keep me");
    let (code, err) = fail(bin().args(["replay", s(&t), "--target", s(&foreign)]));
    assert_eq!(code, code::REFUSED, "{err}");
    assert_one_line(
        &err,
        &["--target", "theirs", "was not made by iolab replay"],
    );
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "keep me");

    // A new directory: the copy is at the original's absolute path under it.
    let target = d.path().join("target");
    let v = replay_json(&[s(&t), "--target", s(&target), "--keep", "--speed", "max"]);
    assert_eq!(v["calls"]["pread64"]["replayed"]["count"], 10, "{v:#}");
    let copy = target.join(&s(&f)[1..]);
    assert_copy_up_to_what_was_read(&copy, &f, 10);
    // Made by a replay: taken again, and emptied at the end without --keep.
    let v = replay_json(&[s(&t), "--target", s(&target), "--speed", "max"]);
    assert_eq!(v["calls"]["pread64"]["replayed"]["count"], 10, "{v:#}");
    assert!(target.is_dir());
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}

#[test]
fn files_the_program_created_are_created_in_the_scratch_tree() {
    let d = scratch();
    let new = d.path().join("made").join("new.log");
    let mut evs = vec![open(0, 0, libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY, 3)];
    for i in 0..4u64 {
        evs.push(Event {
            offset: Some(i * 4096),
            len: 4096,
            result: 4096,
            ..ev(10 + i, "pwrite64", 3, Some(0))
        });
    }
    evs.push(ev(20, "fsync", 3, Some(0)));
    evs.push(ev(30, "close", 3, Some(0)));
    // Writes over a file that exists go to its copy.
    let old = data_file(d.path(), "old", 64 << 10);
    let before = fingerprint(&old);
    evs.push(open(40, 1, libc::O_RDWR | libc::O_TRUNC, 4));
    evs.push(Event {
        offset: Some(0),
        len: 4096,
        result: 4096,
        ..ev(50, "pwrite64", 4, Some(1))
    });
    evs.push(ev(60, "fdatasync", 4, Some(1)));
    let t = trace_file(d.path(), &[&new, &old], evs);
    let v = replay_json(&[s(&t), "--speed", "max"]);
    assert_eq!(v["made"]["created_by_replay"], 1, "{v:#}");
    let w = &v["calls"]["pwrite64"]["replayed"];
    assert_eq!(
        (w["count"].as_u64(), w["errors"].as_u64()),
        (Some(5), Some(0)),
        "{v:#}"
    );
    assert_eq!(v["calls"]["fdatasync"]["replayed"]["errors"], 0, "{v:#}");
    assert_eq!(fingerprint(&old), before, "the original changed");
    assert_eq!(v["calls"]["openat"]["replayed"]["errors"], 0, "{v:#}");
    assert_eq!(v["calls"]["fsync"]["replayed"]["count"], 1, "{v:#}");
    assert!(!new.exists() && !new.parent().unwrap().exists());
}

#[test]
fn ctrl_c_stops_the_replay_and_removes_the_scratch_tree() {
    let d = scratch();
    let f = data_file(d.path(), "data", 64 << 10);
    // First a write that makes the copy 4 KiB longer (the sign the replay
    // is under way, seen from outside), then a read a second for 20 s.
    let mut evs = vec![Event {
        offset: Some(64 << 10),
        len: 4096,
        result: 4096,
        ..ev(0, "pwrite64", 3, Some(0))
    }];
    evs.extend((1..20).map(|i| pread(i * 1000 * MS, 3, 0, 0, 4096)));
    let t = trace_file(d.path(), &[&f], evs);
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let child = bin()
        .args(["replay", s(&t), "-f", "json"])
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Signalled once the write was replayed, not after a guessed sleep.
    wait_until(Duration::from_secs(60), "the replay's first call", || {
        files_under(&tmp)
            .iter()
            .any(|p| std::fs::metadata(p).is_ok_and(|m| m.len() == 68 << 10))
    });
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 1, "scratch made");
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    // One document: what was replayed before the signal.
    let v = parse_json(&out.stdout);
    assert_eq!(v["stopped"], libc::SIGINT, "{v:#}");
    assert_eq!(v["calls"]["pwrite64"]["replayed"]["count"], 1, "{v:#}");
    let n = v["calls"]["pread64"]["replayed"]["count"].as_u64().unwrap();
    assert!(n < 19, "{v:#}");
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "scratch left");
}

#[test]
fn bad_speed_and_a_trace_without_events_are_usage_errors() {
    let d = scratch();
    let (_f, t) = random_reads(d.path(), 1);
    let (code, err) = fail(bin().args(["replay", s(&t), "--speed", "fast"]));
    assert_eq!(code, code::USAGE);
    assert_one_line(&err, &["--speed 'fast'", "original, max or a factor"]);
    let empty = d.path().join("empty.trace");
    let mut t = Trace::default();
    t.meta.source = "test".into();
    file::write(&empty, &t).unwrap();
    let (code, err) = fail(bin().args(["replay", s(&empty)]));
    assert_eq!(code, code::USAGE);
    assert_one_line(&err, &["no events to replay", "--events"]);
    // As JSON, the error is a document on stdout.
    let out = bin()
        .args(["replay", s(&empty), "-f", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(code::USAGE));
    let v = parse_json(&out.stdout);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no events"),
        "{v}"
    );
}

#[test]
fn keep_keeps_the_scratch_copies() {
    let d = scratch();
    let (f, t) = random_reads(d.path(), 4);
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let v = stdout_json(
        bin()
            .args(["replay", s(&t), "--speed", "max", "--keep", "-f", "json"])
            .env("TMPDIR", &tmp),
    );
    assert_eq!(v["kept"], true);
    let dir = PathBuf::from(v["dir"].as_str().unwrap());
    assert!(dir.starts_with(&tmp), "{v:#}");
    let copy = dir.join(&s(&f)[1..]);
    assert_copy_up_to_what_was_read(&copy, &f, 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The copy of `orig` a replay of `random_reads(n)` made: the original's
/// length, its data up to the end of the furthest read, holes after it (a
/// replay copies only what the trace touched: tests/replay_space.rs).
fn assert_copy_up_to_what_was_read(copy: &Path, orig: &Path, n: u64) {
    let end = (0..n)
        .map(|i| (i * 397 % 1024) * 4096 + 4096)
        .max()
        .unwrap() as usize;
    let (c, o) = (std::fs::read(copy).unwrap(), std::fs::read(orig).unwrap());
    assert_eq!(c.len(), o.len());
    assert!(c[..end] == o[..end], "the data read is copied");
    assert!(c[end..].iter().all(|&b| b == 0), "nothing past it");
}

/// The regular files under `dir`, at any depth.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(files_under(&p)),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
    out
}
