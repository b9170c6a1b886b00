//! The state of a clone's timed loop, shared by the one-at-a-time loop
//! ([`super::worker`]) and the loop with I/Os in flight ([`super::queued`]):
//! files, recorders, interval tickers, the per-I/O log, errors, and the
//! depth figures fio reports (`iodepth_level`, `iodepth_submit`,
//! `iodepth_complete`). Its verify steps are in `verify` (this folder).

use super::StopFlag;
use super::buffer::Contents;
use super::iolog::{IoLogEntry, IoLogWriter};
use super::lookahead::Lookahead;
use super::pace::{Pace, Step};
use super::result::{Ignored, Totals};
use super::series::{DirRecorders, Ticker};
use super::verify::verifier::Verifier;
use crate::metrics::Recorder;
use crate::metrics::clock::now_ns;
use crate::plan::IoUnit;
use std::os::fd::RawFd;
use std::path::PathBuf;

mod verify;

/// Everything the timed loop updates.
pub struct Ctx<'a> {
    /// fio's name of the engine, for messages.
    pub engine: &'static str,
    /// What an I/O error usually means with this engine ([`crate::engine::Engine::hint`]).
    pub hint: &'a dyn Fn(&std::io::Error) -> Option<&'static str>,
    /// Descriptors, indexed by `IoUnit::file`.
    pub fds: Vec<RawFd>,
    /// The files, for messages.
    pub paths: &'a [PathBuf],
    /// The I/O sequence with its prefetch window.
    pub look: Lookahead,
    /// Latencies and bytes of reads (0), writes (1) and trims (2).
    pub recs: [DirRecorders; 3],
    /// `posix_fadvise(WILLNEED)` latencies.
    pub advise: Recorder,
    /// `fsync` latencies.
    pub fsync: Recorder,
    /// Those are fdatasync.
    pub fsync_data_only: bool,
    /// The engine uses no file (`null`, `filecreate`): a sync completes at
    /// once without a call, as fio's null engine completes it.
    pub diskless: bool,
    /// With `cmdprio_*`: the thread's own ioprio (fio's `td->ioprio`), and
    /// latencies are also kept per priority.
    pub by_prio: Option<u16>,
    /// When the syncs of `fsync=N` are due.
    pub syncs: super::syncs::Syncs,
    /// The time series (`log_avg_msec`).
    pub series: Ticker,
    /// The histogram log's intervals, when they differ from the series'.
    pub hist: Option<Ticker>,
    /// Every I/O, when fio's per-I/O logs are asked for.
    pub io_log: Option<IoLogWriter>,
    /// When the timed part started.
    pub t_start: u64,
    /// When it must end (`runtime`).
    pub deadline: u64,
    /// Earliest of the deadline and the next interval boundary.
    pub next_event: u64,
    /// The error that stopped the clone, if any.
    pub errors: Vec<String>,
    /// Failed I/Os after the first (in flight when it failed).
    pub more_errors: u64,
    /// `continue_on_error`'s kinds of I/O (`process::CONTINUE_*` bits).
    pub continue_on: u8,
    /// Errors passed over under `continue_on_error`, and the first one.
    pub ignored: Ignored,
    /// The error that stopped the clone was ENOSPC or EDQUOT.
    pub no_space: bool,
    /// `fill_device`: ENOSPC or EDQUOT on a write ends the clone, without
    /// an error, and a short write is issued again for the rest (fio).
    pub fill_device: bool,
    /// A `fill_device` clone found the file system full (fio's terminate).
    pub filled: bool,
    /// What each write's buffer gets (`refill_buffers`, `scramble_buffers`),
    /// when it changes per write.
    pub contents: Option<Box<Contents>>,
    /// Verification (`verify`), when the job verifies.
    pub verifier: Option<Box<Verifier>>,
    /// I/Os queued at each depth bucket of fio's `iodepth_level`.
    pub depth_counts: [u64; 7],
    /// Submit calls by I/Os they sent, in fio's `iodepth_submit` buckets.
    pub submit_counts: [u64; 7],
    /// Reap calls by I/Os they returned, in fio's `iodepth_complete` buckets.
    pub complete_counts: [u64; 7],
    /// The launcher's watch (`exitall`, steady state, live progress), when
    /// the run has one.
    pub watch: Option<super::control::Watch>,
    /// Rate, think time, flow, latency target: `None` when the job sets
    /// none of them (the loops then have no pacing step).
    pub pace: Option<Box<Pace>>,
    /// When `ramp_time` ends (0: no ramp, or it is over).
    pub ramp_end: u64,
    /// What the figures start over with after the ramp.
    pub fresh: Fresh,
    /// Time spent in the verify phases (syncing, dropping and reading back
    /// at the end of passes): fio counts it as the reads' runtime only.
    pub verify_ns: u64,
}

/// What a clone's figures start over with when fio resets them (the end
/// of `ramp_time`, the final run of `latency_target`).
#[derive(Debug, Clone, Copy)]
pub struct Fresh {
    /// The job does not write (no write recorders).
    pub no_writes: bool,
    /// The job does not trim (no trim recorders).
    pub no_trims: bool,
    /// The engine has I/Os in flight (slat and clat recorders).
    pub queued: bool,
    /// Time-series interval in ms.
    pub series_ms: Option<u64>,
    /// Histogram-log interval in ms, when it differs.
    pub hist_ms: Option<u64>,
    /// `runtime` in ns, counted from the reset as fio.
    pub runtime_ns: Option<u64>,
    /// The directions the job's own I/O issues (fio's `td_read`,
    /// `td_write`, `td_trim`; a `verify_only` dry run writes nothing):
    /// each gets the runtime of the passes, reads also the verify phases'.
    pub own: [bool; 3],
}

impl Ctx<'_> {
    /// Handles `now >= next_event`: closes intervals, publishes progress
    /// to the launcher's watch; true when the deadline has passed or the
    /// launcher asked the clone to end.
    #[cold]
    pub fn event(&mut self, now: u64) -> bool {
        if self.ramp_end > 0 && now >= self.ramp_end {
            self.restart(now);
        }
        let mut ended = false;
        if let Some(w) = &mut self.watch
            && now >= w.next_ns
        {
            w.ctl.publish(super::control::Progress {
                ios: self.recs.iter().map(|d| d.lat.count()).sum(),
                bytes: self.recs.iter().map(|d| d.bytes).sum(),
                t_ns: now,
            });
            w.next_ns = now + w.ctl.interval_ns();
            ended = w.ctl.ended();
        }
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
            .min(self.hist.as_ref().map_or(u64::MAX, |h| h.next_ns))
            .min(self.watch.as_ref().map_or(u64::MAX, |w| w.next_ns))
            .min(if self.ramp_end > 0 {
                self.ramp_end
            } else {
                u64::MAX
            });
        now >= self.deadline || ended
    }

    /// True when the launcher asked this clone to end (`exitall`, steady
    /// state), or `fill_device` found the file system full.
    pub fn ended(&self) -> bool {
        self.filled || self.watch.as_ref().is_some_and(|w| w.ctl.ended())
    }

    /// Starts the figures over at `now`, as fio's `reset_all_stats` at the
    /// end of `ramp_time`: recorders (syncs and advice too), intervals, the
    /// per-I/O log, depth counts, the clock of the runtime and of the rates.
    #[cold]
    pub fn restart(&mut self, now: u64) {
        let f = self.fresh;
        self.ramp_end = 0;
        self.recs = [
            DirRecorders::new(false, f.queued),
            DirRecorders::new(f.no_writes, f.queued),
            DirRecorders::new(f.no_trims, f.queued),
        ];
        // fio's reset_io_stats clears the sync direction too.
        self.fsync.reset();
        self.advise.reset();
        self.series = Ticker::new(f.series_ms, now);
        self.hist = f.hist_ms.map(|ms| Ticker::new(Some(ms), now));
        if let Some(l) = &mut self.io_log {
            l.clear();
        }
        self.depth_counts = [0; 7];
        self.submit_counts = [0; 7];
        self.complete_counts = [0; 7];
        self.t_start = now;
        self.verify_ns = 0;
        self.deadline = f.runtime_ns.map_or(u64::MAX, |r| now.saturating_add(r));
        if let Some(p) = &mut self.pace {
            p.start(now);
        }
        self.next_event = self
            .deadline
            .min(self.series.next_ns)
            .min(self.hist.as_ref().map_or(u64::MAX, |h| h.next_ns));
    }

    /// The pacing step before an I/O (only with [`Self::pace`]): the
    /// flow's turn and the rate; it may turn the I/O to the other
    /// direction of a mix, as fio.
    pub fn pace_wait(&mut self, write: &mut bool, stop: &StopFlag) -> Step {
        let deadline = self.deadline;
        match &mut self.pace {
            Some(p) => p.wait(write, deadline, stop),
            None => Step::On,
        }
    }

    /// The pacing step after an I/O of `io` completed at `now` with total
    /// latency `lat` (only with [`Self::pace`]): `rate_min`, the latency
    /// target; a reset of the figures or the end of the clone (its error
    /// kept) are done here. `On`/`Stopped`/`End` are left to the loop.
    pub fn pace_done(&mut self, io: IoUnit, lat: u64, now: u64) -> Step {
        let ramp = self.ramp_end > 0 && now < self.ramp_end;
        let Some(p) = &mut self.pace else {
            return Step::On;
        };
        match p.done(io.write, io.len, lat, now, ramp) {
            Step::Reset => {
                self.restart(now);
                Step::On
            }
            Step::End => {
                if let Some(e) = p.error.take() {
                    self.errors.push(e);
                }
                Step::End
            }
            s => s,
        }
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
                offset: io.offset,
                len: io.len,
                ddir: io.ddir(),
                file: io.file,
            });
        }
    }

    /// At the end of a pass (the plan paused: see `PlanParams::pass_breaks`),
    /// drops the files' cached pages as fio does when it starts over on a
    /// file, and starts the next pass; false at the end of the plan.
    #[cold]
    pub fn next_pass(&mut self) -> bool {
        if !self.verify_written() {
            return false;
        }
        let done = self.recs.iter().map(|d| d.bytes).sum();
        let short = self.look.pass_short();
        self.look.another_pass(done, self.reads_back());
        if !self.look.next_pass(&self.fds, &mut self.advise) {
            return false;
        }
        if self.look.counts_loops() {
            self.syncs.new_loop(short);
        }
        if self.verifier.as_ref().is_none_or(|v| v.pass_drops) {
            for &fd in &self.fds {
                crate::sys::pagecache::drop_cached(fd);
            }
        }
        true
    }

    /// Counts a completed write; a sync may become due, issued before the
    /// next I/O ([`Self::sync_due`]) as fio does ([`super::syncs`]). Always
    /// true (kept for the loops' shape).
    #[inline]
    pub fn after_write(&mut self, file: u16) -> bool {
        let look = &mut self.look;
        self.syncs
            .after_io(Some(file), |done| look.loop_starts_at(done));
        true
    }

    /// Counts a completed read or trim: with `fsync=N`, fio syncs again
    /// before the next I/O while the writes are a multiple of N.
    #[inline]
    pub fn after_other(&mut self) {
        let look = &mut self.look;
        self.syncs.after_io(None, |done| look.loop_starts_at(done));
    }

    /// A queued engine issued `io`: fio counts its writes for `fsync=N` as
    /// issued ([`super::syncs`]).
    #[inline]
    pub fn count_issue(&mut self, io: &IoUnit) {
        self.syncs.issued(io.write.then_some(io.file));
    }

    /// Issues the syncs [`Self::after_write`] made due, now that another
    /// I/O follows (or fio would ask for one); false on failure.
    #[cold]
    pub fn sync_due(&mut self) -> bool {
        let Some((file, n)) = self.syncs.take() else {
            return true;
        };
        for _ in 0..n {
            let f0 = now_ns();
            let rc = match self.diskless {
                true => 0,
                false => sync_fd(self.fds[file as usize], self.fsync_data_only),
            };
            self.fsync.record(now_ns() - f0);
            if rc != 0 {
                self.errors.push(format!(
                    "fsync of {} failed: {}",
                    self.paths[file as usize].display(),
                    std::io::Error::last_os_error()
                ));
                return false;
            }
        }
        true
    }

    /// fsyncs every file (fio's `end_fsync`, `fsync_on_close`); a failure
    /// is kept as the clone's error.
    #[cold]
    pub fn sync_all(&mut self) {
        if self.diskless {
            return;
        }
        for (fd, path) in self.fds.iter().zip(self.paths) {
            if sync_fd(*fd, false) != 0 {
                let e = std::io::Error::last_os_error();
                self.errors
                    .push(format!("fsync of {} failed: {e}", path.display()));
            }
        }
    }

    /// Moves what the loop measured into the totals.
    pub fn collect(mut self, t: &mut Totals, queued: bool) {
        let [r, wr, tr] = &self.recs;
        // fio's update_runtime: the passes' time for each direction the job
        // issued, the verify phases' for reads (backend.c).
        let passes = t.runtime_ns.saturating_sub(self.verify_ns);
        let verify = [self.verify_ns, 0, 0];
        let dirs = [(&mut t.read, r), (&mut t.write, wr), (&mut t.trim, tr)];
        for (d, (stats, rec)) in dirs.into_iter().enumerate() {
            stats.lat = rec.lat.finish();
            stats.clat = rec.clat.finish();
            stats.slat = rec.slat.finish();
            stats.bytes = rec.bytes;
            stats.prios = rec.prios.finish();
            let own = self.fresh.own[d] && rec.bytes > 0;
            stats.busy_ns = Some(if own { passes } else { 0 } + verify[d]);
        }
        t.advise = self.advise.finish();
        t.fsync = self.fsync.finish();
        t.series = std::mem::take(&mut self.series.out);
        t.hist_series = self.hist.map(|h| h.out);
        t.latency_depth = self.pace.as_ref().and_then(|p| p.final_depth());
        t.errors = std::mem::take(&mut self.errors);
        t.no_space = self.no_space;
        t.ignored = self.ignored;
        t.verify = self.verifier.map(|v| v.out).unwrap_or_default();
        match self.io_log.take().map(IoLogWriter::finish) {
            Some(Ok(log)) => t.io_logs.push(log),
            Some(Err(e)) => t.errors.push(format!("cannot keep the per-I/O log: {e}")),
            None => {}
        }
        (t.depth_counts, t.submit_counts, t.complete_counts) =
            (self.depth_counts, self.submit_counts, self.complete_counts);
        if !queued {
            // One at a time: every I/O is submitted and completed alone (as
            // fio counts its synchronous engines), nothing counted per I/O.
            let ios = t.read.ios() + t.write.ios() + t.trim.ios();
            t.depth_counts[0] = ios;
            t.submit_counts[batch_bucket(1)] = ios;
            t.complete_counts[batch_bucket(1)] = ios;
        }
        if self.more_errors > 0 {
            t.errors.push(format!(
                "{} more I/Os in flight failed too",
                self.more_errors
            ));
        }
    }

    /// Keeps the error text of a failed or short I/O (the first; later
    /// ones are counted); true when `continue_on_error` passes over it
    /// (EIO or EILSEQ on a kind of I/O it covers) and the clone goes on.
    pub fn io_error(&mut self, io: IoUnit, result: std::io::Result<usize>) -> bool {
        let errno = result.as_ref().err().and_then(|e| e.raw_os_error());
        let bit = match io.ddir() {
            0 => crate::job::groups::process::CONTINUE_READ,
            _ => crate::job::groups::process::CONTINUE_WRITE,
        };
        let non_fatal = matches!(errno, Some(libc::EIO) | Some(libc::EILSEQ));
        if non_fatal && self.continue_on & bit != 0 {
            self.ignored.count += 1;
            if self.ignored.count == 1 {
                self.ignored.first_errno = errno.unwrap_or(0);
                self.ignored.first = self.io_error_text(io, result);
            }
            return true;
        }
        if !self.errors.is_empty() {
            self.more_errors += 1;
            return false;
        }
        self.no_space = matches!(errno, Some(libc::ENOSPC) | Some(libc::EDQUOT));
        let text = self.io_error_text(io, result);
        self.errors.push(text);
        false
    }

    fn io_error_text(&self, io: IoUnit, result: std::io::Result<usize>) -> String {
        let dir = ["read", "write", "trim"][io.ddir() as usize];
        let engine = self.engine;
        let path = self.paths[io.file as usize].display();
        match result {
            Ok(n) => format!(
                "short {dir} of {engine} at offset {} of {path}: {n} of {} bytes",
                io.offset, io.len
            ),
            Err(e) => {
                let hint = (self.hint)(&e).map_or(String::new(), |h| format!(" ({h})"));
                format!(
                    "{dir} at offset {} ({} bytes) of {path} failed ({engine}): {e}{hint}",
                    io.offset, io.len
                )
            }
        }
    }
}

/// fio's `iodepth_level` bucket of a queue depth: 1, 2, 4, 8, 16, 32, >=64.
pub fn depth_bucket(d: usize) -> usize {
    match d {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

/// fio's `iodepth_submit`/`iodepth_complete` bucket of a batch of `n`
/// I/Os (fio's `__io_u_mark_map`): 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64.
pub fn batch_bucket(n: usize) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

/// `fsync` (or `fdatasync` when `data_only`) of `fd`; the call's result.
fn sync_fd(fd: RawFd, data_only: bool) -> libc::c_int {
    // SAFETY: syncing a descriptor; no memory is passed. A bad descriptor
    // only makes the call fail.
    unsafe {
        if data_only {
            libc::fdatasync(fd)
        } else {
            libc::fsync(fd)
        }
    }
}
