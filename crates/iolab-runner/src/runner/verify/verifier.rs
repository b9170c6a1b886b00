//! A clone's verification while it runs, as fio does it: each write gets
//! its header ([`super::block::Layout`]) and is logged once complete;
//! the log is read back and checked after each pass (`do_verify`), every
//! `verify_backlog` writes, or, with `verify_only`, in place of the
//! writes (counted as writes of no time, as fio's dry run). A read job
//! with `verify` checks each block it reads. Checks
//! read with `pread` into a buffer of their own, timed into the read
//! figures as fio counts its verify reads; the first bad block stops the
//! clone (fio's `EILSEQ`), reported with file, offset, expected and found.

use super::block::{Layout, Mismatch, Stamp};
use super::state::{Completions, State, StateError, logged_depth};
use super::write_log::{WriteLog, Written};
use crate::job::JobSpec;
use crate::plan::IoUnit;
use crate::runner::buffer::Contents;
use crate::runner::iomem::IoBuf;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// What a clone's checks found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyTotals {
    /// Blocks read back (or read) and checked.
    pub verified: u64,
    /// Blocks that did not check (a clone stops at its first, once the
    /// reads in flight with it are checked too).
    pub failures: Vec<Mismatch>,
}

impl VerifyTotals {
    /// Adds another clone's or repetition's.
    pub fn add(&mut self, o: &VerifyTotals) {
        self.verified += o.verified;
        self.failures.extend(o.failures.iter().cloned());
    }
}

/// One clone's verification state.
pub struct Verifier {
    pub(in crate::runner) layout: Layout,
    /// The job writes: headers go out and the log is read back (a mixed
    /// job's own reads are not checked, as fio).
    pub(in crate::runner) writes: bool,
    /// The pass breaks of the plan also drop the cache (`cache=cold`, not
    /// `direct`): they may be there for the read-back alone.
    pub pass_drops: bool,
    /// Read back at the end of each pass. Not with `time_based` on a
    /// synchronous engine: fio 3.33 counts a pass's bytes only for queued
    /// I/Os, so its write phase then lasts the whole runtime, unchecked
    /// (`verify_backlog` still checks).
    pub(in crate::runner) pass_checks: bool,
    pub(in crate::runner) do_verify: bool,
    pub(in crate::runner) only: bool,
    pub(in crate::runner) backlog: u64,
    pub(in crate::runner) batch: usize,
    /// The backlog is checked when the next I/O is fetched, as fio's
    /// `check_get_verify` (a queued engine's loop), not when a write
    /// completes; with a batch still to read and whether the last I/O
    /// completed was a read (fio's `verify_batch`, `last_ddir`, which
    /// `io_completed` sets).
    pub(in crate::runner) at_fetch: bool,
    pub(in crate::runner) batch_left: usize,
    pub(in crate::runner) last_read: bool,
    pub(in crate::runner) dump: bool,
    /// fio's `--aux-path`: where the state and dump files go.
    pub(in crate::runner) aux_dir: Option<std::path::PathBuf>,
    /// The engine splits slat/clat: the verify reads fill those too.
    pub(in crate::runner) split: bool,
    pub(in crate::runner) thread: u16,
    pub(in crate::runner) issued: u64,
    /// `numberio` of the write in each slot.
    pub(in crate::runner) tags: Vec<u64>,
    pub(in crate::runner) log: WriteLog,
    pub(in crate::runner) seeds: Xoshiro256PlusPlus,
    pub(in crate::runner) buf: IoBuf,
    /// `verify_state_save`: the last completed writes, for the state file.
    pub(in crate::runner) completions: Option<Completions>,
    /// `verify_state_load`: the state that says where checking stops.
    pub(in crate::runner) state: Option<State>,
    /// The job's name and fio's thread number less one (the state file's).
    pub(in crate::runner) who: (String, u64),
    /// What the checks found.
    pub out: VerifyTotals,
}

impl Verifier {
    /// The verifier of clone `clone` of `job` with `depth` I/O slots, when
    /// the job verifies; `index`: fio's thread number less one, and
    /// `files` its file count, for the state files. Fails when
    /// `verify_state_load` finds no usable state.
    pub fn of_job(
        job: &JobSpec,
        (clone, index, files): (u32, u64, usize),
        depth: usize,
        split: bool,
    ) -> Result<Option<Verifier>, StateError> {
        let v = &job.verify;
        let Some(layout) = Layout::of_job(job) else {
            return Ok(None);
        };
        let state = match v.state_load {
            true => Some(State::load(v.aux_dir.as_deref(), &job.name, index)?),
            false => None,
        };
        Ok(Some(Verifier {
            layout,
            writes: job.mix != crate::job::Mix::Read,
            pass_drops: job.cache == crate::job::CachePolicy::Cold && !job.direct,
            pass_checks: !job.time_based || job.queued(),
            do_verify: v.do_verify,
            // fio's dry run (`verify_only`) stands in for writes only: a
            // read job reads and checks every block as without it.
            only: v.only && job.mix != crate::job::Mix::Read,
            backlog: v.backlog,
            batch: if v.backlog_batch > 0 {
                v.backlog_batch as usize
            } else {
                v.backlog as usize
            },
            at_fetch: false,
            batch_left: 0,
            last_read: false,
            dump: v.dump,
            aux_dir: v.aux_dir.clone(),
            split,
            thread: (clone + 1) as u16,
            issued: 0,
            tags: vec![0; depth],
            // fio's map keeps a loop's random writes apart; else a write
            // may overlap earlier ones, which it replaces in the log (fio's
            // log keeps both there and its verify expects the older: the
            // rule fio-verify-overwritten of bench/fio_diff.py).
            log: WriteLog::new(
                job.pattern == crate::job::Pattern::Random
                    && crate::plan::access::AccessPlan::of_job(job).writes_once(),
            ),
            seeds: Xoshiro256PlusPlus::seed_from_u64(crate::plan::clone_seed(job, clone)),
            buf: IoBuf::page_aligned(job.bs_max as usize),
            completions: (v.state_save && job.mix != crate::job::Mix::Read)
                .then(|| Completions::new(logged_depth(&job.engine, job.iodepth), files)),
            state,
            who: (job.name.clone(), index),
            out: VerifyTotals::default(),
        }))
    }

    /// Saves fio's state file of a write job (`verify_state_save`).
    pub fn save_state(&self) -> std::io::Result<()> {
        match &self.completions {
            Some(c) => c
                .state(&self.who.0, self.who.1, self.issued)
                .save(self.aux_dir.as_deref()),
            None => Ok(()),
        }
    }

    /// True when a loaded state says the I/O `io`, issued after `done`
    /// checked reads, is past what the saved job completed.
    pub(in crate::runner) fn past_state(&self, done: u64, io: &IoUnit) -> bool {
        (self.state.as_ref()).is_some_and(|s| s.should_stop(done, io.file.into(), io.offset))
    }

    /// True with `verify_only`: the clone reads and checks, never writes.
    pub fn only(&self) -> bool {
        self.only
    }

    /// True when `verify_only` stands in for writes, which are then
    /// counted as fio's dry run counts them.
    pub fn dry_writes(&self) -> bool {
        self.only && self.writes
    }

    /// Lays out the write `io` in slot `tag`'s buffer.
    pub fn before_write(&mut self, tag: u32, io: IoUnit, buf: &mut [u8], t_ns: u64) {
        let stamp = Stamp {
            seed: self.seeds.next_u64(),
            numberio: self.issued,
            thread: self.thread,
            sec: (t_ns / 1_000_000_000) as u32,
            nsec: (t_ns % 1_000_000_000) as u32,
        };
        self.tags[tag as usize] = self.issued;
        // fio logs a write when it is issued (iolog.c `log_io_piece`).
        if self.do_verify {
            self.log.push(Written {
                io,
                numberio: self.issued,
                in_flight: true,
            });
        }
        self.issued += 1;
        self.layout.fill(buf, &io, stamp);
    }

    /// Marks the write of slot `tag` complete in the log; true when a
    /// backlog check is due.
    pub(in crate::runner) fn written(&mut self, tag: u32, io: IoUnit) -> bool {
        if let Some(c) = &mut self.completions {
            c.push(io.file, io.offset);
        }
        // fio logs writes only with do_verify: no backlog checks without.
        if !self.do_verify {
            return false;
        }
        let numberio = self.tags[tag as usize];
        self.log.complete(&io, numberio);
        // fio's check_get_verify: a batch each time the log's length is a
        // multiple of the backlog (at the next fetch when `at_fetch`).
        !self.at_fetch && self.backlog > 0 && (self.log.len() as u64).is_multiple_of(self.backlog)
    }

    /// Writes fio's dump files of a bad block in the working directory
    /// (or fio's `--aux-path`): `NAME.OFFSET.received` (what was read).
    pub(in crate::runner) fn dump(&self, m: &Mismatch, data: &[u8]) -> std::io::Result<()> {
        let name = std::path::Path::new(&m.file)
            .file_name()
            .map_or_else(|| "block".into(), |n| n.to_string_lossy().into_owned());
        let file = format!("{name}.{}.received", m.offset);
        match &self.aux_dir {
            Some(d) => std::fs::write(d.join(file), data),
            None => std::fs::write(file, data),
        }
    }
}

/// A clone's buffer contents (when they change per write) and verifier.
pub type ForClone = (Option<Box<Contents>>, Option<Box<Verifier>>);

/// The contents and verifier of clone `clone` of `job` (`index`: fio's
/// thread number less one; `files`: the clone's), for its loop.
pub fn for_clone(
    job: &JobSpec,
    (clone, index, files): (u32, u64, usize),
    depth: usize,
    split: bool,
) -> Result<ForClone, StateError> {
    let contents = Contents::of_job(job, crate::plan::clone_seed(job, clone));
    let per_write = job.writes() && contents.per_write() && !job.verify.on();
    Ok((
        per_write.then(|| Box::new(contents)),
        Verifier::of_job(job, (clone, index, files), depth, split)?.map(Box::new),
    ))
}
