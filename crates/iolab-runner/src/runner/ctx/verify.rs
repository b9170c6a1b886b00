//! The verify steps of a clone's loop ([`Ctx`]): each write's contents and
//! header before it goes out, the write logged once complete and checked
//! with the backlog, each read of a read job checked, the read-back at the
//! end of each pass and `verify_only`'s dry run; the clone's
//! [`crate::runner::verify::verifier::Verifier`] keeps what they need.

use super::Ctx;
use crate::metrics::clock::now_ns;
use crate::plan::IoUnit;
use crate::runner::verify::block::Mismatch;
use crate::runner::verify::write_log::Written;

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
        let (n, before, bytes) = (v.batch, v.out.verified, self.recs[0].bytes);
        let ok = self.read_back(n, 0);
        // fio counts these reads in number_ios, and their bytes in its
        // pass's budget.
        let done = self
            .verifier
            .as_ref()
            .map_or(0, |v| v.out.verified - before);
        self.look.count_extra(done);
        self.look.count_extra_bytes(self.recs[0].bytes - bytes);
        ok
    }

    /// fio's `check_get_verify`, where a queued engine's loop fetches its
    /// next I/O: once the log's length is a multiple of `verify_backlog`
    /// (and the last I/O fetched was no read), a batch of the oldest
    /// complete writes is read back, one in place of each fetch, until the
    /// batch is read; a write still in flight at the head waits (fio's
    /// `get_next_verify`) and the fetch goes on to the next I/O. `None`
    /// when the fetch is an I/O of the plan, else whether the read checked.
    #[inline]
    pub fn backlog_turn(&mut self) -> Option<bool> {
        let v = self.verifier.as_mut()?;
        if !v.at_fetch || v.backlog == 0 || v.log.is_empty() {
            return None;
        }
        if v.batch_left == 0 {
            if v.last_read || !(v.log.len() as u64).is_multiple_of(v.backlog) {
                return None;
            }
            v.batch_left = v.batch;
        }
        let (before, bytes) = (v.out.verified, self.recs[0].bytes);
        let ok = self.read_back(1, 0);
        let v = self.verifier.as_mut()?;
        let done = v.out.verified - before;
        if done == 0 && ok {
            return None;
        }
        v.batch_left -= 1;
        self.look.count_extra(done);
        self.look.count_extra_bytes(self.recs[0].bytes - bytes);
        Some(ok)
    }

    /// Notes the direction of the I/O that completed last (fio's
    /// `last_ddir`): a batch of the backlog starts only after a write.
    #[inline]
    pub fn completed_dir(&mut self, read: bool) {
        if let Some(v) = &mut self.verifier {
            v.last_read = read;
        }
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
    pub fn verify_only(&mut self, stop: &crate::runner::StopFlag) -> bool {
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
            // fio's per-I/O logs and iolog list the verify reads too.
            self.log_io(io, t0 + d, d, d, 0);
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
