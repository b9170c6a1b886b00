//! The planner's account of its loops, for what fio does at their ends:
//! where each loop begins (a sync due there goes out twice) and whether the
//! sequence ended before its bytes were all issued (a sync due after the
//! last write still goes out).

use super::Planner;

impl Planner {
    /// True when the current loop has issued its bytes: fio's `do_io`
    /// ends a pass once the bytes issued reach `size` (the files' regions
    /// together), whichever files they went to. A job over one file ends
    /// its loop with the file's own target; a mix over several files,
    /// whose directions each go through a file, ends here.
    #[inline]
    pub(super) fn loop_full(&self) -> bool {
        (self.loop_limit).is_some_and(|l| {
            self.bytes - self.bytes_at_loop + self.extra_bytes - self.extra_bytes_at_loop >= l
        })
    }

    /// True when fio's next fetch is a sync (`fsync=N`: the writes are a
    /// multiple of N, and the last fetch was no sync, which a fetch for
    /// an I/O never is; io_u.c `get_rw_ddir`). fio picks the sync's file
    /// round robin like an I/O's (`set_io_u_file`), so over several files
    /// the sync takes a turn and the next I/O goes to the file after.
    #[inline]
    pub(super) fn sync_due(&self) -> bool {
        let n = self.p.sync_every;
        n > 0 && self.files.len() > 1 && self.writes > 0 && self.writes.is_multiple_of(n)
    }

    /// The next file, round robin from the last, with work left in this
    /// loop; `None` when the loop is over.
    #[inline]
    pub(super) fn next_open_file(&self) -> Option<usize> {
        let n = self.files.len();
        if n == 1 {
            return (!self.files[0].finished && !self.loop_full()).then_some(0);
        }
        if self.loop_full() {
            return None;
        }
        (0..n)
            .map(|k| (self.next_file + k) % n)
            .find(|&i| !self.files[i].finished)
    }

    /// True when the pass now ending issued less than the regions hold:
    /// its last block did not fit, or the random map ran out, so fio's
    /// loop ended on a fetch that found no I/O (having issued a sync due
    /// there), not on its bytes.
    pub fn pass_short(&self) -> bool {
        let size: u64 = self.p.regions.iter().map(|r| r.len).sum();
        self.bytes - self.bytes_at_loop < size
    }

    /// True when the sequence ended before the job's bytes were all issued
    /// (`size` per loop, or `io_size`): the last block did not fit, or the
    /// random map ran out. fio's loop then asks for one more I/O, and a
    /// sync due after the last write is still issued (the etcd test's
    /// 10029th fdatasync). False for a runtime-bound job or at `number_ios`.
    pub fn ended_short(&self) -> bool {
        // number_ios counts the reads besides the plan too (a backlog's
        // read-back): fio's loop stops on them before asking again.
        if (self.p.number_ios).is_some_and(|n| self.issued + self.extra_ios >= n) {
            return false;
        }
        let limit = match (self.p.access.bytes_limit, self.p.loops) {
            (Some(l), _) => l,
            (None, Some(loops)) => {
                let size: u64 = self.p.regions.iter().map(|r| r.len).sum();
                size.saturating_mul(loops)
            }
            (None, None) => return false,
        };
        self.bytes < limit
    }

    /// True when the sequence is `loops` passes (not `time_based`).
    pub fn counts_loops(&self) -> bool {
        self.p.loops.is_some()
    }

    /// Remembers where each new loop begins (fio forgets its last sync
    /// there): see [`Planner::loop_starts_at`].
    pub fn mark_loops(&mut self) {
        self.mark_loops = true;
    }

    /// True once, when `done` I/Os are exactly those before a loop that
    /// began (of a `loops` job; not a `time_based` one). Marks already
    /// passed are dropped (a pass that pauses begins its loop only once
    /// its last I/O is done: the runner tells the syncs itself).
    pub fn loop_starts_at(&mut self, done: u64) -> bool {
        while self.loop_starts.front().is_some_and(|&s| s < done) {
            self.loop_starts.pop_front();
        }
        if self.loop_starts.front() == Some(&done) {
            self.loop_starts.pop_front();
            return true;
        }
        false
    }

    /// fio's `keep_running` after the last loop: the files start over (its
    /// `clear_io_state`), so another pass follows while `done` (the bytes
    /// done so far, read-backs included) is short of `io_size`, else of
    /// `size`, by a largest block or more. Without `io_size`, only for a
    /// job that read back what it wrote (`reads_back`: fio's files are
    /// otherwise done, which ends it). Only at the end of the last pass,
    /// for a `loops` job short of its `number_ios`; true when a pass was added.
    pub fn another_pass(&mut self, done: u64, reads_back: bool) -> bool {
        // fio ends a job whose pass did no I/O (its `fio_mark_td_terminate`).
        if self.pass_pending
            || !self.p.pass_breaks
            || self.issued == self.issued_at_loop
            || !self.past_last_loop(self.loop_index + 1)
            || !(reads_back || self.p.access.bytes_limit.is_some())
            // fio drains its queue before `keep_running`: the bytes still
            // in flight count as done.
            || !self.more_wanted(done.max(self.bytes))
        {
            return false;
        }
        self.extra_loops += 1;
        self.pass_pending = true;
        true
    }

    /// The test of [`Self::another_pass`] on `done` bytes: true when fio's
    /// `keep_running` goes on after the `loops`.
    pub(super) fn more_wanted(&self, done: u64) -> bool {
        let Some(loops) = self.p.loops else {
            return false;
        };
        // A queued pass that ended on its bytes (fio's `bytes_issued`
        // reached `size`) left its files open, so they start over; one
        // that ended short found its files done (posixaio, `io_size=99k`
        // over 66k whose 8k and 4k blocks leave 1k tails: fio one pass).
        let ended_on_bytes = self.p.pass_bytes && !self.pass_short();
        if !self.p.restarts && !ended_on_bytes {
            return false;
        }
        // fio's keep_running asks exceeds_number_ios, which counts the
        // reads besides the plan ([`Planner::count_extra`]) too.
        if self
            .p
            .number_ios
            .is_some_and(|n| self.issued + self.extra_ios >= n)
            || self.all_issued()
        {
            return false;
        }
        let limit = match self.p.access.bytes_limit {
            Some(l) => l / loops.max(1),
            None => self.p.regions.iter().map(|r| r.len).sum(),
        };
        done < limit && limit - done >= self.p.bs_max
    }

    /// True once the bytes of all loops are issued (fio's
    /// `io_issue_bytes_exceeded`, which its next pass then stops at before
    /// any I/O).
    pub(super) fn all_issued(&self) -> bool {
        self.total_limit.is_some_and(|l| self.bytes >= l)
    }
}
