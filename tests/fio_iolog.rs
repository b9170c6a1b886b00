//! fio's `write_iolog` (iolog v3), `--bandwidth-log` (the aggregate
//! bandwidth logs) and a `rw=read:N` hole at the end of a file, each
//! against fio 3.33 on the same job.

mod common;
use common::*;
use std::path::Path;

/// The I/O lines of an iolog without their times: (file, action, offset, length).
fn actions(log: &str) -> Vec<String> {
    log.lines()
        .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string())
        .collect()
}

/// The times of an iolog's lines, µs.
fn times(log: &str) -> Vec<u64> {
    log.lines()
        .skip(1)
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

const HOLES: &[&str] = &[
    "--name=foo",
    "--size=5m",
    "--rw=read:512k",
    "--bs=1m",
    "--direct=1",
    "--norandommap",
    "--write_iolog=io.log",
];

#[test]
fn write_iolog_logs_the_same_ios_as_fio_and_appends() {
    skip_unless_installed!("fio");
    let [(fd, fv), (id, iv)] = [true, false].map(|fio| {
        let d = scratch();
        let v = run_in(fio, d.path(), HOLES);
        (d, v)
    });
    let read = |d: &Path| std::fs::read_to_string(d.join("io.log")).unwrap();
    let (f, i) = (read(fd.path()), read(id.path()));
    assert_eq!(actions(&i), actions(&f), "iolab:\n{i}\nfio:\n{f}");
    assert_eq!(i.lines().next(), Some("fio version 3 iolog"));
    // 5 MiB with a 512 KiB hole after each 1 MiB: reads at 0, 1.5, 3 MiB;
    // the fourth, at 4.5 MiB, would cross the end: fio ends the loop there
    // (an offset at or past the end wraps to the start instead).
    assert!(i.contains("foo.0.0 read 3145728 1048576"), "{i}");
    let kib = |v: &serde_json::Value| v["jobs"][0]["read"]["io_kbytes"].as_u64();
    assert_eq!((kib(&iv), kib(&fv)), (Some(3072), Some(3072)));
    let t = times(&i);
    assert!(
        t.windows(2).all(|w| w[0] <= w[1]),
        "times go forward: {t:?}"
    );
    // fio opens the log for appending: a second run adds its section.
    run_in(false, id.path(), HOLES);
    let again = read(id.path());
    assert_eq!(again.matches("fio version 3 iolog").count(), 2);
    assert_eq!(actions(&again).len(), 2 * actions(&i).len());
}

#[test]
fn bandwidth_log_writes_the_three_aggregate_logs() {
    skip_unless_installed!("fio");
    let d = scratch();
    let args = [
        "--name=w",
        "--ioengine=null",
        "--size=256m",
        "--bs=4k",
        "--rw=write",
        "--time_based",
        "--runtime=2",
        "--bandwidth-log",
    ];
    let v = run_in(false, d.path(), &args);
    for name in ["agg-read_bw.log", "agg-write_bw.log", "agg-trim_bw.log"] {
        assert!(d.path().join(name).exists(), "{name} missing");
    }
    let write = std::fs::read_to_string(d.path().join("agg-write_bw.log")).unwrap();
    let lines: Vec<Vec<u64>> = write
        .lines()
        .map(|l| l.split(", ").map(|x| x.parse().unwrap()).collect())
        .collect();
    assert!(lines.len() >= 2, "a sample a second: {write}");
    assert!(lines.iter().all(|l| l.len() == 5 && l[2] == 1 && l[1] > 0));
    // The samples' mean is the run's bandwidth.
    let mean = lines.iter().map(|l| l[1]).sum::<u64>() as f64 / lines.len() as f64;
    let bw = v["jobs"][0]["write"]["bw"].as_f64().unwrap();
    assert!(
        (mean / bw - 1.0).abs() < 0.5,
        "mean {mean} KiB/s vs bw {bw}"
    );
    let read = std::fs::read_to_string(d.path().join("agg-read_bw.log")).unwrap();
    assert!(read.is_empty(), "no reads: {read}");
    // fio makes the same three files.
    let f = scratch();
    run_in(true, f.path(), &args);
    for name in ["agg-read_bw.log", "agg-write_bw.log", "agg-trim_bw.log"] {
        assert!(f.path().join(name).exists(), "fio made no {name}");
    }
}
