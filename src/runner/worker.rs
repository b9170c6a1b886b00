//! The timed loop of one clone: take the next I/O from the planner, issue the
//! prefetch advice N I/Os ahead, time the I/O with the monotonic clock, record
//! it. Nothing here prints or allocates per I/O.

use super::buffer::AlignedBuf;
use super::open::OpenSpec;
use super::result::Totals;
use super::stop::StopFlag;
use crate::engine::Engine;
use crate::metrics::clock::now_ns;
use crate::metrics::{CpuUsage, Recorder};
use crate::plan::{IoUnit, Planner};
use std::collections::VecDeque;
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
    /// I/O buffer, at least the largest I/O.
    pub buf: AlignedBuf,
}

#[inline]
fn advise(fd: RawFd, io: &IoUnit, rec: &mut Recorder) {
    let t0 = now_ns();
    // SAFETY: advice on an open descriptor; no memory is passed.
    unsafe {
        libc::posix_fadvise(
            fd,
            io.offset as libc::off_t,
            io.len as libc::off_t,
            libc::POSIX_FADV_WILLNEED,
        )
    };
    rec.record(now_ns().saturating_sub(t0));
}

/// Per-op-type recorders of one clone.
struct Recorders {
    read: Recorder,
    write: Recorder,
    advise: Recorder,
    fsync: Recorder,
    read_bytes: u64,
    write_bytes: u64,
}

/// Runs the clone to its end (or until `stop`); returns its measurements and
/// whether it was interrupted.
pub fn run<E: Engine>(
    mut w: Worker,
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
    let files: Result<Vec<File>, String> = w
        .paths
        .iter()
        .map(|p| {
            w.open
                .open(p)
                .map_err(|e| format!("cannot open {}: {e}", p.display()))
        })
        .collect();
    let files = match files {
        Ok(f) => f,
        Err(e) => {
            start.wait();
            t.errors.push(e);
            return (t, false);
        }
    };
    let fds: Vec<RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
    let buf = w.buf.as_mut_slice();
    let mut window: VecDeque<IoUnit> = VecDeque::with_capacity(w.prefetch + 1);
    let mut writes_since_fsync = 0u64;
    let mut interrupted = false;
    let mut r = Recorders {
        read: Recorder::new(),
        write: Recorder::new(),
        advise: Recorder::new(),
        fsync: Recorder::new(),
        read_bytes: 0,
        write_bytes: 0,
    };

    start.wait();
    let cpu0 = CpuUsage::thread_now();
    let t_start = now_ns();
    let deadline = w
        .runtime
        .map_or(u64::MAX, |d| t_start + d.as_nanos() as u64);

    if w.prefetch > 0 {
        for io in w.planner.by_ref().take(w.prefetch) {
            if !io.write {
                advise(fds[io.file as usize], &io, &mut r.advise);
            }
            window.push_back(io);
        }
    }

    loop {
        if stop.is_set() {
            interrupted = true;
            break;
        }
        let io = if w.prefetch > 0 {
            if let Some(ahead) = w.planner.next() {
                if !ahead.write {
                    advise(fds[ahead.file as usize], &ahead, &mut r.advise);
                }
                window.push_back(ahead);
            }
            match window.pop_front() {
                Some(io) => io,
                None => break,
            }
        } else {
            match w.planner.next() {
                Some(io) => io,
                None => break,
            }
        };
        let fd = fds[io.file as usize];
        let t0 = now_ns();
        let res = engine.submit(fd, &io, buf);
        let t1 = now_ns();
        match res {
            Ok(n) if n == io.len as usize => {}
            Ok(n) => {
                t.errors.push(format!(
                    "short {} of {} at offset {} of {}: {n} of {} bytes",
                    if io.write { "write" } else { "read" },
                    engine.name(),
                    io.offset,
                    w.paths[io.file as usize].display(),
                    io.len
                ));
                break;
            }
            Err(e) => {
                t.errors.push(format!(
                    "{} at offset {} ({} bytes) of {} failed: {e}",
                    if io.write { "write" } else { "read" },
                    io.offset,
                    io.len,
                    w.paths[io.file as usize].display()
                ));
                break;
            }
        }
        if io.write {
            r.write.record(t1 - t0);
            r.write_bytes += io.len as u64;
            if w.fsync_every > 0 {
                writes_since_fsync += 1;
                if writes_since_fsync == w.fsync_every {
                    writes_since_fsync = 0;
                    let f0 = now_ns();
                    // SAFETY: fsync on an open descriptor.
                    let rc = unsafe { libc::fsync(fd) };
                    r.fsync.record(now_ns() - f0);
                    if rc != 0 {
                        t.errors.push(format!(
                            "fsync of {} failed: {}",
                            w.paths[io.file as usize].display(),
                            std::io::Error::last_os_error()
                        ));
                        break;
                    }
                }
            }
        } else {
            r.read.record(t1 - t0);
            r.read_bytes += io.len as u64;
        }
        if t1 >= deadline {
            break;
        }
    }

    t.runtime_ns = now_ns() - t_start;
    t.thread_ns = t.runtime_ns;
    t.cpu = CpuUsage::thread_now().since(&cpu0);
    t.read.lat = r.read.finish();
    t.read.bytes = r.read_bytes;
    t.write.lat = r.write.finish();
    t.write.bytes = r.write_bytes;
    t.advise = r.advise.finish();
    t.fsync = r.fsync.finish();
    (t, interrupted)
}
