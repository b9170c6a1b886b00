//! The `strace` tracer: runs `strace -f -ttt -T -y` on the command (or
//! attached to `-p PID`) into a temporary file and reads that with
//! [`strace`](super::strace). No root needed; strace stops the program at
//! every call it traces, so the program runs many times slower.

use super::calls::{CALLS, URING_REQ_NR};
use super::error::{TraceError, TraceResult};
use super::model::{Mode, Thread, Trace};
use super::strace::{self, Options};
use super::{Request, Target, Tracer};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Traces with strace (`--tracer strace`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Strace;

/// Calls traced besides [`CALLS`]: they tell threads from processes, give
/// the command's name and keep fds (and their positions) followed.
const HELPERS: &[&str] = &[
    "execve", "execveat", "clone", "clone3", "fork", "vfork", "dup", "dup2", "dup3", "fcntl",
];

/// strace's `-e trace=` list: the system calls of [`CALLS`] and the
/// [`HELPERS`], each marked `?` (not an error on an architecture that
/// lacks it, as aarch64 lacks `open`).
pub fn trace_list() -> String {
    let calls = CALLS
        .iter()
        .filter(|c| c.nr != URING_REQ_NR)
        .map(|c| c.name);
    let names: Vec<String> = calls
        .chain(HELPERS.iter().copied())
        .map(|n| format!("?{n}"))
        .collect();
    format!("trace={}", names.join(","))
}

/// The file `program` names: itself when it has a `/`, else the first
/// executable file of that name on PATH.
fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program)).filter(|p| p.is_file());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// A one-line file of /proc, trimmed (empty when it cannot be read).
fn proc_line(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The threads of process `pid` now (strace `-p` attaches to them all).
fn threads_of(pid: u32) -> Vec<Thread> {
    let ppid = proc_line(format!("/proc/{pid}/stat"))
        .rsplit(')')
        .next()
        .and_then(|r| r.split_whitespace().nth(1))
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut tids: Vec<u32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    // The process itself first: it is the trace's main thread.
    tids.sort_by_key(|&t| t != pid);
    tids.into_iter()
        .map(|tid| Thread {
            pid,
            tid,
            ppid,
            comm: proc_line(format!("/proc/{pid}/task/{tid}/comm")),
        })
        .collect()
}

/// Waits for strace to end, sending it SIGINT (it detaches, and stops a
/// command it started) once `req.duration` has passed or `req.stop` is
/// raised.
fn wait(child: &mut Child, req: &Request) -> TraceResult<(ExitStatus, bool)> {
    let deadline = req.duration.map(|d| Instant::now() + d);
    let mut stopped = false;
    loop {
        if let Some(s) = child.try_wait().map_err(|e| TraceError::io("strace", e))? {
            return Ok((s, stopped));
        }
        let due = deadline.is_some_and(|d| Instant::now() >= d);
        if !stopped && (due || req.stop.is_set()) {
            // SAFETY: a signal to our own child, which has not been reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            stopped = true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Tracer for Strace {
    fn check(&self) -> TraceResult<()> {
        match find_program("strace") {
            Some(_) => Ok(()),
            None => Err(TraceError::Missing {
                what: "strace",
                hint: "strace is not on PATH; install the package strace \
                       (apt install strace, dnf install strace)"
                    .into(),
            }),
        }
    }

    fn record(&self, req: &Request) -> TraceResult<Trace> {
        self.check()?;
        if let Some(o) = req.output.filter(|o| o.exists()) {
            return Err(TraceError::Usage {
                what: format!("-o {}", o.display()),
                problem: "the file exists; iolab never overwrites a trace file".into(),
            });
        }
        let tmp = tempfile::tempdir().map_err(|e| TraceError::io(std::env::temp_dir(), e))?;
        let log = tmp.path().join("strace.out");
        let mut cmd = Command::new("strace");
        // -I 2: SIGINT stops strace (it detaches) even when it started the command.
        cmd.args(["-f", "-ttt", "-T", "-y", "-qq", "-I", "2", "-o"])
            .arg(&log)
            .arg("-e")
            .arg(trace_list());
        let mut opts = Options {
            allow_empty: true,
            threads: Vec::new(),
        };
        match &req.target {
            Target::Command(c) => {
                let program = c.first().ok_or_else(|| TraceError::Usage {
                    what: "iolab trace".into(),
                    problem: "no command to trace".into(),
                })?;
                if find_program(program).is_none() {
                    return Err(TraceError::Spawn {
                        command: program.clone(),
                        source: std::io::Error::new(
                            std::io::ErrorKind::NotFound,
                            "not found on PATH",
                        ),
                    });
                }
                cmd.arg("--").args(c);
                if req.stdout_to_stderr {
                    cmd.stdout(std::io::stderr());
                }
            }
            Target::Pid(p) => {
                opts.threads = threads_of(*p);
                if opts.threads.is_empty() {
                    return Err(TraceError::Usage {
                        what: format!("-p {p}"),
                        problem: "no such process".into(),
                    });
                }
                cmd.arg("-p").arg(p.to_string()).stderr(Stdio::piped());
            }
        }
        let begun = Instant::now();
        let mut child = cmd.spawn().map_err(|e| TraceError::Spawn {
            command: "strace".into(),
            source: e,
        })?;
        let (status, stopped) = wait(&mut child, req)?;
        let mut said = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut said);
        }
        let failed = |why: &str| TraceError::Spawn {
            command: "strace".into(),
            source: std::io::Error::other(format!("strace ended with {status}: {why}")),
        };
        let attached = matches!(req.target, Target::Pid(_));
        if !log.exists() || (attached && !status.success() && !stopped) {
            return Err(failed(said.trim()));
        }
        let mut t = strace::read(&log, &opts)?;
        if !attached && t.meta.started_unix == 0.0 {
            // Not even the command's execve: strace could not start it.
            return Err(failed("it traced nothing (its message is above)"));
        }
        let m = &mut t.meta;
        m.mode = req.mode;
        match &req.target {
            Target::Command(c) => {
                m.command = c.clone();
                m.exit_status = status.code();
            }
            Target::Pid(p) => {
                m.command = Vec::new();
                m.pid = *p;
                m.exit_status = None;
            }
        }
        // How long it traced (the output ends at the last call).
        m.duration_ns = begun.elapsed().as_nanos() as u64;
        if m.started_unix == 0.0 {
            m.started_unix =
                chrono::Utc::now().timestamp_micros() as f64 / 1e6 - begun.elapsed().as_secs_f64();
        }
        m.kernel = proc_line("/proc/sys/kernel/osrelease");
        m.host = proc_line("/proc/sys/kernel/hostname");
        if req.mode == Mode::Histograms {
            t.events.clear();
        }
        if let Some(o) = req.output {
            super::file::write(o, &t)?;
        }
        Ok(t)
    }
}
