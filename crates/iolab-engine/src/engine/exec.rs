//! `exec`: no I/O; the job runs `program` for its runtime, then stops it,
//! as fio's engines/exec.c. The first I/O starts the program: `program`
//! and `arguments` (where `%r` is the runtime in whole seconds, then `%n`
//! the job's name) joined by a space and split at spaces (no quoting, as
//! fio), looked up on `PATH`; with `std_redirect` (default 1) its stdout
//! and stderr go to `NAME.stdout` and `NAME.stderr` in the current
//! directory (truncated, mode 0644), else they are iolab's. Each later I/O
//! waits fio's 50 ms, then fio's 50 ms think time; the first that finds
//! the runtime passed sends SIGTERM and waits up to `grace_time` seconds
//! (default 1). When the job ends the program, if it still runs, gets that
//! SIGTERM and grace first, then SIGKILL (fio sends only the SIGKILL
//! there), and is reaped. Signals go through a pidfd of the child iolab
//! started (never a PID that may have been reused).

use super::{Engine, EngineConfig, EngineError, IoUnit, Queued};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The options of ioengine=exec (`None`: not given).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExecOptions {
    /// fio's `program`: what to run.
    pub program: Option<String>,
    /// fio's `arguments`: its arguments, split at spaces.
    pub arguments: Option<String>,
    /// fio's `grace_time`: seconds from SIGTERM to SIGKILL (default 1).
    pub grace_time: Option<u64>,
    /// fio's `std_redirect`: stdout and stderr to `NAME.stdout` and
    /// `NAME.stderr` (default 1).
    pub std_redirect: Option<bool>,
}

impl ExecOptions {
    /// The command line as fio's exec_background makes it: `%r` in the
    /// arguments replaced by `runtime_s`, then `%n` by `name`; program and
    /// arguments joined by a space and split at spaces, empty words dropped.
    pub fn argv(&self, name: &str, runtime_s: u64) -> Vec<String> {
        let program = self.program.as_deref().unwrap_or("");
        let line = match &self.arguments {
            Some(args) => {
                let args = args.replace("%r", &runtime_s.to_string());
                format!("{program} {}", args.replace("%n", name))
            }
            None => program.to_string(),
        };
        line.split(' ')
            .filter(|w| !w.is_empty())
            .map(String::from)
            .collect()
    }
}

/// fio's pause in each I/O after the first (its `usleep(thinktime)`).
const POLL: Duration = Duration::from_millis(50);
/// fio's think time after each I/O (exec_init sets `thinktime=50000`).
const THINK: Duration = Duration::from_millis(50);

/// The started program.
#[derive(Debug)]
struct Running {
    child: Child,
    /// A pidfd of the child (`None` before Linux 5.3: signals then go to
    /// its PID, checked unreaped first).
    pidfd: Option<OwnedFd>,
    started: Instant,
    /// SIGTERM has been sent.
    termed: bool,
}

impl Running {
    /// True while the program has not exited (it is reaped when it has).
    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends `sig` to the program unless it has exited.
    fn signal(&mut self, sig: libc::c_int) {
        if !self.alive() {
            return;
        }
        match &self.pidfd {
            Some(fd) => crate::sys::pidfd::signal(fd, sig),
            // Unreaped (only `child` waits for it), so its PID is its own.
            None => kill(self.child.id(), sig),
        }
    }

    /// SIGTERM, then up to `grace` for the program to exit.
    fn term(&mut self, grace: Duration) {
        self.signal(libc::SIGTERM);
        self.termed = true;
        let end = Instant::now() + grace;
        while self.alive() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10).min(grace));
        }
    }
}

/// A program run for the job's runtime.
#[derive(Debug)]
pub struct ExecEngine {
    argv: Vec<String>,
    /// `NAME.stdout` and `NAME.stderr` with `std_redirect`.
    redirect: Option<[String; 2]>,
    runtime: Duration,
    grace: Duration,
    running: Option<Running>,
}

impl ExecEngine {
    /// Starts the program (fio's exec_background).
    fn start(&self) -> io::Result<Running> {
        let mut cmd = Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..]);
        if let Some([out, err]) = &self.redirect {
            cmd.stdout(Stdio::from(create(out)?));
            cmd.stderr(Stdio::from(create(err)?));
        }
        let child = cmd.spawn()?;
        Ok(Running {
            pidfd: crate::sys::pidfd::open(child.id()).ok(),
            child,
            started: Instant::now(),
            termed: false,
        })
    }
}

impl Engine for ExecEngine {
    const MOVES_DATA: bool = false;
    const DISKLESS: bool = true;
    const NO_IO: bool = true;
    const OPTIONS: &'static [&'static str] =
        &["program", "arguments", "grace_time", "std_redirect"];

    fn check(cfg: &EngineConfig) -> Result<(), EngineError> {
        let a = &cfg.args;
        if a.exec.argv(&a.name, 0).is_empty() {
            return Err(EngineError::new(
                "program",
                "no program is defined, it is mandatory to define one (as fio)",
            ));
        }
        if a.runtime_us.is_none() {
            return Err(EngineError::new(
                "runtime",
                "ioengine=exec runs its program for the job's runtime: give runtime= (fio runs it until interrupted)",
            ));
        }
        Ok(())
    }

    fn hint(err: &io::Error, _cfg: &EngineConfig) -> Option<&'static str> {
        (err.kind() == io::ErrorKind::NotFound)
            .then_some("the program (or NAME.stdout's directory) was not found")
    }

    fn build(cfg: &EngineConfig) -> Result<Self, EngineError> {
        Self::check(cfg)?;
        let a = &cfg.args;
        let runtime = Duration::from_micros(a.runtime_us.unwrap_or(0));
        let x = &a.exec;
        Ok(ExecEngine {
            argv: x.argv(&a.name, runtime.as_secs()),
            redirect: (x.std_redirect != Some(false))
                .then(|| [format!("{}.stdout", a.name), format!("{}.stderr", a.name)]),
            runtime,
            grace: Duration::from_secs(x.grace_time.unwrap_or(1)),
            running: None,
        })
    }

    fn queue(
        &mut self,
        _tag: u32,
        _fd: RawFd,
        unit: IoUnit,
        _buf: &mut [u8],
    ) -> io::Result<Queued> {
        match &mut self.running {
            None => self.running = Some(self.start()?),
            Some(r) => {
                std::thread::sleep(POLL);
                if !r.termed && r.started.elapsed() > self.runtime {
                    r.term(self.grace);
                }
                std::thread::sleep(THINK);
            }
        }
        Ok(Queued::Done(unit.len as usize))
    }
}

impl Drop for ExecEngine {
    /// fio's cleanup (SIGKILL), after SIGTERM and the grace time if the
    /// program was not sent them yet; then the program is reaped.
    fn drop(&mut self) {
        if let Some(r) = &mut self.running {
            if !r.termed {
                r.term(self.grace);
            }
            r.signal(libc::SIGKILL);
            let _ = r.child.wait();
        }
    }
}

/// `path` created or truncated for writing, mode 0644 (fio's output files).
fn create(path: &str) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .open(path)
}

/// `kill(pid, sig)`, for a child not yet reaped.
///
/// # Safety
///
/// Sound: integers only. The caller passes the PID of its own child that
/// it has not reaped (a zombie keeps its PID), so no other process gets it.
fn kill(pid: u32, sig: libc::c_int) {
    // SAFETY: kill(2) takes plain integers.
    unsafe { libc::kill(pid as libc::pid_t, sig) };
}
