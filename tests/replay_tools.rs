//! `iolab replay` seen by real tools: strace shows the calls the replay
//! makes; the ebpf tracer records iolab's own job for it to replay.

mod common;
mod replay_trace;

use common::*;
use iolab::trace::{Event, file};
use replay_trace::*;
use std::path::Path;

/// The calls `calls` `iolab replay TRACE --speed max` makes, as strace
/// shows them (`-f -y`).
fn strace_replay(dir: &Path, t: &Path, calls: &str) -> String {
    let log = dir.join("strace.log");
    succeed(
        std::process::Command::new("strace")
            .args(["-f", "-qq", "-y", "-s", "0", "-e"])
            .args([&format!("trace={calls}"), "-o", s(&log)])
            .arg(assert_cmd::cargo::cargo_bin("iolab"))
            .args(["replay", s(t), "--speed", "max", "-f", "json"]),
    );
    std::fs::read_to_string(&log).unwrap()
}

#[test]
fn strace_sees_the_recorded_calls_on_the_copy() {
    if !have("strace", "strace_sees_the_recorded_calls_on_the_copy") {
        return;
    }
    let d = scratch();
    let f = data_file(d.path(), "data", 1 << 20);
    let mut evs = vec![
        open(0, 0, libc::O_RDONLY, 3),
        Event {
            offset: Some(0),
            flags: libc::POSIX_FADV_DONTNEED as u64,
            ..ev(10, "fadvise64", 3, Some(0))
        },
    ];
    let mut want = Vec::new();
    for i in 0..50u64 {
        let (off, len) = ((i * 37 % 200) * 4096, 4096 << (i % 3));
        want.push((off, len));
        evs.push(pread(100 + i * 100, 3, 0, off, len));
    }
    // A readv of 3 iovecs that moved 12 KiB: one read of 12 KiB.
    evs.push(Event {
        offset: Some(65536),
        len: 3,
        result: 12288,
        ..ev(10_000, "readv", 3, Some(0))
    });
    want.push((65536, 12288));
    let t = trace_file(d.path(), &[&f], evs);
    let log = strace_replay(d.path(), &t, "pread64,fadvise64");
    let copy = format!("{}>", s(&f));
    // The replay's own thread, not the main one (which evicts the copy).
    let main = log.split_whitespace().next().unwrap();
    let on_copy: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&copy) && !l.starts_with(&format!("{main} ")))
        .collect();
    assert!(
        on_copy.iter().all(|l| l.contains("/iolab-replay-")),
        "a call on the original:\n{log}"
    );
    let got: Vec<(u64, u64)> = on_copy
        .iter()
        .filter(|l| l.contains("pread64("))
        .map(|l| {
            let args = &l[..l.rfind(") =").unwrap()];
            let mut n = args.rsplit(", ").map(|x| x.trim().parse::<u64>().unwrap());
            let off = n.next().unwrap();
            (off, n.next().unwrap())
        })
        .collect();
    assert_eq!(got, want, "{log}");
    let advice: Vec<&&str> = on_copy
        .iter()
        .filter(|l| l.contains("fadvise64("))
        .collect();
    assert_eq!(advice.len(), 1, "{log}");
    assert!(advice[0].contains(", 0, 0, POSIX_FADV_DONTNEED)"), "{log}");
}

/// The issue's done-means, the counting half (IOPS: bench/replay.py): a
/// replay of a trace of iolab's own random-read job issues every pread of
/// it, on the copy.
#[test]
fn replay_of_iolabs_randread_job_issues_every_pread() {
    if !common::trace::can("replay_of_iolabs_randread_job_issues_every_pread") {
        return;
    }
    let d = scratch();
    let f = d.path().join("data");
    let job = [
        "run",
        "--no-store",
        "--name=r",
        "--rw=randread",
        "--bs=4k",
        "--size=8m",
        &format!("--filename={}", s(&f)),
        "--ioengine=psync",
    ];
    succeed(bin().args(job)); // lays the file out, outside the trace
    let before = fingerprint(&f);
    let t = d.path().join("r.trace");
    succeed(
        bin()
            .args(["trace", "--events", "--no-store", "-o", s(&t), "--"])
            .arg(assert_cmd::cargo::cargo_bin("iolab"))
            .args(job),
    );
    let trace = file::read(&t).unwrap();
    let on_data = |name: &str| {
        trace
            .events
            .iter()
            .filter(|e| e.name() == name && trace.path_of(e) == Some(s(&f)))
            .count() as u64
    };
    assert_eq!(on_data("pread64"), 2048, "8 MiB in 4 KiB reads");
    let v = replay_json(&[s(&t), "--speed", "max"]);
    let p = &v["calls"]["pread64"];
    assert_eq!(p["replayed"]["count"], p["original"]["count"], "{v:#}");
    assert_eq!(p["replayed"]["bytes"], p["original"]["bytes"], "{v:#}");
    assert_eq!(p["replayed"]["errors"], 0, "{v:#}");
    assert_eq!(
        v["calls"]["fadvise64"]["replayed"]["count"].as_u64(),
        Some(on_data("fadvise64")),
        "the job's cache eviction is replayed: {v:#}"
    );
    assert_eq!(fingerprint(&f), before, "the original changed");
    assert!(!Path::new(v["dir"].as_str().unwrap()).exists());
}

/// A descriptor used after its close with no open between was duplicated
/// where the trace did not see it (dup, fcntl): its file is opened again
/// as it was, with its advice (iolab's own job does this: the main thread
/// opens the file, advises random reads, the job's thread reads it).
#[test]
fn a_descriptor_used_after_its_close_keeps_its_flags_and_advice() {
    if !have(
        "strace",
        "a_descriptor_used_after_its_close_keeps_its_flags_and_advice",
    ) {
        return;
    }
    let d = scratch();
    let f = data_file(d.path(), "data", 64 << 10);
    let mut evs = vec![
        open(0, 0, libc::O_RDONLY | libc::O_NOATIME, 3),
        Event {
            offset: Some(0),
            flags: libc::POSIX_FADV_RANDOM as u64,
            ..ev(10, "fadvise64", 3, Some(0))
        },
        ev(20, "close", 3, None),
    ];
    for i in 0..3 {
        evs.push(Event {
            tid: 101,
            ..pread(30 + i, 3, 0, i * 4096, 4096)
        });
    }
    let t = trace_file(d.path(), &[&f], evs);
    let log = strace_replay(d.path(), &t, "openat,fadvise64,pread64");
    let main = log.split_whitespace().next().unwrap();
    let copy = s(&f).to_string();
    let ours: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&copy) && !l.starts_with(&format!("{main} ")))
        .collect();
    let opens: Vec<&&str> = ours.iter().filter(|l| l.contains("openat(")).collect();
    assert_eq!(opens.len(), 2, "{log}");
    assert!(opens.iter().all(|l| l.contains("O_NOATIME")), "{log}");
    let advice = ours
        .iter()
        .filter(|l| l.contains("POSIX_FADV_RANDOM"))
        .count();
    assert_eq!(advice, 2, "{log}");
    assert_eq!(
        ours.iter().filter(|l| l.contains("pread64(")).count(),
        3,
        "{log}"
    );
}
