//! The sequence of I/Os of one job clone: which file, offset, length and
//! direction, reproducible from the seed. Pure computation, no I/O.

use super::draws::Draws;
use super::offsets::FileState;
use super::sizes::pick_len;
use super::unit::{IoUnit, PlanParams, Region};
use crate::job::{Mix, Pattern};

/// Generates the I/Os of one clone in order.
#[derive(Debug, Clone)]
pub struct Planner {
    p: PlanParams,
    files: Vec<FileState>,
    rng: Draws,
    loop_index: u64,
    issued: u64,
    next_file: usize,
    batch: [IoUnit; BATCH],
    batch_pos: usize,
    batch_len: usize,
    /// Use [`Planner::refill_one_random_read`] where it applies.
    fast: bool,
    /// Use [`Planner::refill_uniform_reads`] where it applies.
    fast_nomap: bool,
    /// A pass ended and the next waits for [`Planner::next_pass`].
    pass_pending: bool,
    /// I/Os until the next random offset (`rw=randread:N`).
    seq_left: u64,
    /// Bytes planned in all (for `io_size`).
    bytes: u64,
    /// The I/Os planned before each loop that began and is not yet
    /// reached ([`Planner::mark_loops`]).
    loop_starts: std::collections::VecDeque<u64>,
    mark_loops: bool,
    /// Passes added after `loops` ([`Planner::another_pass`]).
    extra_loops: u64,
    /// I/Os planned before the current loop began.
    issued_at_loop: u64,
    /// Bytes planned before the current loop began.
    bytes_at_loop: u64,
    /// Writes planned in all (fio's `io_issues[DDIR_WRITE]`).
    writes: u64,
    /// A mix's current direction, 1 for writes (fio's `td->rwmix_ddir`).
    rwmix_ddir: usize,
    /// I/Os of that direction before the next draw (fio's `rwmix_issues`).
    rwmix_issues: u64,
    /// Bytes done in the current strided zone, over all files (fio's
    /// `td->zone_bytes`).
    zone_bytes: u64,
    /// fio's limit of a pass over several files (`size`): see
    /// [`Planner::loop_full`].
    loop_limit: Option<u64>,
    /// Bytes of all loops together (fio's `io_issue_bytes_exceeded`).
    total_limit: Option<u64>,
    /// I/Os the runner did besides the plan that fio counts in
    /// `number_ios` (the verify reads: see [`Planner::count_extra`]).
    extra_ios: u64,
    /// Bytes the runner read back besides the plan, and their count when
    /// the loop began ([`Planner::count_extra_bytes`]).
    extra_bytes: u64,
    extra_bytes_at_loop: u64,
}

impl Planner {
    /// A planner positioned before the first I/O.
    pub fn new(p: PlanParams) -> Planner {
        let rng = Draws::new(p.seed);
        // A pass ends once its files end or, with a queued engine or
        // time_based (`pass_bytes`: fio's do_io counts `bytes_issued` only
        // for queued I/Os), once the loop's bytes are issued: with several
        // files the job's (`size`), a file has no share. And no pass goes
        // on once the bytes of all loops are issued
        // (`io_issue_bytes_exceeded`: `size`, or `io_size`, times `loops`),
        // so a last I/O issued whole takes its excess from the last loop.
        let size: u64 = p.regions.iter().map(|r| r.len).sum();
        let total_limit = (p.access.bytes_limit).or(p.loops.map(|l| size.saturating_mul(l)));
        // A pass of random writes without the map may issue `io_size`
        // (fio's do_io: `total_bytes = max(size, io_size)`), so one with a
        // queued engine does more than `size` before its loop ends.
        let pass = size.max(p.access.overwrite_pass);
        let grown = p.pass_bytes && pass > size;
        let loop_limit = (p.pass_bytes && p.regions.len() > 1 && p.loops.is_some()).then_some(pass);
        // With a verify backlog the pass may issue `size` more, its reads
        // and writes together; files still end where they do.
        let backlog = p.backlog_pass && p.loops.is_some();
        let loop_limit = match backlog {
            true => Some(pass + size),
            false => loop_limit,
        };
        let target = |r: Region| match (loop_limit, total_limit) {
            (Some(_), _) => u64::MAX,
            (None, Some(all)) if !p.pass_bytes && r.len > 0 => all,
            _ if grown && r.len > 0 => pass,
            _ => r.len,
        };
        let files = (p.regions.iter())
            .map(|&region| FileState::new(region, target(region)))
            .collect();
        let mut pl = Planner {
            p,
            files,
            rng,
            loop_index: 0,
            issued: 0,
            next_file: 0,
            batch: [IoUnit {
                file: 0,
                offset: 0,
                len: 0,
                write: false,
                trim: false,
            }; BATCH],
            batch_pos: 0,
            batch_len: 0,
            fast: false,
            fast_nomap: false,
            pass_pending: false,
            seq_left: 1,
            bytes: 0,
            loop_starts: Default::default(),
            mark_loops: false,
            extra_loops: 0,
            issued_at_loop: 0,
            bytes_at_loop: 0,
            writes: 0,
            rwmix_ddir: 0,
            rwmix_issues: 0,
            zone_bytes: 0,
            loop_limit,
            total_limit,
            extra_ios: 0,
            extra_bytes: 0,
            extra_bytes_at_loop: 0,
        };
        let one_random_read = pl.files.len() == 1
            && pl.p.pattern == Pattern::Random
            && pl.p.mix == Mix::Read
            && pl.p.number_ios.is_none()
            && pl.p.access.uniform_reads(pl.p.bs_min, pl.p.bs_max);
        // Sizes that vary take the general path: fio's size draws and
        // its map's free runs.
        pl.fast = one_random_read && pl.p.access.map && pl.p.bs_min == pl.p.bs_max;
        pl.fast_nomap = one_random_read
            && !pl.p.access.map
            && pl.p.bs_min == pl.p.bs_max
            && pl.p.regions[0].len / pl.p.bs_min <= 1 << 32
            // It issues the last block whole and leaves the cut of the
            // excess from the last loop (`total_limit`) to the general path.
            && (pl.p.loops.is_none_or(|l| l <= 1) || pl.p.regions[0].len.is_multiple_of(pl.p.bs_min));
        pl.start_loop();
        pl
    }

    fn start_loop(&mut self) {
        self.zone_bytes = 0;
        // fio's clear_io_state (reset_io_counters) before each loop.
        self.rwmix_issues = 0;
        let random = self.p.pattern == Pattern::Random;
        for f in &mut self.files {
            let key = self.rng.next_u64();
            f.restart(
                &self.p.access,
                self.p.bs_min,
                (random, key, self.p.tables),
                &mut self.rng,
            );
        }
    }

    /// Whether this I/O of a random job goes to a random offset: every
    /// `seq_nr`th I/O (fio's `rw=randread:N`), then `percentage_random`.
    #[inline]
    fn random_now(&mut self, d: usize) -> bool {
        if self.p.pattern != Pattern::Random {
            return false;
        }
        let a = &self.p.access;
        if a.seq_nr > 1 {
            self.seq_left -= 1;
            if self.seq_left > 0 {
                return false;
            }
            self.seq_left = a.seq_nr;
        }
        let perc = a.perc_rand[d];
        perc >= 100 || (self.rng.below(100) as u32) < perc
    }

    fn pick_write(&mut self) -> bool {
        match self.p.mix {
            Mix::Read | Mix::Trim => false,
            Mix::Write | Mix::TrimWrite => true,
            Mix::Mixed => self.rwmix_write(),
        }
    }

    /// A mix's direction, as fio's `get_rw_ddir` (io_u.c): a new draw
    /// only once the current direction has `rwmix_issues` I/Os in all, and
    /// a switch keeps to the new one until its I/Os reach the old one's
    /// times its share (`set_rwmix_bytes`). So a direction whose block
    /// does not fit, drawn once that product is 1 or more (two writes at
    /// `rwmixread=50`), stays drawn and ends every file in turn, where a
    /// draw per attempt ended only one. The
    /// I/Os counted are the planned ones (fio's `io_issues`, which also
    /// count a verify pass's reads and follow `rate_ddir`'s turns).
    fn rwmix_write(&mut self) -> bool {
        let issues = [self.issued - self.writes, self.writes];
        if issues[self.rwmix_ddir] >= self.rwmix_issues {
            let d = usize::from(self.rng.below(100) as u32 >= self.p.rwmixread);
            if d != self.rwmix_ddir {
                let share = if d == 0 {
                    self.p.rwmixread
                } else {
                    100 - self.p.rwmixread
                };
                self.rwmix_issues = issues[self.rwmix_ddir] * u64::from(share) / 100;
            }
            self.rwmix_ddir = d;
        }
        self.rwmix_ddir == 1
    }
}

/// I/Os generated ahead in one go: the table lookups of a batch overlap
/// their cache misses instead of paying them one by one between syscalls.
const BATCH: usize = 64;

impl Iterator for Planner {
    type Item = IoUnit;

    #[inline]
    fn next(&mut self) -> Option<IoUnit> {
        let mut io = IoUnit::default();
        self.next_into(&mut io).then_some(io)
    }
}

impl Planner {
    /// Writes the next I/O into `out`; false at the end of the sequence.
    /// The hot loops use this form: an `Option<IoUnit>` (its `None` hidden
    /// in `write`) was moved through the stack as two overlapping 8-byte
    /// halves, and reading it back stalled on store forwarding every I/O.
    #[inline(always)]
    pub fn next_into(&mut self, out: &mut IoUnit) -> bool {
        if self.extra_ios != 0 && self.past_number_ios() {
            return false;
        }
        if self.batch_pos == self.batch_len {
            self.refill();
            if self.batch_len == 0 {
                return false;
            }
        }
        // Field by field: a whole-struct copy also moves the padding byte,
        // which costs LLVM extra loads and stores on every I/O.
        let b = &self.batch[self.batch_pos % BATCH];
        out.offset = b.offset;
        out.len = b.len;
        out.file = b.file;
        out.write = b.write;
        out.trim = b.trim;
        self.batch_pos += 1;
        true
    }
}

impl Planner {
    /// Counts `n` I/Os done besides the plan toward `number_ios`, as fio's
    /// `exceeds_number_ios` counts every read and write (a write job's
    /// `verify_backlog` reads and the reads back after each loop among
    /// them): once the I/Os handed out and these reach it, the sequence
    /// ends.
    pub fn count_extra(&mut self, n: u64) {
        self.extra_ios += n;
    }

    /// Counts `n` bytes a write job's `verify_backlog` read back during a
    /// pass: fio's `do_io` counts them with the writes toward its pass's
    /// `bytes_issued` (see [`PlanParams::backlog_pass`]).
    pub fn count_extra_bytes(&mut self, n: u64) {
        self.extra_bytes += n;
    }

    /// True when the I/Os handed out and the extra ones reach `number_ios`.
    #[cold]
    fn past_number_ios(&self) -> bool {
        let ahead = (self.batch_len - self.batch_pos) as u64;
        (self.p.number_ios).is_some_and(|n| self.issued - ahead + self.extra_ios >= n)
    }

    /// With `pass_breaks`, the sequence pauses (ends, for
    /// [`Self::next_into`]) at the end of every pass but the last; this
    /// starts the next pass. False when there is none.
    pub fn next_pass(&mut self) -> bool {
        std::mem::take(&mut self.pass_pending) && self.roll_over()
    }

    /// True when loop `i` (from 0) is past the last: `loops` and the
    /// passes [`Planner::another_pass`] added.
    pub(super) fn past_last_loop(&self, i: u64) -> bool {
        (self.p.loops).is_some_and(|l| i >= l + self.extra_loops)
    }

    /// Starts the next loop over the regions; false when there is none.
    fn roll_over(&mut self) -> bool {
        // fio's thread_main ends the job after a pass that did no I/O
        // (`fio_mark_td_terminate` when `bytes_done` is 0), so blocks that
        // never fit end it rather than loop for ever.
        if self.issued == self.issued_at_loop {
            return false;
        }
        self.loop_index += 1;
        // fio's keep_running after the loops, for `io_size` (without it
        // the files are done, which ends the job).
        if !self.p.pass_breaks
            && self.p.access.bytes_limit.is_some()
            && self.past_last_loop(self.loop_index)
            && self.more_wanted(self.bytes)
        {
            self.extra_loops += 1;
        }
        if self.past_last_loop(self.loop_index) || self.all_issued() {
            return false;
        }
        self.start_loop();
        self.issued_at_loop = self.issued;
        self.bytes_at_loop = self.bytes;
        self.extra_bytes_at_loop = self.extra_bytes;
        if self.mark_loops && self.p.loops.is_some() {
            self.loop_starts.push_back(self.issued);
        }
        !self.files.iter().all(|f| f.finished)
    }

    fn refill(&mut self) {
        self.batch_pos = 0;
        self.batch_len = 0;
        if self.pass_pending {
            return;
        }
        if self.fast {
            self.refill_one_random_read();
        } else if self.fast_nomap {
            self.refill_uniform_reads();
        }
        // fio's trimwrite: each block is trimmed, then written.
        let pair = self.p.mix == Mix::TrimWrite;
        // A backlog's reads end a pass too: plan one I/O at a time, so
        // the reads done before it count.
        let most = if self.p.backlog_pass { 1 } else { BATCH };
        while self.batch_len + usize::from(pair) < most.max(1 + usize::from(pair)) {
            match self.generate() {
                Some(io) => {
                    if pair {
                        let trim = IoUnit {
                            write: false,
                            trim: true,
                            ..io
                        };
                        self.batch[self.batch_len % BATCH] = trim;
                        self.batch_len += 1;
                    }
                    // `% BATCH` is free (power of two) and lets the bound check go.
                    self.batch[self.batch_len % BATCH] = io;
                    self.batch_len += 1;
                }
                None => break,
            }
        }
    }

    #[inline(always)]
    fn generate(&mut self) -> Option<IoUnit> {
        if self.p.number_ios.is_some_and(|n| self.issued >= n)
            || (self.total_limit).is_some_and(|l| self.bytes >= l)
        {
            return None;
        }
        let nfiles = self.files.len();
        let mut sync_turn = self.sync_due();
        loop {
            // The next file (round robin) that still has work this loop.
            let found = self.next_open_file();
            let Some(i) = found else {
                if self.p.pass_breaks {
                    // fio's next loop would do nothing once all loops'
                    // bytes are issued (it ends the job, no read-back).
                    let last = self.past_last_loop(self.loop_index + 1) || self.all_issued();
                    self.pass_pending = !last;
                    return None;
                }
                if !self.roll_over() {
                    return None;
                }
                // A new loop forgets the last sync (fio's last_was_sync).
                sync_turn = self.sync_due();
                continue;
            };
            if nfiles > 1 {
                self.next_file = if i + 1 == nfiles { 0 } else { i + 1 };
            }
            if std::mem::take(&mut sync_turn) {
                continue;
            }
            let write = self.pick_write();
            let d = write as usize;
            if let Some(z) = self.p.access.zones
                && self.files[i].enter_zone(z, d, &mut self.zone_bytes)
                && self.p.access.map
            {
                let key = self.rng.next_u64();
                (self.files[i]).new_order(&self.p.access, self.p.bs_min, key, self.p.tables);
            }
            // One draw per I/O: the low half picks the size, the high half the slot.
            let r = self.rng.next_u64();
            let random = self.random_now(d);
            let (a, f) = (&self.p.access, &mut self.files[i]);
            let rel = if random {
                f.random_offset(a, d, self.p.bs_min, (r >> 32) as u32, &mut self.rng)
            } else {
                // fio's get_next_block: a random job's sequential I/O
                // (`percentage_random`, `rw=randread:N`) past the end takes
                // a random block instead of ending the loop.
                f.seq_offset(d, a.seq_add).or_else(|| {
                    (self.p.pattern == Pattern::Random).then(|| {
                        f.random_offset(a, d, self.p.bs_min, (r >> 32) as u32, &mut self.rng)
                    })?
                })
            };
            let Some(rel) = rel else {
                f.finished = true;
                continue;
            };
            // fio: an offset past the region ends the file's loop.
            let room = (f.region.len - f.zone).checked_sub(rel).filter(|n| *n > 0);
            let Some(room) = room else {
                f.finished = true;
                continue;
            };
            let sizes = if a.bs_is_seq_rand { random } else { write } as usize;
            let picked = pick_len(
                a.sizes[sizes],
                &a.split[sizes],
                a.unaligned,
                r as u32,
                room,
                &mut self.rng,
            );
            // fio: a size past the file's end (a fixed one after a
            // `rw=read:N` hole; no size of a range) ends the file's loop;
            // it is not shortened.
            let Some(want) = picked.filter(|&n| n <= room) else {
                f.finished = true;
                continue;
            };
            // fio issues the last I/O whole (the loop ends once its bytes
            // are issued); with the map it covers only free slots.
            let len = if random && a.map {
                f.mark_used(rel, want, self.p.bs_min)
            } else {
                want
            };
            let offset = f.base() + rel;
            f.last[d] = offset + len;
            self.zone_bytes += len;
            f.done += len;
            if f.done >= f.target {
                f.finished = true;
            }
            self.issued += 1;
            self.writes += u64::from(write);
            self.bytes += len;
            return Some(IoUnit {
                file: i as u16,
                offset,
                len: len as u32,
                write,
                trim: self.p.mix == Mix::Trim,
            });
        }
    }
}

#[path = "planner_loops.rs"]
mod loops;

#[path = "planner_fast.rs"]
mod fast;

#[cfg(test)]
#[path = "planner_tests.rs"]
mod tests;
