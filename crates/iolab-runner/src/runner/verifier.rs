//! A clone's verification while it runs, as fio does it: each write gets
//! its header ([`super::verify::Layout`]) and is logged once complete;
//! the log is read back and checked after each pass (`do_verify`), every
//! `verify_backlog` writes, or, with `verify_only`, in place of the
//! writes (counted as writes of no time, as fio's dry run). A read job
//! with `verify` checks each block it reads. Checks
//! read with `pread` into a buffer of their own, timed into the read
//! figures as fio counts its verify reads; the first bad block stops the
//! clone (fio's `EILSEQ`), reported with file, offset, expected and found.

use super::buffer::Contents;
use super::ctx::Ctx;
use super::iomem::IoBuf;
use super::verify::{Layout, Mismatch, Stamp};
use super::verify_state::{Completions, State, StateError, logged_depth};
use super::write_log::{WriteLog, Written};
use crate::job::JobSpec;
use crate::metrics::clock::now_ns;
use crate::plan::IoUnit;
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
    layout: Layout,
    /// The job writes: headers go out and the log is read back (a mixed
    /// job's own reads are not checked, as fio).
    writes: bool,
    /// The pass breaks of the plan also drop the cache (`cache=cold`, not
    /// `direct`): they may be there for the read-back alone.
    pub pass_drops: bool,
    /// Read back at the end of each pass. Not with `time_based` on a
    /// synchronous engine: fio 3.33 counts a pass's bytes only for queued
    /// I/Os, so its write phase then lasts the whole runtime, unchecked
    /// (`verify_backlog` still checks).
    pass_checks: bool,
    do_verify: bool,
    only: bool,
    backlog: u64,
    batch: usize,
    dump: bool,
    /// fio's `--aux-path`: where the state and dump files go.
    aux_dir: Option<std::path::PathBuf>,
    /// The engine splits slat/clat: the verify reads fill those too.
    split: bool,
    thread: u16,
    issued: u64,
    /// `numberio` of the write in each slot.
    tags: Vec<u64>,
    log: WriteLog,
    seeds: Xoshiro256PlusPlus,
    buf: IoBuf,
    /// `verify_state_save`: the last completed writes, for the state file.
    completions: Option<Completions>,
    /// `verify_state_load`: the state that says where checking stops.
    state: Option<State>,
    /// The job's name and fio's thread number less one (the state file's).
    who: (String, u64),
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
    fn past_state(&self, done: u64, io: &IoUnit) -> bool {
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
    fn written(&mut self, tag: u32, io: IoUnit) -> bool {
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
        // multiple of the backlog.
        self.backlog > 0 && (self.log.len() as u64).is_multiple_of(self.backlog)
    }

    /// Writes fio's dump files of a bad block in the working directory
    /// (or fio's `--aux-path`): `NAME.OFFSET.received` (what was read).
    fn dump(&self, m: &Mismatch, data: &[u8]) -> std::io::Result<()> {
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

impl Ctx<'_> {
    /// Before the write `io` goes out of slot `tag`: its contents
    /// (`refill_buffers`, `scramble_buffers`) and its verify header.
    #[inline]
    pub fn before_write(&mut self, tag: u32, io: IoUnit, buf: &mut [u8]) {
        if let Some(c) = &mut self.contents {
            c.before_write(&mut buf[..io.len as usize], io.offset);
        }
        if self.verifier.is_some() {
            self.verify_header(tag, io, buf);
        }
    }

    #[cold]
    fn verify_header(&mut self, tag: u32, io: IoUnit, buf: &mut [u8]) {
        let t = now_ns() - self.t_start;
        if let Some(v) = &mut self.verifier {
            v.before_write(tag, io, &mut buf[..io.len as usize], t);
        }
    }

    /// After the write `io` of slot `tag` completed: logged for reading
    /// back, checked with the backlog when due; false when a check failed.
    #[inline]
    pub fn write_done(&mut self, tag: u32, io: IoUnit) -> bool {
        let Some(v) = &mut self.verifier else {
            return true;
        };
        if !v.written(tag, io) {
            return true;
        }
        let (n, before) = (v.batch, v.out.verified);
        let ok = self.read_back(n, 0);
        // fio counts these reads in number_ios.
        let done = self
            .verifier
            .as_ref()
            .map_or(0, |v| v.out.verified - before);
        self.look.count_extra(done);
        ok
    }

    /// True when the end of a pass is read back: the writes in flight
    /// must complete first.
    pub fn reads_back(&self) -> bool {
        (self.verifier.as_ref()).is_some_and(|v| v.writes && v.do_verify && v.pass_checks)
    }

    /// Before the read `io` of a read job is issued: true when a loaded
    /// verify state (`verify_state_load`) says the job ends here, as fio.
    #[inline]
    pub fn past_state(&self, io: &IoUnit) -> bool {
        match &self.verifier {
            Some(v) if v.state.is_some() => v.past_state(v.out.verified, io),
            _ => false,
        }
    }

    /// After the read `io` into `buf` completed: checked when the job
    /// verifies its reads; false when it did not check.
    #[inline]
    pub fn read_done(&mut self, io: IoUnit, buf: &mut [u8]) -> bool {
        match &self.verifier {
            Some(v) if !v.writes => self.check_read(io, buf),
            _ => true,
        }
    }

    #[cold]
    fn check_read(&mut self, io: IoUnit, buf: &mut [u8]) -> bool {
        let path = self.paths[io.file as usize].display().to_string();
        let Some(v) = &mut self.verifier else {
            return true;
        };
        v.out.verified += 1;
        match v.layout.check(&path, buf, &io, None) {
            Ok(()) => true,
            Err(m) => {
                self.verify_failed(*m, &buf[..io.len as usize]);
                false
            }
        }
    }

    /// At the end of a pass or of the run: reads back and checks every
    /// write not yet checked (`do_verify`), after syncing them and dropping
    /// them from the page cache as fio does; false when one did not check.
    #[cold]
    pub fn verify_written(&mut self) -> bool {
        let Some(v) = &self.verifier else {
            return true;
        };
        if !v.writes || !(v.do_verify || v.only) || !v.pass_checks || v.log.is_empty() {
            return true;
        }
        let t0 = now_ns();
        for &fd in &self.fds {
            // SAFETY: syncing a descriptor; no memory is passed.
            unsafe { libc::fsync(fd) };
            crate::sys::pagecache::drop_cached(fd);
        }
        let (before, depth) = (v.out.verified, v.tags.len());
        let ok = self.read_back(usize::MAX, depth - 1);
        // fio's verify phase has its own runtime, the reads' (backend.c).
        self.verify_ns += now_ns() - t0;
        // As fio's exceeds_number_ios (backend.c): its `io_blocks` holds
        // the verify phase's reads too, so the next loop's writes stop
        // once the writes and reads reach number_ios x loops.
        let done = (self.verifier.as_ref()).map_or(0, |v| v.out.verified - before);
        self.look.count_extra(done);
        ok
    }

    /// `verify_only`: the writes the job would issue, read back and
    /// checked pass by pass instead; true if `stop` ended it.
    #[cold]
    pub fn verify_only(&mut self, stop: &super::StopFlag) -> bool {
        let mut io = IoUnit::default();
        loop {
            if stop.is_set() {
                return true;
            }
            if self.look.next_into(&self.fds, &mut self.advise, &mut io) {
                if let Some(v) = &mut self.verifier
                    && io.write
                {
                    v.log.push(Written {
                        io,
                        numberio: 0,
                        in_flight: false,
                    });
                    v.issued += 1;
                    if let Some(c) = &mut v.completions {
                        c.push(io.file, io.offset);
                    }
                    // fio's dry run completes each write at once: counted,
                    // with no time.
                    let rec = &mut self.recs[1];
                    rec.lat.record(0);
                    if v.split {
                        rec.clat.record(0);
                        rec.slat.record(0);
                    }
                    rec.bytes += io.len as u64;
                }
                continue;
            }
            if !self.verify_written() || !self.next_pass() {
                return false;
            }
        }
    }

    /// Reads back and checks up to `n` logged writes, oldest first; false
    /// when one did not check. After a bad block, `ahead` more reads are
    /// still done and checked: those fio had in flight with it (its
    /// do_verify keeps up to iodepth reads queued, and the reap that finds
    /// the bad block, or cleanup_pending_aio after it, completes and
    /// counts the others; all of them when the log fits in iodepth).
    fn read_back(&mut self, n: usize, ahead: usize) -> bool {
        let Some(mut v) = self.verifier.take() else {
            return true;
        };
        let mut ok = true;
        let (mut done, mut last) = (0usize, usize::MAX);
        for _ in 0..n {
            if done >= last {
                break;
            }
            // fio: the runtime ends the checks too (the rest go unchecked).
            if now_ns() >= self.deadline {
                v.log.clear();
                break;
            }
            let Some(w) = v.log.pop() else { break };
            let io = IoUnit {
                write: false,
                ..w.io
            };
            if v.past_state(v.out.verified, &io) {
                v.log.clear();
                break;
            }
            let buf = &mut v.buf.as_mut_slice()[..io.len as usize];
            let t0 = now_ns();
            // SAFETY: `buf` is valid for `io.len` bytes and borrowed
            // mutably for the call; a bad descriptor only fails the call.
            let got = unsafe {
                libc::pread(
                    self.fds[io.file as usize],
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    io.offset as libc::off_t,
                )
            };
            let d = now_ns() - t0;
            if got != io.len as isize {
                let r = if got < 0 {
                    Err(std::io::Error::last_os_error())
                } else {
                    Ok(got as usize)
                };
                self.io_error(io, r);
                ok = false;
                break;
            }
            let rec = &mut self.recs[0];
            rec.lat.record(d);
            if v.split {
                rec.clat.record(d);
                rec.slat.record(0);
            }
            rec.bytes += io.len as u64;
            v.out.verified += 1;
            done += 1;
            let path = self.paths[io.file as usize].display().to_string();
            if let Err(m) = v.layout.check(&path, buf, &io, Some(w.numberio)) {
                let data = buf.to_vec();
                self.verifier = Some(v);
                self.verify_failed(*m, &data);
                v = self.verifier.take().expect("put back above");
                ok = false;
                last = last.min(done.saturating_add(ahead));
            }
        }
        self.verifier = Some(v);
        ok
    }

    #[cold]
    fn verify_failed(&mut self, m: Mismatch, data: &[u8]) {
        if let Some(v) = &mut self.verifier {
            if v.dump
                && let Err(e) = v.dump(&m, data)
            {
                self.errors.push(format!("verify_dump: cannot write: {e}"));
            }
            self.errors.push(m.to_string());
            v.out.failures.push(m);
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
