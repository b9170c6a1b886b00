//! One clone: open its files, attach the engine, wait at the start barrier,
//! run the timed loop (the one-at-a-time loop here for synchronous engines,
//! [`super::queued`] for engines with I/Os in flight), and return what it
//! measured. Nothing here prints or allocates per I/O.

use super::buffer::AlignedBuf;
use super::lookahead::Lookahead;
use super::open::OpenSpec;
use super::result::Totals;
use super::series::{DirRecorders, IoLogEntry, Ticker};
use super::stop::StopFlag;
use crate::engine::{Attach, Engine, Queued};
use crate::metrics::clock::now_ns;
use crate::metrics::{CpuUsage, Recorder};
use crate::plan::{IoUnit, Planner};
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;
use std::sync::Barrier;
use std::time::Duration;

/// Everything one clone needs, prepared before the start barrier.
pub struct Worker {
    /// How to open the files.
    pub open: OpenSpec,
    /// The files, indexed by `IoUnit::file`.
    pub paths: Vec<PathBuf>,
    /// The I/O sequence.
    pub planner: Planner,
    /// WILLNEED advice this many I/Os ahead (0: none).
    pub prefetch: usize,
    /// fsync every this many writes (0: never).
    pub fsync_every: u64,
    /// Stop after this long.
    pub runtime: Option<Duration>,
    /// I/O buffers, each at least the largest I/O: one per I/O in flight.
    pub bufs: Vec<AlignedBuf>,
    /// Submit once this many I/Os are queued.
    pub batch_submit: usize,
    /// Wait for at least this many completions at a time.
    pub complete_min: usize,
    /// Time-series interval in ms.
    pub series_ms: Option<u64>,
    /// Histogram-log interval in ms, when it differs from the series'.
    pub hist_ms: Option<u64>,
    /// Keep every I/O for fio's per-I/O logs.
    pub per_io_log: bool,
}

/// State of the timed loop shared by the synchronous and queued loops.
pub(super) struct Ctx<'a> {
    pub fds: Vec<RawFd>,
    pub paths: &'a [PathBuf],
    pub look: Lookahead,
    pub recs: [DirRecorders; 2],
    pub advise: Recorder,
    pub fsync: Recorder,
    pub fsync_every: u64,
    pub writes_since_fsync: u64,
    pub series: Ticker,
    pub hist: Option<Ticker>,
    pub io_log: Option<Vec<IoLogEntry>>,
    pub t_start: u64,
    pub deadline: u64,
    /// Earliest of the deadline and the next interval boundary.
    pub next_event: u64,
    pub errors: Vec<String>,
    /// Failed I/Os after the first (in flight when it failed).
    pub more_errors: u64,
    /// I/Os queued at each depth bucket of fio's `iodepth_level`.
    pub depth_counts: [u64; 7],
}

impl Ctx<'_> {
    /// Handles `now >= next_event`: closes intervals; true when the
    /// deadline has passed.
    #[cold]
    pub fn event(&mut self, now: u64) -> bool {
        if now >= self.series.next_ns {
            self.series.tick(now, &self.recs);
        }
        if let Some(h) = &mut self.hist
            && now >= h.next_ns
        {
            h.tick(now, &self.recs);
        }
        self.next_event = self
            .deadline
            .min(self.series.next_ns)
            .min(self.hist.as_ref().map_or(u64::MAX, |h| h.next_ns));
        now >= self.deadline
    }

    /// Records the per-I/O log entry.
    #[cold]
    pub fn log_io(&mut self, io: IoUnit, t_done: u64, lat: u64, clat: u64, slat: u64) {
        if let Some(l) = &mut self.io_log {
            l.push(IoLogEntry {
                t_ns: t_done - self.t_start,
                lat,
                clat,
                slat,
                len: io.len,
                write: io.write,
            });
        }
    }

    /// Issues the fsync due after a completed write; false on failure.
    pub fn after_write(&mut self, file: u16) -> bool {
        if self.fsync_every == 0 {
            return true;
        }
        self.writes_since_fsync += 1;
        if self.writes_since_fsync < self.fsync_every {
            return true;
        }
        self.writes_since_fsync = 0;
        let f0 = now_ns();
        // SAFETY: fsync on an open descriptor.
        let rc = unsafe { libc::fsync(self.fds[file as usize]) };
        self.fsync.record(now_ns() - f0);
        if rc != 0 {
            self.errors.push(format!(
                "fsync of {} failed: {}",
                self.paths[file as usize].display(),
                std::io::Error::last_os_error()
            ));
            return false;
        }
        true
    }

    /// The error text of a failed or short I/O.
    pub fn io_error(&mut self, engine: &str, io: IoUnit, result: std::io::Result<usize>) {
        if !self.errors.is_empty() {
            self.more_errors += 1;
            return;
        }
        let dir = if io.write { "write" } else { "read" };
        let path = self.paths[io.file as usize].display();
        self.errors.push(match result {
            Ok(n) => format!(
                "short {dir} of {engine} at offset {} of {path}: {n} of {} bytes",
                io.offset, io.len
            ),
            Err(e) => {
                let hint = if engine == "io_uring" && e.raw_os_error() == Some(libc::EOPNOTSUPP) {
                    " (with hipri=1: this device has no poll queues for polled I/O; drop hipri)"
                } else {
                    ""
                };
                format!(
                    "{dir} at offset {} ({} bytes) of {path} failed ({engine}): {e}{hint}",
                    io.offset, io.len
                )
            }
        });
    }
}

/// Runs the clone to its end (or until `stop`); returns its measurements and
/// whether it was interrupted.
pub fn run<E: Engine>(
    w: Worker,
    mut engine: E,
    start: &Barrier,
    stop: &StopFlag,
) -> (Totals, bool) {
    let mut t = Totals::default();
    // A private descriptor table gives this thread the kernel's single-owner
    // fdget() fast path (no atomic file refcount per I/O), as fio's forked
    // job processes have. Files are opened after it, so they live only here.
    // SAFETY: unshare(CLONE_FILES) affects only the calling thread.
    unsafe { libc::unshare(libc::CLONE_FILES) };
    let opened = open_and_attach(&w.open, &w.paths, &w.bufs, &mut engine);
    let writes = w.open.writable;
    let Worker {
        paths,
        planner,
        prefetch,
        fsync_every,
        runtime,
        mut bufs,
        batch_submit,
        complete_min,
        series_ms,
        hist_ms,
        per_io_log,
        ..
    } = w;
    let files = match opened {
        Ok(f) => f,
        Err(e) => {
            start.wait();
            t.errors.push(e.to_string());
            return (t, false);
        }
    };
    let mut cx = Ctx {
        fds: files.iter().map(|f| f.as_raw_fd()).collect(),
        paths: &paths,
        look: Lookahead::new(planner, prefetch),
        recs: [
            DirRecorders::new(false, !engine.is_sync()),
            DirRecorders::new(!writes, !engine.is_sync()),
        ],
        advise: if prefetch > 0 {
            Recorder::new()
        } else {
            Recorder::empty()
        },
        fsync: if fsync_every > 0 {
            Recorder::new()
        } else {
            Recorder::empty()
        },
        fsync_every,
        writes_since_fsync: 0,
        series: Ticker::new(None, 0),
        hist: None,
        io_log: per_io_log.then(Vec::new),
        t_start: 0,
        deadline: u64::MAX,
        next_event: u64::MAX,
        errors: Vec::new(),
        more_errors: 0,
        depth_counts: [0; 7],
    };

    start.wait();
    let cpu0 = CpuUsage::thread_now();
    let t_start = now_ns();
    cx.t_start = t_start;
    cx.deadline = runtime.map_or(u64::MAX, |d| t_start + d.as_nanos() as u64);
    cx.series = Ticker::new(series_ms, t_start);
    cx.hist = hist_ms.map(|ms| Ticker::new(Some(ms), t_start));
    cx.event(t_start);
    {
        let fds = &cx.fds;
        cx.look.prime(fds, &mut cx.advise);
    }

    let interrupted = if engine.is_sync() {
        sync_loop(&mut cx, &mut engine, bufs[0].as_mut_slice(), stop)
    } else {
        super::queued::run(
            &mut cx,
            &mut engine,
            &mut bufs,
            batch_submit,
            complete_min,
            stop,
        )
    };

    let t_end = now_ns();
    cx.series.finish(t_end, &cx.recs);
    if let Some(h) = &mut cx.hist {
        h.finish(t_end, &cx.recs);
    }
    drop(engine);
    t.runtime_ns = t_end - t_start;
    t.thread_ns = t.runtime_ns;
    t.cpu = CpuUsage::thread_now().since(&cpu0);
    let [r, wr] = &cx.recs;
    for (stats, rec) in [(&mut t.read, r), (&mut t.write, wr)] {
        stats.lat = rec.lat.finish();
        stats.clat = rec.clat.finish();
        stats.slat = rec.slat.finish();
        stats.bytes = rec.bytes;
    }
    t.advise = cx.advise.finish();
    t.fsync = cx.fsync.finish();
    t.series = std::mem::take(&mut cx.series.out);
    t.hist_series = cx.hist.map(|h| h.out);
    t.io_log = cx.io_log.take().unwrap_or_default();
    t.errors = cx.errors;
    t.depth_counts = cx.depth_counts;
    if t.depth_counts == [0; 7] {
        t.depth_counts[0] = t.read.ios() + t.write.ios();
    }
    if cx.more_errors > 0 {
        t.errors
            .push(format!("{} more I/Os in flight failed too", cx.more_errors));
    }
    (t, interrupted)
}

fn open_and_attach<E: Engine>(
    open: &OpenSpec,
    paths: &[PathBuf],
    bufs: &[AlignedBuf],
    engine: &mut E,
) -> crate::Result<Vec<File>> {
    let files: Vec<File> = paths
        .iter()
        .map(|p| {
            open.open(p)
                .map_err(|e| crate::Error::io(format!("cannot open {}", p.display()), e))
        })
        .collect::<crate::Result<_>>()?;
    let fds: Vec<RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
    let sizes: Vec<u64> = files
        .iter()
        .map(|f| f.metadata().map(|m| m.len()).unwrap_or(0))
        .collect();
    let iov: Vec<libc::iovec> = bufs
        .iter()
        .map(|b| libc::iovec {
            iov_base: b.as_ptr().cast(),
            iov_len: b.len(),
        })
        .collect();
    engine
        .attach(Attach {
            fds: &fds,
            sizes: &sizes,
            bufs: &iov,
            writes: open.writable,
        })
        .map_err(|e| crate::Error::io(format!("ioengine={}", engine.name()), e))?;
    Ok(files)
}

/// How often the synchronous loop looks at the stop flag.
const STOP_POLL_NS: u64 = 5_000_000;

/// One I/O at a time: time it, record it. Returns true if stopped.
fn sync_loop<E: Engine>(cx: &mut Ctx, engine: &mut E, buf: &mut [u8], stop: &StopFlag) -> bool {
    if cx.io_log.is_some() {
        sync_loop_with::<E, true>(cx, engine, buf, stop)
    } else {
        sync_loop_with::<E, false>(cx, engine, buf, stop)
    }
}

/// The loop, compiled once with and once without the per-I/O log so the
/// common case pays nothing for it. The stop flag is polled with the
/// interval events (at least every [`STOP_POLL_NS`]), not per I/O.
fn sync_loop_with<E: Engine, const LOG: bool>(
    cx: &mut Ctx,
    engine: &mut E,
    buf: &mut [u8],
    stop: &StopFlag,
) -> bool {
    let mut poll = now_ns() + STOP_POLL_NS;
    let mut next = cx.next_event.min(poll);
    let mut io = IoUnit::default();
    loop {
        if !cx.look.next_into(&cx.fds, &mut cx.advise, &mut io) {
            return false;
        }
        let fd = cx.fds[io.file as usize];
        let t0 = now_ns();
        let res = engine.queue(0, fd, io, buf);
        let t1 = now_ns();
        match res {
            Ok(Queued::Done(n)) if n == io.len as usize => {}
            Ok(Queued::Done(n)) => {
                cx.io_error(engine.name(), io, Ok(n));
                return false;
            }
            Ok(Queued::Pending) => unreachable!("a synchronous engine queued an I/O"),
            Err(e) => {
                cx.io_error(engine.name(), io, Err(e));
                return false;
            }
        }
        let d = &mut cx.recs[io.write as usize];
        d.lat.record(t1 - t0);
        d.bytes += io.len as u64;
        if io.write && !cx.after_write(io.file) {
            return false;
        }
        if LOG {
            cx.log_io(io, t1, t1 - t0, t1 - t0, 0);
        }
        if t1 >= next {
            if stop.is_set() {
                return true;
            }
            if t1 >= cx.next_event && cx.event(t1) {
                return false;
            }
            poll = t1 + STOP_POLL_NS;
            next = cx.next_event.min(poll);
        }
    }
}
