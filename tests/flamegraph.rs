//! `--flamegraph`: perf samples the timed part of the run; the SVG shows
//! the read path. Skips with the reason when perf is missing or refused.

mod common;
use common::*;

#[test]
fn flamegraph_shows_the_read_path() {
    skip_unless_installed!("perf");
    let (d, f) = scratch_file();
    let svg = d.path().join("out.svg");
    let out = bin()
        .args(["run", "--verbose", "--flamegraph", s(&svg)])
        .args(job(
            "c",
            &f,
            "--size=64M --rw=read --bs=4k --loops=4 --cache=warm",
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && err.contains("--flamegraph") {
        eprintln!("SKIP flamegraph_shows_the_read_path: perf does not work here: {err}");
        return;
    }
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("flamegraph ("),
        "--verbose says where it went: {err}"
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<?xml") || text.contains("<svg"),
        "not an SVG"
    );
    let frames = ["pread64", "vfs_read", "filemap_read", "__x64_sys_pread64"];
    assert!(
        frames.iter().any(|f| text.contains(f)),
        "no read-path frame in the flamegraph"
    );
    // The run's own output is still printed.
    assert!(String::from_utf8_lossy(&out.stdout).contains("read: IOPS="));
}

#[test]
fn flamegraph_leaves_out_the_warm_up() {
    skip_unless_installed!("perf");
    let (d, f) = scratch_file();
    let svg = d.path().join("warm.svg");
    // Warming reads 512 MiB; the timed part reads 128 MiB of it: long
    // enough (100 ms and more) for perf, enabled through its control FIFO,
    // to take many samples even on a loaded machine (8 MiB, a few ms, once
    // drew no pread64 frame at all).
    let out = bin()
        .args(["run", "--flamegraph", s(&svg)])
        .args(job(
            "w",
            &f,
            "--size=512M --rw=read --bs=4k --number_ios=32768 --cache=warm",
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && err.contains("--flamegraph") {
        eprintln!("SKIP flamegraph_leaves_out_the_warm_up: perf does not work here: {err}");
        return;
    }
    assert!(out.status.success(), "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("pread64"), "the timed reads are drawn");
    assert!(
        !text.contains("pagecache::warm"),
        "the warm-up (iolab::sys::pagecache::warm) is not in the flamegraph"
    );
}

#[test]
fn flamegraph_without_perf_is_a_clear_error() {
    let (d, f) = scratch_file();
    let empty = d.path().join("bin");
    std::fs::create_dir(&empty).unwrap();
    let (_, err) = fail(
        bin()
            .env("PATH", &empty)
            .args(["run", "--flamegraph", s(&d.path().join("x.svg"))])
            .args(job("c", &f, "--size=1M")),
    );
    assert_one_line(&err, &["--flamegraph: needs perf, which is not installed"]);
    assert!(!d.path().join("x.svg").exists());
    // A missing output directory is refused before anything runs.
    let (code, err) = fail(
        bin()
            .args(["run", "--flamegraph", "/nonexistent-dir/x.svg"])
            .args(job("c", &f, "--size=1M")),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("--flamegraph /nonexistent-dir/x.svg: directory"),
        "{err}"
    );
}
