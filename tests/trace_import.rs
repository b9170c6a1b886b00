//! `iolab trace import` of real strace output, and `iolab trace --tracer
//! strace`: programs whose calls are known (dd, a Python script, fio)
//! traced by the real strace, the trace files iolab writes read back line
//! by line, and the counts, offsets, sizes, advice and threads checked
//! against what the programs did.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The real python3 binary (a pyenv shim would run bash under strace).
fn python() -> &'static str {
    static PY: OnceLock<String> = OnceLock::new();
    PY.get_or_init(|| {
        let out =
            succeed(Command::new("python3").args(["-c", "import sys; print(sys.executable)"]));
        String::from_utf8(out).unwrap().trim().to_string()
    })
}

/// A scratch directory and a file `f` of `kib` KiB of random bytes in it,
/// named as strace's `-y` names it (symlinks resolved).
fn data(kib: usize) -> (tempfile::TempDir, PathBuf) {
    let d = scratch();
    let f = d.path().join("f");
    let bytes: Vec<u8> = (0..kib * 1024).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&f, bytes).unwrap();
    let f = std::fs::canonicalize(&f).unwrap();
    (d, f)
}

/// `dd` reading `count` blocks of 4 KiB of `f`.
fn dd(f: &Path, count: u32) -> Vec<String> {
    let cmd = format!("dd if={} of=/dev/null bs=4k count={count}", s(f));
    cmd.split(' ').map(String::from).collect()
}

/// Runs `strace OPTS -o DIR/strace.log -- CMD` and returns the log.
fn strace(dir: &Path, opts: &[&str], cmd: &[impl AsRef<std::ffi::OsStr>]) -> PathBuf {
    let log = dir.join("strace.log");
    succeed(
        Command::new("strace")
            .args(opts)
            .arg("-o")
            .arg(&log)
            .arg("--")
            .args(cmd)
            .stdout(Stdio::null()),
    );
    log
}

/// The whole-trace options `iolab trace import` reads.
const FULL: &[&str] = &["-f", "-ttt", "-T", "-y"];

/// One event of a trace file.
#[derive(Debug, Clone)]
struct Ev {
    pid: u64,
    tid: u64,
    name: String,
    file: Option<String>,
    offset: Option<u64>,
    len: u64,
    flags: u64,
    result: i64,
}

/// A trace file read line by line: its head, events and last line.
struct TraceFile {
    meta: Value,
    events: Vec<Ev>,
    end: Value,
}

impl TraceFile {
    fn read(p: &Path) -> TraceFile {
        let text = std::fs::read_to_string(p).unwrap();
        let (mut meta, mut end, mut paths, mut events) = (Value::Null, Value::Null, vec![], vec![]);
        for l in text.lines() {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            if v["iolab_trace"] == 1 {
                meta = v["meta"].clone();
            } else if let Some(name) = v["name"].as_str() {
                assert_eq!(v["path"], paths.len(), "paths in order");
                paths.push(name.to_string());
            } else if let Some(a) = v.as_array() {
                events.push(Ev {
                    pid: a[1].as_u64().unwrap(),
                    tid: a[2].as_u64().unwrap(),
                    name: a[3].as_str().unwrap().into(),
                    file: a[5].as_u64().map(|i| paths[i as usize].clone()),
                    offset: a[6].as_u64(),
                    len: a[7].as_u64().unwrap(),
                    flags: a[8].as_u64().unwrap(),
                    result: a[9].as_i64().unwrap(),
                });
            } else {
                end = v["end"].clone();
            }
        }
        assert!(!end.is_null(), "the trace file has its end line");
        TraceFile { meta, events, end }
    }

    /// The events of call `name` on `file`.
    fn on(&self, name: &str, file: &Path) -> Vec<&Ev> {
        let f = s(file);
        (self.events.iter())
            .filter(|e| e.name == name && e.file.as_deref() == Some(f))
            .collect()
    }
}

/// `iolab trace import LOG --no-store`, which must succeed silently on
/// stderr; the trace file it wrote (LOG.trace).
fn import(log: &Path) -> TraceFile {
    let (_, err) = succeed_text(bin().args(["trace", "import", "--no-store"]).arg(log));
    assert_eq!(err, "");
    let mut t = log.as_os_str().to_owned();
    t.push(".trace");
    TraceFile::read(Path::new(&t))
}

/// Traces `python3 -c SCRIPT FILE` with strace and imports it.
fn traced_python(script: &str, dir: &Path, f: &Path) -> TraceFile {
    import(&strace(dir, FULL, &[python(), "-c", script, s(f)]))
}

#[test]
fn dd_reads_are_exact_in_count_size_and_offset() {
    skip_unless_installed!("strace");
    // With -f and its pid column, and without -f (no pid column) with -yy.
    for opts in [FULL, &["-ttt", "-T", "-yy"]] {
        let (dir, f) = data(64);
        let t = import(&strace(dir.path(), opts, &dd(&f, 9)));
        let reads = t.on("read", &f);
        let offsets: Vec<_> = reads.iter().map(|e| e.offset).collect();
        let want: Vec<_> = (0..9).map(|i| Some(i * 4096)).collect();
        assert_eq!(offsets, want, "{opts:?}");
        assert!(
            reads.iter().all(|e| e.len == 4096 && e.result == 4096),
            "{reads:?}"
        );
        assert_eq!(t.meta["command"][0], "dd");
        assert_eq!(t.meta["exit_status"], 0);
        assert_eq!(t.meta["source"], "strace");
    }
}

const PREADS: &str = "
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for o in (0, 12288, 4096, 65536, 8192):
    os.pread(fd, 4096, o)
for o in (0, 32768, 16384):
    os.posix_fadvise(fd, o, 8192, os.POSIX_FADV_WILLNEED)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
try:
    os.open(sys.argv[1] + '.missing', os.O_RDONLY)
except FileNotFoundError:
    pass
";

#[test]
fn python_preads_fadvise_and_a_failed_open_are_exact() {
    skip_unless_installed!("strace");
    let (dir, f) = data(128);
    let t = traced_python(PREADS, dir.path(), &f);
    let p: Vec<_> = (t.on("pread64", &f).iter())
        .map(|e| (e.offset, e.len, e.result))
        .collect();
    let want: Vec<_> = [0, 12288, 4096, 65536, 8192]
        .map(|o| (Some(o), 4096, 4096))
        .to_vec();
    assert_eq!(p, want);
    let adv: Vec<_> = (t.on("fadvise64", &f).iter())
        .map(|e| (e.offset, e.len, e.flags))
        .collect();
    let (will, dont) = (
        libc::POSIX_FADV_WILLNEED as u64,
        libc::POSIX_FADV_DONTNEED as u64,
    );
    let want = [
        (0, 8192, will),
        (32768, 8192, will),
        (16384, 8192, will),
        (0, 0, dont),
    ];
    assert_eq!(adv, want.map(|(o, l, a)| (Some(o), l, a)).to_vec());
    // The failed open: -ENOENT on the path asked for, counted as an error.
    let missing = f.with_file_name("f.missing");
    let o = t.on("openat", &missing);
    assert_eq!(o.len(), 1);
    assert_eq!(o[0].result, -(libc::ENOENT as i64));
    let file = json_item(&t.end["files"], "path", s(&missing));
    assert_eq!(file["calls"]["openat"]["errors"], 1);
    assert!(t.end["calls"]["openat"]["errors"].as_u64().unwrap() >= 1);
}

const THREADS: &str = "
import os, sys, threading
def work(off):
    fd = os.open(sys.argv[1], os.O_RDONLY)
    for i in range(4):
        os.pread(fd, 512, off)
    os.close(fd)
ts = [threading.Thread(target=work, args=(o,)) for o in (0, 4096)]
[t.start() for t in ts]
[t.join() for t in ts]
pid = os.fork()
if pid == 0:
    os.pread(os.open(sys.argv[1], os.O_RDONLY), 100, 8192)
    os._exit(0)
os.waitpid(pid, 0)
";

#[test]
fn threads_are_told_from_child_processes() {
    skip_unless_installed!("strace");
    let (dir, f) = data(16);
    let t = traced_python(THREADS, dir.path(), &f);
    let main = t.meta["pid"].as_u64().unwrap();
    let p = t.on("pread64", &f);
    let in_threads: Vec<_> = p.iter().filter(|e| e.offset != Some(8192)).collect();
    assert_eq!(in_threads.len(), 8);
    let mut tids: Vec<u64> = in_threads.iter().map(|e| e.tid).collect();
    tids.sort();
    tids.dedup();
    assert_eq!(tids.len(), 2, "two threads: {tids:?}");
    assert!(in_threads.iter().all(|e| e.pid == main && e.tid != main));
    let child: Vec<_> = p.iter().filter(|e| e.offset == Some(8192)).collect();
    assert_eq!(child.len(), 1);
    assert!(child[0].pid != main && child[0].tid == child[0].pid);
    let th = t.end["threads"].as_array().unwrap();
    let of = |tid: u64| th.iter().find(|x| x["tid"] == tid).unwrap();
    assert_eq!(of(tids[0])["pid"], main);
    assert_eq!(of(child[0].tid)["ppid"], main);
}

#[test]
fn fio_random_reads_match_fios_own_count() {
    skip_unless_installed!("strace");
    skip_unless_installed!("fio");
    let (dir, f) = data(64);
    let job = format!(
        "--name=j --filename={} --rw=randread --bs=4k --size=64k",
        s(&f)
    );
    let fio: Vec<&str> = ["fio", "--ioengine=psync", "--output-format=json"]
        .into_iter()
        .chain(job.split(' '))
        .collect();
    let log = strace(dir.path(), FULL, &fio);
    let t = import(&log);
    let report = fio_json(&fio[1..]);
    let ios = report["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    let reads = t.on("pread64", &f);
    assert_eq!(reads.len() as u64, ios);
    // fio's random map touches every block once.
    let mut offsets: Vec<u64> = reads.iter().map(|e| e.offset.unwrap()).collect();
    offsets.sort();
    assert_eq!(offsets, (0..16).map(|i| i * 4096).collect::<Vec<_>>());
    // fio ran the job in a child process, and told the kernel it reads at random.
    assert!(
        reads
            .iter()
            .all(|e| e.pid != t.meta["pid"].as_u64().unwrap())
    );
    let advice: Vec<u64> = t.on("fadvise64", &f).iter().map(|e| e.flags).collect();
    assert!(
        advice.contains(&(libc::POSIX_FADV_RANDOM as u64)),
        "{advice:?}"
    );
}

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
    // JSON on stdout, nothing on stderr, the command's exit status kept.
    let cmd = "trace --tracer strace -f json --no-store -- sh -c";
    let (out, err) = succeed_text(bin().args(cmd.split(' ')).arg("exit 3"));
    assert_eq!(err, "");
    let v = parse_json(out.as_bytes());
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
fn what_is_not_strace_output_is_refused_with_its_line() {
    let dir = scratch();
    let notes = write_file(dir.path(), "notes.txt", "hello\nworld\n");
    let err = fails_with(
        bin().args(["trace", "import", "--no-store"]).arg(&notes),
        code::USAGE,
        &format!("{}:1:", s(&notes)),
    );
    assert_one_line(&err, &["-ttt timestamp"]);
    assert!(!dir.path().join("notes.txt.trace").exists());
    let bad = write_file(
        dir.path(),
        "bad.strace",
        "1 1700000000.000001 fsync(3</f>) = 0 <0.000010>\n\n1 1700000000.000002 oops\n",
    );
    let err = fails_with(
        bin().args(["trace", "import", "--no-store"]).arg(&bad),
        code::USAGE,
        &format!("{}:3:", s(&bad)),
    );
    assert_one_line(&err, &["expected a system call"]);
    let empty = write_file(dir.path(), "empty.strace", "");
    fails_with(
        bin().args(["trace", "import", "--no-store"]).arg(&empty),
        code::USAGE,
        &format!("{}:1: no strace output", s(&empty)),
    );
}

#[test]
fn a_trace_file_that_exists_is_never_overwritten() {
    let dir = scratch();
    let log = write_file(
        dir.path(),
        "a.strace",
        "1 1700000000.000001 fsync(3</f>) = 0 <0.000010>\n",
    );
    let kept = write_file(dir.path(), "a.strace.trace", "keep");
    fails_with(
        bin().args(["trace", "import", "--no-store"]).arg(&log),
        code::REFUSED,
        "never overwrites",
    );
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "keep");
    // -o elsewhere works, and the figures are the file's.
    let other = dir.path().join("b.trace");
    let v = stdout_json(
        bin()
            .args(["trace", "import", "--no-store", "-f", "json", "-o"])
            .arg(&other)
            .arg(&log),
    );
    assert_eq!(v["calls"]["fsync"]["count"], 1);
    assert_eq!(v["calls"]["fsync"]["sum_ns"], 10_000);
    assert_eq!(TraceFile::read(&other).events.len(), 1);
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
fn strace_tracer_stops_on_ctrl_c_and_on_a_missing_pid() {
    skip_unless_installed!("strace");
    // SIGINT stops strace, which stops the command it started: promptly,
    // long before the command would end, with 128 + SIGINT.
    let args = [
        "trace",
        "--tracer",
        "strace",
        "--no-store",
        "--",
        "sleep",
        "30",
    ];
    let t0 = std::time::Instant::now();
    let (code, err) = exit_after_signal(&args, std::time::Duration::from_millis(700), libc::SIGINT);
    assert_eq!(code, 128 + libc::SIGINT, "{err}");
    assert!(
        t0.elapsed().as_secs() < 5,
        "stopped after {:?}",
        t0.elapsed()
    );
    let err = fails_with(
        bin().args([
            "trace",
            "--tracer",
            "strace",
            "--no-store",
            "-p",
            "999999999",
        ]),
        code::USAGE,
        "-p 999999999",
    );
    assert_one_line(&err, &["no such process"]);
}
