//! One clone's thread: take over its files into a descriptor table of its
//! own, build and attach its engine, say it is ready, wait for the start,
//! run the timed loop ([`super::sync_loop`] for synchronous engines,
//! [`super::queued`] for engines with I/Os in flight) and return what it
//! measured. Nothing here prints or allocates per I/O.

use super::StopFlag;
use super::ctx::{Ctx, Fresh};
use super::iolog::IoLogWriter;
use super::iomem::IoBuf;
use super::lookahead::Lookahead;
use super::result::Totals;
use super::series::{DirRecorders, Ticker};
use super::sync_loop::sync_loop;
use crate::engine::{Attach, Driver, Engine, EngineConfig, EngineError};
use crate::metrics::clock::now_ns;
use crate::metrics::{CpuUsage, Recorder};
use crate::plan::Planner;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How a queued engine's clone submits and reaps (fio's
/// `iodepth_batch_*` and `iodepth_low`).
#[derive(Debug, Clone, Copy)]
pub struct Batches {
    /// Submit once this many I/Os are queued.
    pub submit: usize,
    /// Wait for at least this many completions at a time.
    pub complete_min: usize,
    /// Take at most this many completions at a time.
    pub complete_max: usize,
    /// Once the queue is full, reap until this many are left in flight.
    pub low: usize,
}

/// Everything one clone needs besides its engine, prepared by the launcher.
pub struct Worker {
    /// fio's name of the engine, for messages.
    pub engine: &'static str,
    /// What the engine is told of the job.
    pub cfg: EngineConfig,
    /// The files, indexed by `IoUnit::file`.
    pub paths: Vec<PathBuf>,
    /// The job writes.
    pub writes: bool,
    /// The job's own I/O reads (verify reads aside).
    pub reads: bool,
    /// The I/O sequence.
    pub planner: Planner,
    /// WILLNEED advice this many I/Os ahead (0: none).
    pub prefetch: usize,
    /// fsync every this many writes (0: never).
    pub fsync_every: u64,
    /// Those syncs are fdatasync (fio's `fdatasync`).
    pub fsync_data_only: bool,
    /// fsync every file once the I/O is done (fio's `end_fsync`,
    /// `fsync_on_close`), inside the clone's runtime.
    pub end_fsync: bool,
    /// Stop after this long.
    pub runtime: Option<Duration>,
    /// I/O buffers, each at least the largest I/O: one per I/O in flight.
    pub bufs: Vec<IoBuf>,
    /// How the queue is submitted and reaped.
    pub batches: Batches,
    /// Time-series interval in ms.
    pub series_ms: Option<u64>,
    /// Histogram-log interval in ms, when it differs from the series'.
    pub hist_ms: Option<u64>,
    /// fio's per-I/O log, when asked for.
    pub io_log: Option<IoLogWriter>,
    /// Nice value, I/O priority and CPUs the thread sets on itself.
    pub sched: crate::sys::thread::Sched,
    /// What each write's buffer gets, when it changes per write.
    pub contents: Option<Box<super::buffer::Contents>>,
    /// Verification, when the job verifies.
    pub verifier: Option<Box<super::verify::verifier::Verifier>>,
    /// The launcher's watch (`exitall`, steady state), when the run has one.
    pub watch: Option<std::sync::Arc<super::control::CloneCtl>>,
    /// Rate, think time, flow, latency target, when the job sets one.
    pub pace: Option<Box<super::pace::Pace>>,
    /// fio's `ramp_time`: I/O that is not counted before the figures start.
    pub ramp: Option<Duration>,
    /// `continue_on_error`'s kinds of I/O (`process::CONTINUE_*` bits).
    pub continue_on: u8,
    /// `fill_device`: ENOSPC ends the clone, without an error.
    pub fill_device: bool,
    /// Every I/O timed; false under fio's `gtod_reduce` (no latency
    /// figures asked for): a synchronous loop then reads the clock only
    /// every [`super::sync_loop::UNTIMED_CLOCK_EVERY`] I/Os, for its deadlines.
    pub timed: bool,
}

/// Where every clone waits for the start; the launcher opens it once.
#[derive(Debug, Default)]
pub struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    /// Waits until the gate is open.
    pub fn wait(&self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        while !*open {
            open = self.opened.wait(open).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Opens it: every clone waiting goes.
    pub fn open(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.opened.notify_all();
    }
}

/// Why a clone could not get ready to run.
#[derive(Debug)]
pub enum NotReady {
    /// Its engine refused the job (bad usage: exit 2).
    Engine(EngineError),
    /// The system refused the thread something (`what`): a failure, exit 1.
    Io(&'static str, std::io::Error),
}

/// How a clone and the launcher meet: the clone says it is ready (or why
/// it cannot run), then waits at `start`; `abort` set means do no I/O.
pub struct Meeting<'a> {
    /// The clone's answer: ready, or the reason it is not.
    pub ready: Sender<Result<(), NotReady>>,
    /// Opened by the launcher when every clone is ready.
    pub start: &'a Gate,
    /// Set by the launcher when some clone could not get ready.
    pub abort: &'a AtomicBool,
    /// Ctrl-C.
    pub stop: &'a StopFlag,
}

/// Gives this thread a descriptor table of its own and takes the copies of
/// `fds` in it: each I/O then finds its file through the kernel's
/// single-owner fast path (no atomic file refcount per I/O), as fio's
/// forked job processes do.
///
/// # Safety
/// `fds` are open descriptors of the launcher, which closes its own copies
/// once this returns and never uses them again; after `unshare` the copies
/// in this thread's table belong to nothing else.
pub(super) unsafe fn adopt(fds: &[RawFd]) -> std::io::Result<Vec<File>> {
    // SAFETY: unshare(CLONE_FILES) changes only the calling thread.
    if unsafe { libc::unshare(libc::CLONE_FILES) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: see the function's safety note: each number is this thread's
    // own copy now, owned by nothing else.
    Ok(fds
        .iter()
        .map(|&fd| unsafe { File::from_raw_fd(fd) })
        .collect())
}

/// The timed part of one clone, as a [`Driver`] of its engine.
pub struct Clone<'a> {
    /// The clone.
    pub w: Worker,
    /// Its files, adopted.
    pub files: Vec<File>,
    /// Where it meets the launcher.
    pub meet: Meeting<'a>,
}

impl Driver for Clone<'_> {
    type Output = (Totals, bool);

    fn drive<E: Engine>(self, engine: E) -> (Totals, bool) {
        run(self, engine)
    }
}

/// Attaches the engine, meets the launcher, runs to the end (or until
/// `stop`); returns the measurements and whether it was interrupted.
fn run<E: Engine>(c: Clone<'_>, mut engine: E) -> (Totals, bool) {
    let Clone { w, files, meet } = c;
    let mut t = Totals::default();
    // An engine that uses no file gets one harmless descriptor for all of
    // them (fio's filecreate example has 31,250 files a clone).
    let fds: Vec<RawFd> = match (files.len(), w.paths.len()) {
        (1, n) if n > 1 => vec![files[0].as_raw_fd(); n],
        _ => files.iter().map(|f| f.as_raw_fd()).collect(),
    };
    let attached = attach(&mut engine, (&fds, &files, &w.paths), &w.bufs, w.writes).map_err(|e| {
        NotReady::Engine(EngineError::new(
            format!("ioengine={}", w.engine),
            e.to_string(),
        ))
    });
    let ok = attached.is_ok();
    let _ = meet.ready.send(attached);
    meet.start.wait();
    if !ok || meet.abort.load(Ordering::Relaxed) {
        return (t, false);
    }
    let Worker {
        engine: name,
        cfg,
        paths,
        planner,
        prefetch,
        fsync_every,
        fsync_data_only,
        end_fsync,
        runtime,
        mut bufs,
        batches,
        series_ms,
        hist_ms,
        io_log,
        writes,
        reads,
        sched,
        contents,
        verifier,
        watch,
        pace,
        ramp,
        continue_on,
        fill_device,
        timed,
    } = w;
    let recorder = |on: bool| {
        if on {
            Recorder::new()
        } else {
            Recorder::empty()
        }
    };
    let hint = |e: &std::io::Error| E::hint(e, &cfg);
    let dry_writes = verifier.as_ref().is_some_and(|v| v.dry_writes());
    let mut cx = Ctx {
        engine: name,
        hint: &hint,
        fds,
        paths: &paths,
        look: Lookahead::new(
            {
                let mut p = planner;
                if fsync_every > 0 {
                    p.mark_loops();
                }
                p
            },
            prefetch,
        ),
        recs: [
            DirRecorders::new(false, E::QUEUED),
            DirRecorders::new(!writes && !dry_writes, E::QUEUED),
            DirRecorders::new(!cfg.trims, E::QUEUED),
        ],
        advise: recorder(prefetch > 0),
        fsync: recorder(fsync_every > 0),
        fsync_data_only,
        diskless: E::DISKLESS,
        by_prio: (cfg.cmdprio.used())
            .then(|| (sched.ioprio).map_or(0, |(c, l)| crate::engine::cmdprio::ioprio(c, l))),
        syncs: super::syncs::Syncs::new(fsync_every, E::QUEUED),
        series: Ticker::new(None, 0),
        hist: None,
        io_log,
        t_start: 0,
        deadline: u64::MAX,
        next_event: u64::MAX,
        errors: Vec::new(),
        more_errors: 0,
        continue_on,
        ignored: Default::default(),
        no_space: false,
        fill_device,
        filled: false,
        depth_counts: [0; 7],
        submit_counts: [0; 7],
        complete_counts: [0; 7],
        contents,
        verifier,
        watch: watch.map(|ctl| super::control::Watch { ctl, next_ns: 0 }),
        pace,
        ramp_end: 0,
        verify_ns: 0,
        fresh: Fresh {
            no_writes: !writes && !dry_writes,
            no_trims: !cfg.trims,
            queued: E::QUEUED,
            series_ms,
            hist_ms,
            runtime_ns: runtime.map(|d| d.as_nanos() as u64),
            own: [reads, writes, cfg.trims],
        },
    };

    let cpu0 = CpuUsage::thread_now();
    let t_start = now_ns();
    cx.t_start = t_start;
    let ramp_ns = ramp.map_or(0, |r| r.as_nanos() as u64);
    cx.ramp_end = if ramp_ns > 0 { t_start + ramp_ns } else { 0 };
    cx.deadline = runtime.map_or(u64::MAX, |d| t_start + ramp_ns + d.as_nanos() as u64);
    if let Some(p) = &mut cx.pace {
        p.start(t_start);
    }
    cx.series = Ticker::new(series_ms, t_start);
    cx.hist = hist_ms.map(|ms| Ticker::new(Some(ms), t_start));
    cx.event(t_start);
    {
        let fds = &cx.fds;
        cx.look.prime(fds, &mut cx.advise);
    }
    let only = cx.verifier.as_ref().is_some_and(|v| v.only());
    let interrupted = if only {
        cx.verify_only(meet.stop)
    } else if E::QUEUED {
        let (e, b, stop) = (&mut engine, &mut bufs, meet.stop);
        if cx.pace.is_some() {
            super::queued::run::<E, true>(&mut cx, e, b, batches, stop)
        } else {
            super::queued::run::<E, false>(&mut cx, e, b, batches, stop)
        }
    } else {
        sync_loop(
            &mut cx,
            &mut engine,
            bufs[0].as_mut_slice(),
            meet.stop,
            timed,
        )
    };
    // fio asks for one more I/O when the bytes are not all issued: a sync
    // due after the last write goes out then.
    let more = !interrupted && cx.errors.is_empty() && !cx.ended();
    if more && cx.syncs.pending.is_some() && cx.look.ended_short() {
        cx.sync_due();
    }
    if end_fsync && writes && !interrupted {
        cx.sync_all();
    }
    // An ended clone (fio's terminate) skips its verification pass, as fio.
    if !interrupted && cx.errors.is_empty() && !cx.ended() {
        cx.verify_written();
    }
    // fio logs a state file it cannot write ("failed to write state
    // file") and the job ends well (a fill_device job fills its disk).
    let state = cx.verifier.as_ref().map(|v| v.save_state());
    if let Some(Err(e)) = state {
        t.warnings
            .push(format!("verify_state_save: cannot write the state: {e}"));
    }
    let t_end = now_ns();
    cx.series.finish(t_end, &cx.recs);
    if let Some(h) = &mut cx.hist {
        h.finish(t_end, &cx.recs);
    }
    drop(engine);
    t.runtime_ns = t_end - cx.t_start;
    t.thread_ns = t.runtime_ns;
    t.cpu = CpuUsage::thread_now().since(&cpu0);
    cx.collect(&mut t, E::QUEUED);
    (t, interrupted)
}

fn attach<E: Engine>(
    engine: &mut E,
    (fds, files, paths): (&[RawFd], &[File], &[PathBuf]),
    bufs: &[IoBuf],
    writes: bool,
) -> std::io::Result<()> {
    let sizes = files
        .iter()
        .map(|f| f.metadata().map(|m| m.len()))
        .collect::<std::io::Result<Vec<u64>>>()?;
    let iov: Vec<libc::iovec> = bufs
        .iter()
        .map(|b| libc::iovec {
            iov_base: b.as_ptr().cast(),
            iov_len: b.len(),
        })
        .collect();
    engine.attach(Attach {
        fds,
        paths,
        sizes: &sizes,
        bufs: &iov,
        writes,
    })
}
