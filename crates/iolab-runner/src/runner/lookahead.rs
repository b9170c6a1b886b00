//! The prefetch window shared by every loop: `prefetch=N` advises the read
//! that will be issued N I/Os later (primed with the first N).

use crate::metrics::Recorder;
use crate::metrics::clock::now_ns;
use crate::plan::{IoUnit, Planner};
use std::collections::VecDeque;
use std::os::fd::RawFd;

/// The planner plus the I/Os already advised but not yet issued.
pub struct Lookahead {
    planner: Planner,
    window: VecDeque<IoUnit>,
    prefetch: usize,
}

#[inline]
fn advise(fd: RawFd, io: IoUnit, rec: &mut Recorder) {
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

impl Lookahead {
    /// True once, when `done` I/Os end a loop and another begins (only for
    /// a planner told to [`Planner::mark_loops`]).
    pub fn loop_starts_at(&mut self, done: u64) -> bool {
        self.planner.loop_starts_at(done)
    }

    /// See [`Planner::count_extra`].
    pub fn count_extra(&mut self, n: u64) {
        self.planner.count_extra(n);
    }

    /// See [`Planner::count_extra_bytes`].
    pub fn count_extra_bytes(&mut self, n: u64) {
        self.planner.count_extra_bytes(n);
    }

    /// True when the sequence is `loops` passes (not `time_based`).
    pub fn counts_loops(&self) -> bool {
        self.planner.counts_loops()
    }

    /// See [`Planner::another_pass`].
    pub fn another_pass(&mut self, done: u64, reads_back: bool) -> bool {
        self.planner.another_pass(done, reads_back)
    }

    /// See [`Planner::pass_short`].
    pub fn pass_short(&self) -> bool {
        self.planner.pass_short()
    }

    /// See [`Planner::ended_short`].
    pub fn ended_short(&self) -> bool {
        self.planner.ended_short()
    }

    /// A window of `prefetch` I/Os over `planner`.
    pub fn new(planner: Planner, prefetch: usize) -> Lookahead {
        Lookahead {
            planner,
            window: VecDeque::with_capacity(prefetch + 1),
            prefetch,
        }
    }

    /// Advises the first `prefetch` reads (call once, after the start).
    pub fn prime(&mut self, fds: &[RawFd], rec: &mut Recorder) {
        for io in self.planner.by_ref().take(self.prefetch) {
            if !io.write {
                advise(fds[io.file as usize], io, rec);
            }
            self.window.push_back(io);
        }
    }

    /// Starts the planner's next pass once this one is issued (see
    /// [`Planner::next_pass`]) and advises its first reads; false when
    /// there is none.
    pub fn next_pass(&mut self, fds: &[RawFd], rec: &mut Recorder) -> bool {
        if !self.planner.next_pass() {
            return false;
        }
        self.prime(fds, rec);
        true
    }

    /// Writes the next I/O to issue into `out`, after advising the one
    /// `prefetch` ahead; false at the end (see [`Planner::next_into`]).
    #[inline(always)]
    pub fn next_into(&mut self, fds: &[RawFd], rec: &mut Recorder, out: &mut IoUnit) -> bool {
        if self.prefetch == 0 {
            return self.planner.next_into(out);
        }
        if let Some(ahead) = self.planner.next() {
            if !ahead.write {
                advise(fds[ahead.file as usize], ahead, rec);
            }
            self.window.push_back(ahead);
        }
        match self.window.pop_front() {
            Some(io) => {
                *out = io;
                true
            }
            None => false,
        }
    }
}
