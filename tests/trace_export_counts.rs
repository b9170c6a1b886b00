//! The derived job does what the trace did, in count and pattern (issue
//! 34, point 9): ten tiny journal writes (12 and 4 bytes, rounded up to
//! 512-byte blocks) all run (io_size ended the job after two), a temp
//! file written half at random offsets keeps its random share (the
//! traced extent was too short for the rounded blocks, so sequential runs
//! wrapped and counted as random), section names are unique and pipes
//! are left out.

mod common;

use common::*;
use iolab::trace::{Event, Meta, Mode, Thread, Trace, calls, file};
use serde_json::Value;
use std::path::Path;

fn ev(t_us: u64, name: &str, f: u32, off: Option<u64>, n: i64) -> Event {
    Event {
        t_ns: t_us * 1000,
        pid: 100,
        tid: 1,
        call: calls::by_name(name).unwrap().0,
        fd: 3 + f as i32,
        file: Some(f),
        offset: off,
        len: n.max(0) as u64,
        flags: 0,
        result: n,
        lat_ns: 2000,
    }
}

/// Thread 1: ten journal writes of 12 and 4 bytes, one after the other,
/// and an fsync; 400 writes of 100 bytes to a temp file, every other one
/// at a random 100-byte slot of its first 10 KB, the rest where the
/// previous one ended; a write to a pipe; nine files named `x.pyc` in
/// different directories, read once each.
fn made(dir: &Path) -> Trace {
    let mut paths: Vec<String> = vec![
        s(&dir.join("db-journal")).into(),
        s(&dir.join("etilqs_tmp")).into(),
        "pipe:[1234]".into(),
    ];
    let mut evs = Vec::new();
    let mut t = 0;
    let mut off = 0;
    for i in 0..10 {
        let n = if i % 2 == 0 { 12 } else { 4 };
        t += 10;
        evs.push(ev(t, "pwrite64", 0, Some(off), n));
        off += n as u64;
    }
    evs.push(ev(t + 5, "fsync", 0, None, 0));
    let (mut end, mut x) = (0u64, 99u64);
    for i in 0..400 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let o = if i % 2 == 0 {
            (x >> 33) % 100 * 100
        } else {
            end
        };
        t += 10;
        evs.push(ev(t, "pwrite64", 1, Some(o), 100));
        end = o + 100;
    }
    evs.push(ev(t + 10, "write", 2, None, 7));
    for k in 0..9u32 {
        paths.push(s(&dir.join(format!("m{k}/x.pyc"))).into());
        evs.push(ev(t + 20 + u64::from(k), "pread64", 3 + k, Some(0), 2000));
    }
    let mut tr = Trace {
        meta: Meta {
            source: "test".into(),
            mode: Mode::Events,
            command: vec!["made-by-hand".into()],
            pid: 100,
            duration_ns: (t + 100) * 1000,
            ..Meta::default()
        },
        threads: vec![Thread {
            pid: 100,
            tid: 1,
            ppid: 1,
            comm: "sqlite".into(),
        }],
        paths,
        events: evs,
        ..Trace::default()
    };
    tr.tally_events();
    iolab::trace::pattern::analyse(&mut tr);
    tr
}

#[test]
fn the_derived_job_runs_every_traced_write_with_its_random_share() {
    let d = scratch();
    let t = made(d.path());
    let tf = d.path().join("made.trace");
    file::write(&tf, &t).unwrap();
    let run = d.path().join("run");
    let job = d.path().join("imitate.fio");
    let out = succeed(bin().args(["trace", "export"]).arg(&tf).args([
        "--format",
        "job",
        "--run",
        s(&run),
        "-o",
        s(&job),
        "-f",
        "json",
    ]));
    let v: Value = serde_json::from_slice(&out).unwrap();
    let rows = v.as_array().unwrap();
    let row = |name: &str| -> &Value {
        rows.iter()
            .find(|r| r["path"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("no {name} row in {v:#}"))
    };
    let j = row("db-journal");
    assert_eq!(
        (j["trace"]["ops"].as_u64(), j["run"]["ops"].as_u64()),
        (Some(10), Some(10))
    );
    let tmp = row("etilqs_tmp");
    assert_eq!(tmp["run"]["ops"], 400);
    let (a, b) = (
        tmp["trace"]["random_share"].as_f64().unwrap(),
        tmp["run"]["random_share"].as_f64().unwrap(),
    );
    assert!((0.4..0.6).contains(&a), "trace random share {a}");
    assert!((b - a).abs() <= 0.1, "run random share {b}, trace {a}");
    assert!(
        !rows
            .iter()
            .any(|r| r["path"].as_str().unwrap().starts_with("pipe:")),
        "{v:#}"
    );
    let text = std::fs::read_to_string(&job).unwrap();
    let mut names: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    let all = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all, "section names are unique: {text}");
    assert!(!text.contains("pipe"), "{text}");
    assert!(text.matches("x.pyc").count() >= 9, "{text}");
}
