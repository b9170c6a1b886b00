//! Running the command `repeat` times: the cache set before each run, the
//! command held until the counters are read, timed from its release to
//! its exit, its counters read as it ends.

use super::cache;
use super::error::Result;
use super::flame::{self, Profile};
use super::{ExecError, ExecResult, ExecRun};
use crate::counters::{self, DiskDelta, diskstats};
use crate::job::CachePolicy;
use crate::runner::StopFlag;
use crate::runner::progress::{Live, Phase, Progress};
use crate::sys::held::{self, Held, Out};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What to run and how.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// The command and its arguments.
    pub command: Vec<String>,
    /// The cache state to set before each run.
    pub cache: CachePolicy,
    /// The files (directories: every file under them) whose cache is set
    /// and measured, and whose devices are watched.
    pub files: Vec<PathBuf>,
    /// Runs to make.
    pub repeat: u32,
    /// Where the command's standard output goes.
    pub stdout: Out,
    /// Where its standard error goes.
    pub stderr: Out,
    /// Profile each run with perf (for a flamegraph).
    pub profile: bool,
    /// Trace each run's system calls (eBPF, histograms).
    pub trace: bool,
    /// The directory to run it in (default: iolab's).
    pub cwd: Option<PathBuf>,
}

impl ExecRequest {
    /// Refuses what cannot work before anything runs.
    pub fn check(&self) -> Result<()> {
        if self.command.is_empty() {
            return Err(ExecError::usage(
                "iolab exec",
                "no command: give one after `--` (iolab exec --cache cold --files data -- cat data)",
            ));
        }
        if self.repeat == 0 {
            return Err(ExecError::usage("--repeat 0", "need at least one run"));
        }
        if self.cache != CachePolicy::Keep && self.files.is_empty() {
            return Err(ExecError::usage(
                format!("--cache {}", self.cache.name()),
                "needs --files PATH: the files (or directories) whose page cache to set",
            ));
        }
        for f in &self.files {
            std::fs::symlink_metadata(f)
                .map_err(|e| ExecError::usage(format!("--files {}", f.display()), e.to_string()))?;
        }
        if self.repeat > 1
            && let Some(kind) = stdin_stream()
        {
            return Err(ExecError::usage(
                format!("--repeat {}", self.repeat),
                format!(
                    "stdin is {kind}: the first run would read it all and the later ones only its end \
                     (EOF), so the runs would not be alike; save it to a file and redirect from the \
                     file (each run then reads it from its start), or use < /dev/null"
                ),
            ));
        }
        if self.profile {
            flame::check()?;
        }
        if self.trace {
            super::traced::check()?;
        }
        Ok(())
    }
}

/// What iolab's stdin is when it is a stream that a run would use up (a
/// pipe, a socket): runs after the first would read only its end.
fn stdin_stream() -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = std::fs::metadata("/proc/self/fd/0").ok()?.file_type();
    match (t.is_fifo(), t.is_socket()) {
        (true, _) => Some("a pipe"),
        (_, true) => Some("a socket"),
        _ => None,
    }
}

/// Where a regular file on stdin stands when the runs begin: each run
/// starts there again (the runs share iolab's open file).
fn stdin_offset() -> Option<i64> {
    let t = std::fs::metadata("/proc/self/fd/0").ok()?;
    // SAFETY: lseek on fd 0 with SEEK_CUR and 0 only reads the offset.
    let at = unsafe { libc::lseek(0, 0, libc::SEEK_CUR) };
    (t.is_file() && at >= 0).then_some(at)
}

/// Puts stdin back at `at` (see [`stdin_offset`]).
fn rewind_stdin(at: Option<i64>) {
    if let Some(at) = at {
        // SAFETY: lseek on fd 0, a regular file: integers only.
        unsafe { libc::lseek(0, at, libc::SEEK_SET) };
    }
}

/// Runs `req.command` `req.repeat` times (stopping early on `stop`).
pub fn run(req: &ExecRequest, stop: &StopFlag, progress: &mut dyn Progress) -> Result<ExecResult> {
    req.check()?;
    let (files, _) = cache::files_under(&req.files)?;
    if req.cache != CachePolicy::Keep && files.is_empty() {
        return Err(ExecError::usage(
            format!("--cache {}", req.cache.name()),
            "no regular file under --files: nothing whose page cache to set",
        ));
    }
    let cwd = match &req.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().unwrap_or_default(),
    };
    let mut out = ExecResult {
        command: req.command.clone(),
        cwd,
        env: super::kept_env(),
        cache_policy: req.cache.name().to_string(),
        files: req.files.clone(),
        repeat: req.repeat,
        ..ExecResult::default()
    };
    // The devices under the named paths (or the directory): once.
    let disks = counters::disks_of(&out.watched());
    let mut profiles = Vec::new();
    let stdin_at = stdin_offset();
    for i in 1..=req.repeat {
        rewind_stdin(stdin_at);
        if stop.is_set() {
            out.interrupted = true;
            break;
        }
        if req.repeat > 1 {
            progress.step(&format!(
                "exec run {i}/{}: {}",
                req.repeat,
                out.command_line()
            ));
        }
        // Again before each run: the command may make or remove files.
        let (files, notes) = cache::files_under(&req.files)?;
        if req.cache != CachePolicy::Keep {
            progress.phase(Phase::Cache(req.cache));
        }
        let mut notes = [notes, cache::set(req.cache, &files)?].concat();
        progress.phase(Phase::Run {
            rep: i,
            reps: req.repeat,
        });
        let at = Where {
            files: &files,
            disks: &disks,
        };
        let (run, profile) = one(req, i, at, stop, &mut notes, progress)?;
        for n in notes {
            if !out.warnings.contains(&n) {
                out.warnings.push(n);
            }
        }
        out.interrupted |= run.interrupted;
        if run.ok() {
            profiles.extend(profile);
        }
        out.runs.push(run);
    }
    progress.phase(Phase::Done);
    out.interrupted |= stop.is_set();
    out.profiles = profiles;
    Ok(out)
}

/// What a run is watched on: its files and the devices under them.
#[derive(Clone, Copy)]
struct Where<'a> {
    files: &'a [PathBuf],
    disks: &'a [counters::Disk],
}

/// One run: the command held, the counters read, released, waited for.
fn one(
    req: &ExecRequest,
    index: u32,
    Where { files, disks }: Where<'_>,
    stop: &StopFlag,
    notes: &mut Vec<String>,
    progress: &mut dyn Progress,
) -> Result<(ExecRun, Option<Profile>)> {
    let name = || req.command[0].clone();
    // Only an asked directory is changed to (iolab's own may be gone).
    let mut child = held::held_in(&req.command, req.stdout, req.stderr, req.cwd.as_deref())
        .map_err(|source| ExecError::Spawn {
            command: name(),
            source,
        })?;
    let profiler = match req.profile {
        true => Some(flame::attach(child.pid)?),
        false => None,
    };
    let before = (!files.is_empty()).then(|| cache::resident(files, notes));
    let (timed, trace) = match req.trace {
        true => {
            let pid = child.pid;
            let (t, tr) = super::traced::around(pid, || timed(&mut child, req, stop, progress))?;
            // A trace that failed costs its figures, not the run.
            let tr = tr
                .map_err(|e| notes.push(format!("run {index}: no trace: {e}")))
                .ok();
            (t, tr)
        }
        false => (timed(&mut child, req, stop, progress)?, None),
    };
    let Timed {
        wall_ns,
        interrupted,
        ended,
        stats,
    } = timed;
    // A profile that fails (a run too short for a sample) costs the
    // picture, not the run.
    let profile = profiler.and_then(|p| {
        p.finish()
            .map_err(|e| notes.push(format!("run {index}: no profile: {e}")))
            .ok()
    });
    let mut run = ExecRun {
        index,
        exit_status: ended.status,
        interrupted,
        wall_ns,
        rusage: ended.rusage,
        io: ended.io,
        cache: None,
        disks: Vec::new(),
        trace,
    };
    if let Some(b) = before {
        let after = cache::resident(files, notes);
        run.cache = Some(cache::delta(
            files.len(),
            b,
            after,
            run.io("rchar"),
            run.io("read_bytes"),
        ));
    }
    if let (Some(a), Some(b)) = stats {
        run.disks = disk_deltas(disks, &a, &b, wall_ns);
    }
    Ok((run, profile))
}

/// What the timed part of a run gives.
struct Timed {
    wall_ns: u64,
    interrupted: bool,
    ended: held::Ended,
    /// `/proc/diskstats` as it started and as it ended.
    stats: (Option<DiskStats>, Option<DiskStats>),
}

type DiskStats = std::collections::BTreeMap<String, diskstats::DiskStat>;

/// Lets the held command go and times it to its exit; reaps it.
fn timed(
    child: &mut Held,
    req: &ExecRequest,
    stop: &StopFlag,
    progress: &mut dyn Progress,
) -> Result<Timed> {
    let name = || req.command[0].clone();
    let stats0 = diskstats::read_all().ok();
    // The CPU of its start before exec (fork's copy, the wait on the gate)
    // is iolab's, not the program's: taken out of its system time below.
    let held_us = child.cpu_ns().unwrap_or(0) / 1000;
    let t0 = Instant::now();
    child.release();
    let interrupted = wait(child, stop, progress, t0).map_err(|source| ExecError::Wait {
        command: name(),
        what: "waiting for it",
        source,
    })?;
    let wall_ns = t0.elapsed().as_nanos() as u64;
    let stats1 = diskstats::read_all().ok();
    let mut ended = child.reap().map_err(|source| ExecError::Wait {
        command: name(),
        what: "reaping it",
        source,
    })?;
    if let Some(sys) = ended.rusage.get_mut("sys_us") {
        let pre = held_us.min(*sys);
        *sys -= pre;
        ended.rusage.insert("held_us".into(), pre);
    }
    Ok(Timed {
        wall_ns,
        interrupted,
        ended,
        stats: (stats0, stats1),
    })
}

/// Waits for the command to end, showing `progress` its calls and bytes
/// so far (its `/proc/PID/io`, every 100 ms, when it shows them); on
/// `stop` sends it SIGTERM, then SIGKILL after 2 s. True when it was
/// stopped.
fn wait(
    child: &mut Held,
    stop: &StopFlag,
    progress: &mut dyn Progress,
    t0: Instant,
) -> std::io::Result<bool> {
    let mut asked: Option<Instant> = None;
    loop {
        if child.wait_exit(Duration::from_millis(100))? {
            // A terminal's Ctrl-C reaches the command too, which may end
            // before iolab asked it to: stopped all the same.
            return Ok(asked.is_some() || stop.is_set());
        }
        if progress.live() {
            let io = child.io_tree();
            let n = |k: &str| io.get(k).copied().unwrap_or(0);
            progress.tick(&Live {
                ios: n("syscr") + n("syscw"),
                bytes: n("rchar") + n("wchar"),
                t_ns: crate::metrics::clock::now_ns(),
                elapsed_ns: t0.elapsed().as_nanos() as u64,
                done: None,
                eta_ns: None,
                running: 1,
            });
        }
        if stop.is_set() {
            match asked {
                None => {
                    child.signal_tree(nix::sys::signal::Signal::SIGTERM);
                    asked = Some(Instant::now());
                }
                Some(t) if t.elapsed() > Duration::from_secs(2) => {
                    child.signal_tree(nix::sys::signal::Signal::SIGKILL);
                }
                Some(_) => {}
            }
        }
    }
}

/// The devices' deltas between two readings of `/proc/diskstats`.
fn disk_deltas(
    disks: &[counters::Disk],
    a: &DiskStats,
    b: &DiskStats,
    wall_ns: u64,
) -> Vec<DiskDelta> {
    disks
        .iter()
        .filter_map(|d| {
            let (x, y) = (a.get(&d.name)?, b.get(&d.name)?);
            Some(DiskDelta::new(d.clone(), x, y, wall_ns))
        })
        .collect()
}
