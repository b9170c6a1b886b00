//! Programs traced for the `iolab trace` tests, and the trace files iolab
//! writes of them read back line by line (independently of iolab's reader).

use super::{s, scratch, succeed};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The real python3 binary (a pyenv shim would run bash under strace).
pub fn python() -> &'static str {
    static PY: OnceLock<String> = OnceLock::new();
    PY.get_or_init(|| {
        let out =
            succeed(Command::new("python3").args(["-c", "import sys; print(sys.executable)"]));
        String::from_utf8(out).unwrap().trim().to_string()
    })
}

/// A scratch directory and a file `f` of `kib` KiB of random bytes in it,
/// named as strace's `-y` names it (symlinks resolved).
pub fn data(kib: usize) -> (tempfile::TempDir, PathBuf) {
    let d = scratch();
    let f = d.path().join("f");
    let bytes: Vec<u8> = (0..kib * 1024).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&f, bytes).unwrap();
    let f = std::fs::canonicalize(&f).unwrap();
    (d, f)
}

/// `dd` reading `count` blocks of 4 KiB of `f`.
pub fn dd(f: &Path, count: u32) -> Vec<String> {
    let cmd = format!("dd if={} of=/dev/null bs=4k count={count}", s(f));
    cmd.split(' ').map(String::from).collect()
}

/// Runs `strace OPTS -o DIR/strace.log -- CMD` and returns the log.
pub fn strace(dir: &Path, opts: &[&str], cmd: &[impl AsRef<std::ffi::OsStr>]) -> PathBuf {
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
pub const FULL: &[&str] = &["-f", "-ttt", "-T", "-y"];

/// One event of a trace file (`[t_ns,pid,tid,"call",fd,file,offset,len,
/// flags,result,lat_ns]`), its file by name.
#[derive(Debug, Clone)]
pub struct Ev {
    /// When it was entered, nanoseconds from the trace's start.
    pub t_ns: u64,
    /// Process and thread.
    pub pid: u64,
    /// The thread.
    pub tid: u64,
    /// The call.
    pub name: String,
    /// The file's path.
    pub file: Option<String>,
    /// The offset, explicit or the file position.
    pub offset: Option<u64>,
    /// The length asked for.
    pub len: u64,
    /// Flags or advice.
    pub flags: u64,
    /// The result (-errno on failure).
    pub result: i64,
}

/// A trace file read line by line: its head, events and last line.
pub struct TraceFile {
    /// The first line's `meta`.
    pub meta: Value,
    /// Every event, in file order.
    pub events: Vec<Ev>,
    /// The last line's `end`: the figures.
    pub end: Value,
}

impl TraceFile {
    /// Reads the trace file `p` (which must have its end line).
    pub fn read(p: &Path) -> TraceFile {
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
                    t_ns: a[0].as_u64().unwrap(),
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
    pub fn on(&self, name: &str, file: &Path) -> Vec<&Ev> {
        let f = s(file);
        (self.events.iter())
            .filter(|e| e.name == name && e.file.as_deref() == Some(f))
            .collect()
    }
}

/// A Python script (`-c`, the file as its argument): preads at known
/// offsets, fadvise WILLNEED and DONTNEED, and an open that fails.
pub const PREADS: &str = "
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

/// A Python script (`-c`, the file as its argument): two threads pread
/// 4 times each (at 0 and 4096), then a child process once (at 8192).
pub const THREADS: &str = "
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
