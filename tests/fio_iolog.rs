//! fio's `write_iolog` (iolog v3; with a verify phase's reads), `--bandwidth-log`
//! (the aggregate bandwidth logs) and a `rw=read:N` hole at the end of a file, each
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

/// A write with a verify phase: fio logs the verify reads in its iolog
/// and per-I/O latency log as any read (they were missing from iolab's).
#[test]
fn verify_reads_are_in_the_iolog_and_the_latency_log_as_in_fio() {
    skip_unless_installed!("fio");
    let job = [
        "--name=v",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--verify=crc32c",
        "--write_iolog=io.log",
        "--write_lat_log=l",
    ];
    let [f, i] = [true, false].map(|fio| {
        let d = scratch();
        run_in(fio, d.path(), &job);
        let read = |name: &str| std::fs::read_to_string(d.path().join(name)).unwrap();
        // The I/O lines (open and close aside: see docs/fio-compat.md,
        // write_iolog), and the latency log's direction and size columns.
        let ios: Vec<String> = actions(&read("io.log"))
            .into_iter()
            .filter(|a| a.contains(" read ") || a.contains(" write "))
            .collect();
        let lat: Vec<String> = read("l_lat.1.log")
            .lines()
            .map(|l| l.split(", ").skip(2).take(2).collect::<Vec<_>>().join(" "))
            .collect();
        (ios, lat)
    });
    assert_eq!(i, f);
    assert_eq!(i.0.len(), 32, "16 writes, then the 16 read back: {:?}", i.0);
    assert_eq!(i.0[16], "v.0.0 read 0 4096");
    assert_eq!(i.1.iter().filter(|l| l.starts_with("0 ")).count(), 16);
    // Queued writes complete after the backlog's reads are issued: the
    // lines still go in issue order, as fio's.
    let d = scratch();
    let queued = [
        &job[..],
        &["--ioengine=libaio", "--iodepth=8", "--verify_backlog=3"],
    ]
    .concat();
    run_in(false, d.path(), &queued);
    let log = std::fs::read_to_string(d.path().join("io.log")).unwrap();
    let t = times(&log);
    assert!(
        t.windows(2).all(|w| w[0] <= w[1]),
        "times go forward:\n{log}"
    );
    assert_eq!(log.matches(" read ").count(), 16, "{log}");
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
