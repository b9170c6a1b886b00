//! `iolab trace --tracer strace`: commands and running processes traced
//! by the real strace, stored and shown; stopped by Ctrl-C, `--duration`;
//! and beside the ebpf tracer, the same calls seen by both.

mod common;

use common::traced::*;
use common::*;
use std::process::{Command, Stdio};

#[test]
fn strace_tracer_records_stores_and_shows() {
    skip_unless_installed!("strace");
    let (dir, f) = data(32);
    let (_db_dir, db) = scratch_db();
    let trace = dir.path().join("dd.trace");
    let out = stdout_text(
        with_db(&db)
            .args(["trace", "--tracer", "strace", "--events", "-o"])
            .arg(&trace)
            .arg("--")
            .args(dd(&f, 5))
            .stderr(Stdio::null()),
    );
    let t = TraceFile::read(&trace);
    let offs: Vec<_> = t.on("read", &f).iter().map(|e| e.offset).collect();
    assert_eq!(offs, (0..5).map(|i| Some(i * 4096)).collect::<Vec<_>>());
    assert_eq!(t.meta["mode"], "events");
    assert!(!t.meta["kernel"].as_str().unwrap().is_empty());
    let id: String = table_row(&out, "stored as run")
        .trim_start_matches("stored as run ")
        .into();
    let shown = stdout_text(with_db(&db).args(["show", &id]));
    assert!(shown.contains("strace tracer"), "{shown}");
    assert!(shown.contains(s(&f)), "{shown}");
    let v = stdout_json(with_db(&db).args(["show", &id, "-f", "json"]));
    assert_eq!(v["meta"]["exit_status"], 0);
    assert!(v["calls"]["read"]["count"].as_u64().unwrap() >= 5);
    // JSON alone on stdout (the command's output goes to stderr), the
    // command's exit status kept, and iolab's own (as strace's).
    let cmd = "trace --tracer strace -f json --no-store -- sh -c";
    let o = bin()
        .args(cmd.split(' '))
        .arg("echo hello; exit 3")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        err,
        "hello\niolab: error: the traced command exited with status 3\n"
    );
    let v = parse_json(&o.stdout);
    assert_eq!(v["meta"]["exit_status"], 3);
    assert_eq!(v["meta"]["source"], "strace");
    assert_eq!(v["meta"]["mode"], "histograms");
}

#[test]
fn strace_tracer_attached_resolves_fds_opened_before() {
    skip_unless_installed!("strace");
    let (_dir, f) = data(16);
    let script = "
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
print('ready', flush=True)
end = time.time() + 10
while time.time() < end:
    os.pread(fd, 512, 4096)
    time.sleep(0.002)
";
    let mut py = KillOnDrop(
        Command::new(python())
            .args(["-c", script, s(&f)])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(py.0.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "ready");
    let pid = py.0.id().to_string();
    let dir = scratch();
    let trace = dir.path().join("p.trace");
    succeed(
        bin()
            .args([
                "trace",
                "--tracer",
                "strace",
                "--no-store",
                "--events",
                "-o",
            ])
            .arg(&trace)
            .args(["-p", &pid, "--duration", "500ms"]),
    );
    let t = TraceFile::read(&trace);
    let p = t.on("pread64", &f);
    assert!(p.len() >= 10, "{} preads in 500 ms", p.len());
    assert!(p.iter().all(|e| e.offset == Some(4096) && e.result == 512));
    assert!(p.iter().all(|e| e.pid.to_string() == pid));
    assert_eq!(t.meta["pid"].to_string(), pid);
    assert!(t.meta["exit_status"].is_null());
    assert!(t.meta["command"].as_array().unwrap().is_empty());
    assert!(
        py.0.try_wait().unwrap().is_none(),
        "strace detached: the process runs on"
    );
}

/// A child process killed when the test ends, even when it fails.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn strace_tracer_without_strace_says_which_package() {
    let err = fails_with(
        bin().env("PATH", "/nonexistent").args([
            "trace",
            "--tracer",
            "strace",
            "--no-store",
            "--",
            "/bin/true",
        ]),
        1,
        "strace",
    );
    assert_one_line(&err, &["install the package strace"]);
}

#[test]
fn strace_tracer_stops_on_ctrl_c_after_duration_and_on_a_missing_pid() {
    skip_unless_installed!("strace");
    // SIGINT stops strace, which stops the command it started: promptly,
    // long before the command would end, with 128 + SIGINT. The bounds are
    // liveness checks (the stop takes well under a second; the command
    // would run 300 s), not timings.
    let args = [
        "trace",
        "--tracer",
        "strace",
        "--no-store",
        "--",
        "sleep",
        "300",
    ];
    let t0 = std::time::Instant::now();
    let (code, err) = exit_after_signal(&args, std::time::Duration::from_millis(700), libc::SIGINT);
    assert_eq!(code, 128 + libc::SIGINT, "{err}");
    assert!(
        t0.elapsed().as_secs() < 60,
        "stopped after {:?}",
        t0.elapsed()
    );
    // --duration: the same stop, and a trace that ends well.
    let t0 = std::time::Instant::now();
    let cmd = "trace --tracer strace --no-store -f json --duration 300ms -- sleep 300";
    let v = stdout_json(bin().args(cmd.split(' ')));
    assert!(
        t0.elapsed().as_secs() < 60,
        "stopped after {:?}",
        t0.elapsed()
    );
    // At least its 300 ms (a lower bound), and ended by them, not by the
    // command (a liveness bound: 100 times the duration).
    let secs = v["meta"]["duration_ns"].as_f64().unwrap() / 1e9;
    assert!((0.3..30.0).contains(&secs), "traced for {secs} s");
    assert!(v["meta"]["exit_status"].is_null(), "sleep was stopped");
    let err = fails_with(
        bin().args("trace --tracer strace --no-store -p 999999999".split(' ')),
        code::USAGE,
        "-p 999999999",
    );
    assert_one_line(&err, &["no such process"]);
}

/// A call: its name, offset, length, flags and result.
type Call = (String, Option<u64>, u64, u64, i64);

/// The calls on `f` of a trace, as (call, offset, length, flags, result)
/// sorted, and how many threads and processes made them.
fn calls_on(t: &TraceFile, f: &std::path::Path) -> (Vec<Call>, usize, usize) {
    let mut calls = Vec::new();
    let (mut tids, mut pids) = (Vec::new(), Vec::new());
    // Not close, nor the failed open: the ebpf tracer names no file for them.
    for name in ["pread64", "fadvise64", "openat"] {
        for e in t.on(name, f) {
            // An fd number is the kernel's choice, not the program's.
            let result = if name == "openat" {
                e.result.min(0)
            } else {
                e.result
            };
            calls.push((e.name.clone(), e.offset, e.len, e.flags, result));
            tids.push(e.tid);
            pids.push(e.pid);
        }
    }
    calls.sort();
    for v in [&mut tids, &mut pids] {
        v.sort();
        v.dedup();
    }
    (calls, tids.len(), pids.len())
}

#[test]
fn strace_and_ebpf_see_the_same_calls() {
    skip_unless_installed!("strace");
    if !common::trace::can("strace_and_ebpf_see_the_same_calls") {
        return;
    }
    let (dir, f) = data(128);
    let script = format!("{PREADS}\n{THREADS}");
    let mut traces = Vec::new();
    for tracer in ["strace", "ebpf"] {
        let out = dir.path().join(format!("{tracer}.trace"));
        succeed(
            bin()
                .args(["trace", "--no-store", "--events", "--tracer", tracer, "-o"])
                .arg(&out)
                .args(["--", python(), "-c", &script, s(&f)])
                .stdout(Stdio::null()),
        );
        traces.push(TraceFile::read(&out));
    }
    let (strace, ebpf) = (calls_on(&traces[0], &f), calls_on(&traces[1], &f));
    // 5 + 8 + 1 preads, 4 fadvise and 4 opens.
    assert_eq!(strace.0.len(), 22, "{:?}", strace.0);
    assert_eq!(strace, ebpf);
    assert_eq!((strace.1, strace.2), (4, 2), "threads and processes");
}
