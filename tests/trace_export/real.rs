//! The iolog and the derived job of a real program's trace.

use super::*;

// Traces of a real program: a Python script whose main thread does `n`
// preads of `data`, 70% of 4 KiB at a random block and 30% of 64 KiB where
// the previous one ended, with a 512-byte pwrite and an fsync every 100,
// while a second thread reads `other` to its end with read(2).

const SCRIPT: &str = r#"
import os, sys, threading, random
data, other, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def scan():
    fd = os.open(other, os.O_RDONLY)
    while os.read(fd, 8192):
        pass
    os.close(fd)
th = threading.Thread(target=scan)
th.start()
fd = os.open(data, os.O_RDWR)
size = os.fstat(fd).st_size
rnd = random.Random(7)
end = 0
for i in range(n):
    if rnd.random() < 0.7:
        off, ln = rnd.randrange(size // 4096) * 4096, 4096
    else:
        off, ln = (end if end + 65536 <= size else 0), 65536
    os.pread(fd, ln, off)
    end = off + ln
    if i % 100 == 99:
        os.pwrite(fd, b"x" * 512, off)
        os.fsync(fd)
os.close(fd)
th.join()
"#;

/// The script's trace, recorded by the first tracer that works here
/// (`ebpf` needs root, `strace` strace); `None`, saying why, when none
/// does.
fn real_trace(dir: &Path, data: &Path, other: &Path, n: u64, test: &str) -> Option<Trace> {
    if !have("python3", test) {
        return None;
    }
    fill(data, MIB);
    fill(other, 64 * 8192);
    let script = write_file(dir, "mix.py", SCRIPT);
    let mut why = Vec::new();
    for tracer in ["ebpf", "strace"] {
        let out = dir.join(format!("{tracer}.trace"));
        let r = bin()
            .args(["trace", "--events", "--no-store", "--tracer", tracer, "-o"])
            .arg(&out)
            .args(["--", "python3", "-I", "-S", "-B"])
            .args([s(&script), s(data), s(other), &n.to_string()])
            .output()
            .unwrap();
        if r.status.success() {
            return Some(file::read(&out).unwrap());
        }
        why.push(format!(
            "{tracer}: {}",
            String::from_utf8_lossy(&r.stderr).trim()
        ));
    }
    eprintln!("SKIP {test}: no tracer works here ({})", why.join("; "));
    None
}

/// Calls of thread `tid` on `path` named `name` that moved data.
fn calls_on(t: &Trace, path: &Path, name: &str) -> Vec<(u32, u64)> {
    t.events
        .iter()
        .filter(|e| t.path_of(e) == Some(s(path)) && e.name() == name && e.result > 0)
        .map(|e| (e.tid, e.result as u64))
        .collect()
}

#[test]
fn a_real_program_trace_replays_under_fio_and_its_job_reads_like_it() {
    let test = "a_real_program_trace_replays_under_fio_and_its_job_reads_like_it";
    skip_unless_installed!("fio");
    let d = scratch();
    let (data, other) = (d.path().join("data"), d.path().join("other"));
    let Some(t) = real_trace(d.path(), &data, &other, 3000, test) else {
        return;
    };
    let tf = d.path().join("real.trace");
    file::write(&tf, &t).unwrap();
    iolog_replays_with_the_op_counts(d.path(), &t, &tf, &data, &other);
    job_reads_like_the_trace(d.path(), &tf, &data);
}

/// The exported iolog replays under fio with the trace's op counts.
fn iolog_replays_with_the_op_counts(dir: &Path, t: &Trace, tf: &Path, data: &Path, other: &Path) {
    // The trace holds what the script did.
    let preads = calls_on(t, data, "pread64");
    assert_eq!(preads.len(), 3000);
    assert_eq!(calls_on(t, data, "pwrite64").len(), 30);
    let main_tid = preads[0].0;
    let scans = calls_on(t, other, "read");
    assert_eq!(scans.len(), 64);
    assert_ne!(scans[0].0, main_tid, "the second thread");
    // Exported with every file named in a directory of copies, laid out
    // as large as the job file says.
    let copies = dir.join("copies");
    std::fs::create_dir(&copies).unwrap();
    let prefix = dir.join("real");
    export_iolog(tf, &prefix, &copies);
    let job = std::fs::read_to_string(dir.join("real.fio")).unwrap();
    for l in job.lines().filter_map(|l| l.strip_prefix(";   ")) {
        let (f, n) = l.split_once("  ").unwrap();
        fill(Path::new(f), n.trim_end_matches(" bytes").parse().unwrap());
    }
    let v = fio_json(&[s(&dir.join("real.fio"))]);
    // Every job replayed as many reads and writes as its thread's log
    // holds, and the logs hold every read and write of the trace at a
    // known offset.
    let logs = iolab::trace::iolog::export(t, Some(&copies)).unwrap();
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), logs.len());
    for (j, l) in jobs.iter().zip(&logs) {
        assert_eq!(j["jobname"], format!("thread-{}", l.tid));
        assert_eq!(j["error"], 0, "{j:#}");
        assert_eq!(
            j["read"]["total_ios"].as_u64(),
            Some(l.reads),
            "thread {}",
            l.tid
        );
        assert_eq!(
            j["write"]["total_ios"].as_u64(),
            Some(l.writes),
            "thread {}",
            l.tid
        );
    }
    let main = logs.iter().position(|l| l.tid == main_tid).unwrap();
    assert!(logs[main].reads >= 3000 && logs[main].writes >= 30);
    assert_eq!(logs[main].syncs, 30);
    assert_eq!(jobs[main]["sync"]["total_ios"], 30, "the fsyncs");
    let order: Vec<usize> = (0..t.events.len()).collect();
    let known = iolab::trace::pattern::offsets(&t.events, &order)
        .iter()
        .zip(&t.events)
        .filter(|(o, e)| {
            o.is_some()
                && e.file.is_some()
                && e.result > 0
                && matches!(e.class(), calls::Class::Read | calls::Class::Write)
                && e.name() != "fallocate"
        })
        .count() as u64;
    let logged: u64 = logs.iter().map(|l| l.reads + l.writes).sum();
    assert_eq!(logged, known);
}

/// The derived job, run by iolab, reads `data` with the trace's sizes and
/// random share.
fn job_reads_like_the_trace(dir: &Path, tf: &Path, data: &Path) {
    let v = stdout_json(&mut export(&[
        s(tf),
        "--format",
        "job",
        "--run",
        s(&dir.join("run")),
        "-f",
        "json",
    ]));
    let r = v
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == s(data) && r["dir"] == "read")
        .unwrap_or_else(|| panic!("no read row of {} in {v:#}", s(data)));
    assert_reads_alike(r);
    assert!(near(r["run"]["ops"].as_f64().unwrap(), 3000.0), "{r:#}");
}
