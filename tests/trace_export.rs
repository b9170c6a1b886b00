//! `iolab trace export`: the iolog replays under fio with the trace's op
//! counts; the derived job, run by iolab, reads with the trace's sizes and
//! random share; what the job file says and refuses.

mod common;

use common::*;
use iolab::trace::{Event, Meta, Mode, Thread, Trace, calls, file};
use serde_json::Value;
use std::path::{Path, PathBuf};

const MIB: u64 = 1 << 20;

/// An event of `name` by thread `tid` on path `f`.
fn ev(t_us: u64, tid: u32, name: &str, f: u32, off: Option<u64>, n: i64) -> Event {
    Event {
        t_ns: t_us * 1000,
        pid: 100,
        tid,
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

/// A trace made by hand, as the tracer would record it: thread 1 opens
/// `data` and does `n` preads, 70% of 4 KiB at a random 4 KiB block and
/// 30% of 64 KiB where the previous read ended (back at 0 past the end),
/// a few pwrites and an fsync; thread 2 reads `other` from start to end
/// with read(2), at the file position.
fn made_trace(data: &Path, other: &Path, n: u64) -> Trace {
    let mut ev_ = Vec::new();
    let mut t = 0;
    ev_.push(ev(t, 1, "openat", 0, None, 3));
    let (mut end, mut x) = (0u64, 12345u64);
    for i in 0..n {
        t += 20;
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let (off, len) = if (x >> 33) % 10 < 7 {
            ((x >> 40) % 256 * 4096, 4096)
        } else if end + 65536 <= MIB {
            (end, 65536)
        } else {
            (0, 65536)
        };
        ev_.push(ev(t, 1, "pread64", 0, Some(off), len));
        end = off + len as u64;
        if i % 100 == 99 {
            ev_.push(ev(t + 5, 1, "pwrite64", 0, Some(off), 512));
            ev_.push(ev(t + 10, 1, "fsync", 0, None, 0));
        }
    }
    ev_.push(ev(t + 20, 1, "close", 0, None, 0));
    ev_.push(ev(7, 2, "openat", 1, None, 4));
    for i in 0..64 {
        ev_.push(ev(9 + i * 30, 2, "read", 1, Some(i * 8192), 8192));
    }
    ev_.push(ev(9 + 64 * 30, 2, "read", 1, Some(64 * 8192), 0));
    ev_.sort_by_key(|e| e.t_ns);
    let mut tr = Trace {
        meta: Meta {
            source: "test".into(),
            mode: Mode::Events,
            command: vec!["made-by-hand".into()],
            pid: 100,
            duration_ns: (t + 100) * 1000,
            ..Meta::default()
        },
        threads: vec![
            Thread {
                pid: 100,
                tid: 1,
                ppid: 1,
                comm: "main".into(),
            },
            Thread {
                pid: 100,
                tid: 2,
                ppid: 1,
                comm: "scan".into(),
            },
        ],
        paths: vec![s(data).into(), s(other).into()],
        events: ev_,
        ..Trace::default()
    };
    tr.tally_events();
    iolab::trace::pattern::analyse(&mut tr);
    tr
}

/// Writes `t` as a trace file in `dir`.
fn trace_file(dir: &Path, t: &Trace) -> PathBuf {
    let p = dir.join("made.trace");
    file::write(&p, t).unwrap();
    p
}

/// Writes `len` bytes of a pattern to `path`.
fn fill(path: &Path, len: u64) {
    std::fs::write(path, vec![0x5a; len as usize]).unwrap();
}

/// The trace's figures per thread and direction: (reads, writes).
fn counts(t: &Trace, tid: u32) -> (u64, u64) {
    let of = |name: &str| {
        t.events
            .iter()
            .filter(|e| e.tid == tid && e.name() == name && e.result > 0 && e.offset.is_some())
            .count() as u64
    };
    (of("pread64") + of("read"), of("pwrite64") + of("write"))
}

fn export(args: &[&str]) -> std::process::Command {
    let mut c = bin();
    c.args(["trace", "export"]).args(args);
    c
}

/// `iolab trace export TF --format iolog -o PREFIX --dir COPIES`, which
/// must succeed; its (stdout, stderr).
fn export_iolog(tf: &Path, prefix: &Path, copies: &Path) -> (String, String) {
    succeed_text(&mut export(&[
        s(tf),
        "--format",
        "iolog",
        "-o",
        s(prefix),
        "--dir",
        s(copies),
    ]))
}

#[test]
fn iolog_replays_under_fio_with_the_trace_op_counts() {
    skip_unless_installed!("fio");
    let d = scratch();
    let (data, other) = (d.path().join("data"), d.path().join("other"));
    let t = made_trace(&data, &other, 600);
    let tf = trace_file(d.path(), &t);
    // Replayed on copies in a directory of their own.
    let copies = d.path().join("copies");
    std::fs::create_dir(&copies).unwrap();
    fill(&copies.join("data"), MIB);
    fill(&copies.join("other"), 64 * 8192);
    let prefix = d.path().join("made.iolog");
    let (out, err) = export_iolog(&tf, &prefix, &copies);
    assert_eq!((out.as_str(), err.as_str()), ("", ""));
    let job = d.path().join("made.fio");
    let log1 = d.path().join("made.1.iolog");
    let text = std::fs::read_to_string(&log1).unwrap();
    assert!(text.starts_with("fio version 3 iolog\n"), "{text}");
    assert!(text.contains(&format!("{} sync 0 0", s(&copies.join("data")))));
    assert!(
        !text.contains(s(&data)),
        "the traced path is not replayed on"
    );
    let v = fio_json(&[s(&job)]);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "one job per thread");
    for (tid, j) in [(1, &jobs[0]), (2, &jobs[1])] {
        assert_eq!(j["jobname"], format!("thread-{tid}"));
        let (r, w) = counts(&t, tid);
        assert_eq!(
            j["read"]["total_ios"].as_u64(),
            Some(r),
            "thread {tid} reads"
        );
        assert_eq!(
            j["write"]["total_ios"].as_u64(),
            Some(w),
            "thread {tid} writes"
        );
        assert_eq!(j["error"], 0);
    }
    assert_eq!(counts(&t, 1).1, 6);
    assert_eq!(jobs[0]["sync"]["total_ios"], 6, "the fsyncs");
    // Nothing is replaced.
    let (code, err) = fail(&mut export(&[
        s(&tf),
        "--format",
        "iolog",
        "-o",
        s(&prefix),
    ]));
    assert_eq!(code, code::REFUSED, "{err}");
    assert!(err.contains("made.1.iolog"), "{err}");
}

/// The `sizes` shares of a `bssplit` string: size → percent.
fn shares(b: &str) -> Vec<(String, f64)> {
    b.split(':')
        .map(|p| {
            let (s, n) = p.split_once('/').unwrap_or((p, "100"));
            (s.to_string(), n.parse().unwrap())
        })
        .collect()
}

/// `a` within 10% of `b`.
fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.1 * b.abs()
}

/// The read row `r` of a `--run` comparison: the trace did 3000 reads, a
/// random share between 60% and 80%, sizes 4k and 64k; the run's random
/// share, sizes' shares and size percentiles are within 10% of those.
fn assert_reads_alike(r: &Value) {
    let (tr, ru) = (&r["trace"], &r["run"]);
    assert_eq!(tr["ops"], 3000);
    let (a, b) = (
        tr["random_share"].as_f64().unwrap(),
        ru["random_share"].as_f64().unwrap(),
    );
    assert!((0.6..0.8).contains(&a), "trace random share {a}");
    assert!(near(b, a), "run random share {b}, trace {a}");
    let (ts, rs) = (
        shares(tr["bssplit"].as_str().unwrap()),
        shares(ru["bssplit"].as_str().unwrap()),
    );
    assert_eq!(
        ts.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
        ["4k", "64k"]
    );
    assert_eq!(ts.len(), rs.len(), "{ts:?} {rs:?}");
    for ((sa, pa), (sb, pb)) in ts.iter().zip(&rs) {
        assert_eq!(sa, sb);
        assert!(near(*pb, *pa), "{sa}: run {pb}%, trace {pa}%");
    }
    for k in ["size_p50", "size_p90"] {
        assert!(
            near(ru[k].as_f64().unwrap(), tr[k].as_f64().unwrap()),
            "{k}: {r:#}"
        );
    }
}

#[test]
fn derived_job_run_by_iolab_reads_like_the_trace() {
    let d = scratch();
    let (data, other) = (d.path().join("data"), d.path().join("other"));
    let t = made_trace(&data, &other, 3000);
    let tf = trace_file(d.path(), &t);
    let run = d.path().join("run");
    let job = d.path().join("imitate.fio");
    let v = stdout_json(&mut export(&[
        s(&tf),
        "--format",
        "job",
        "--run",
        s(&run),
        "-o",
        s(&job),
        "-f",
        "json",
    ]));
    let row = |dir: &str| -> &Value {
        v.as_array()
            .unwrap()
            .iter()
            .find(|r| r["path"] == s(&data) && r["dir"] == dir)
            .unwrap_or_else(|| panic!("no {dir} row in {v:#}"))
    };
    let r = row("read");
    assert_reads_alike(r);
    // number_ios ends the job: all its I/Os, read or written as rwmixread draws.
    let w = row("write");
    assert_eq!(w["trace"]["ops"], 30);
    let n = |v: &Value| v["run"]["ops"].as_u64().unwrap();
    assert_eq!(n(r) + n(w), 3030);
    assert!(near(n(r) as f64, 3000.0), "{r:#}");
    // The job file written beside: every option says where it came from.
    let text = std::fs::read_to_string(&job).unwrap();
    assert!(text.contains("bssplit=4k/"), "{text}");
    assert!(!text.contains("write_iolog"), "{text}");
    // The other thread's sequential reads of `other`.
    let o = v
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == s(&other))
        .unwrap();
    assert_eq!(o["run"]["ops"], 64);
    assert_eq!(o["run"]["random_share"], 0.0);
    assert_eq!(o["run"]["bssplit"], "8k");
}

#[test]
fn job_goes_to_stdout_fio_and_iolab_parse_it() {
    let d = scratch();
    let t = made_trace(&d.path().join("data"), &d.path().join("other"), 200);
    let tf = trace_file(d.path(), &t);
    let (text, err) = succeed_text(&mut export(&[
        s(&tf),
        "--format",
        "job",
        "--dir",
        "/nonexistent",
    ]));
    assert_eq!(err, "");
    for want in [
        "[t1]\n",
        "filename=/nonexistent/data\n",
        "rw=randrw\n",
        "number_ios=202\n",
        "fsync=1\n",
        "[t2]\n",
        "rw=read\n",
        "bs=8k\n",
        "number_ios=64\n",
        "fadvise_hint=0\n",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
    let job = write_file(d.path(), "made.fio", &text);
    succeed(bin().args(["run", "--parse-only", s(&job)]));
    if have("fio", "job_goes_to_stdout_fio_and_iolab_parse_it") {
        succeed(std::process::Command::new("fio").args(["--parse-only", s(&job)]));
    }
    // -o is never replaced (refused, exit 4); with --run, nothing runs then.
    let (code, err) = fail(&mut export(&[s(&tf), "--format", "job", "-o", s(&job)]));
    assert_eq!(code, code::REFUSED, "{err}");
    let run = d.path().join("run");
    let (code, err) = fail(&mut export(&[
        s(&tf),
        "--format",
        "job",
        "-o",
        s(&job),
        "--run",
        s(&run),
    ]));
    assert_eq!(code, code::REFUSED, "{err}");
    assert!(err.contains("made.fio"), "{err}");
    assert!(!run.exists());
}

#[test]
fn refused_without_events_or_with_threads_and_no_output() {
    let d = scratch();
    let mut t = made_trace(&d.path().join("data"), &d.path().join("other"), 10);
    let tf = trace_file(d.path(), &t);
    let (code, err) = fail(&mut export(&[s(&tf), "--format", "iolog"]));
    assert_eq!(code, code::USAGE);
    assert!(err.contains("2 threads did I/O: give -o PREFIX"), "{err}");
    t.events.clear();
    t.meta.mode = Mode::Histograms;
    let hf = d.path().join("hist.trace");
    file::write(&hf, &t).unwrap();
    let run = d.path().join("run");
    for args in [&["iolog"][..], &["job"], &["job", "--run", s(&run)]] {
        let (code, err) = fail(export(&[s(&hf), "--format"]).args(args));
        assert_eq!(code, code::USAGE);
        assert!(
            err.contains("record it with `iolab trace --events`"),
            "{err}"
        );
    }
    assert!(!run.exists(), "nothing made for a trace that cannot run");
    let (code, err) = fail(&mut export(&[
        s(&tf),
        "--format",
        "iolog",
        "--run",
        "/tmp/x",
    ]));
    assert_eq!(code, code::USAGE);
    assert!(err.contains("only with --format job"), "{err}");
}

#[path = "trace_export/real.rs"]
mod real;

/// A trace file cut off inside its last line (its tracer killed, its disk
/// full) reads up to that line: a cut end line leaves every event, a cut
/// event line every event before it; a damaged line elsewhere is refused.
#[test]
fn a_trace_cut_in_its_last_line_reads_up_to_it() {
    let d = scratch();
    let t = made_trace(&d.path().join("data"), &d.path().join("other"), 50);
    let tf = trace_file(d.path(), &t);
    let text = std::fs::read_to_string(&tf).unwrap();
    let end = text.trim_end().rfind('\n').unwrap() + 1;
    let cut = d.path().join("cut.trace");
    std::fs::write(&cut, &text[..end + 20]).unwrap();
    assert_eq!(file::read(&cut).unwrap().events.len(), t.events.len());
    let last_event = text[..end - 1].rfind('\n').unwrap() + 1;
    std::fs::write(&cut, &text[..last_event + 5]).unwrap();
    assert_eq!(file::read(&cut).unwrap().events.len(), t.events.len() - 1);
    // Not the last line: a damaged file, refused with its line.
    let mut bad = text[..last_event + 5].to_string();
    bad.push('\n');
    bad.push_str(&text[last_event..end]);
    std::fs::write(&cut, &bad).unwrap();
    assert!(file::read(&cut).is_err());
}
