//! `io_uring` through the io-uring crate: reads and writes queued in the
//! submission ring and sent with one `io_uring_enter` per commit, which also
//! posts the completions the kernel holds (as fio's commit does), and one
//! more enter to wait when the ring has none; optionally with registered
//! buffers and files, a kernel polling thread and polled completions.

use super::{Attach, Completion, Engine, EngineConfig, EngineError, EngineFlags, Queued};
use super::IoUnit;
use io_uring::{IoUring, opcode, squeue, types};
use std::io;
use std::os::fd::RawFd;

/// A ring of `iodepth` entries. Options (fio's names): `fixedbufs`
/// registers the buffers (READ_FIXED/WRITE_FIXED), `registerfiles` the
/// descriptors, `sqthread_poll` has a kernel thread poll the submission
/// ring, `hipri` polls for completions (IORING_SETUP_IOPOLL, O_DIRECT only),
/// `nowait` sets RWF_NOWAIT on every read and write.
pub struct UringEngine {
    ring: IoUring,
    opts: EngineFlags,
    rw_flags: i32,
    queued: usize,
    /// Per-I/O priorities (`cmdprio_*`), when asked for.
    prio: Option<Box<super::cmdprio::Picker>>,
}

impl std::fmt::Debug for UringEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringEngine")
            .field("opts", &self.opts)
            .finish()
    }
}

impl Engine for UringEngine {
    const QUEUED: bool = true;
    const OPTIONS: &'static [&'static str] = &[
        "fixedbufs",
        "registerfiles",
        "sqthread_poll",
        "hipri",
        "nowait",
    ];

    fn hint(err: &io::Error, cfg: &EngineConfig) -> Option<&'static str> {
        (cfg.flags.hipri && err.raw_os_error() == Some(libc::EOPNOTSUPP))
            .then_some("this device has no poll queues for polled I/O; drop hipri")
    }

    fn check(cfg: &EngineConfig) -> Result<(), EngineError> {
        if cfg.flags.hipri && !cfg.direct {
            return Err(EngineError::new(
                "hipri",
                "polled completions work only with direct=1",
            ));
        }
        Ok(())
    }

    /// Sets up the ring; the error names the option the kernel refused.
    fn build(cfg: &EngineConfig) -> Result<Self, EngineError> {
        let mut opts = cfg.flags;
        // The SQ polling thread does not share the clone's private
        // descriptor table: it needs registered files (fio turns them on
        // with sqthread_poll too).
        opts.registerfiles |= opts.sqthread_poll;
        // How much of the kernel's help to ask for: 2 as fio 3.33 does here
        // (cooperative task running, one issuer, completions run only when
        // the thread asks for them), 1 the first (kernels 5.19 to 6.0), 0
        // none; a kernel that refuses one is asked for less.
        let entries = cfg.iodepth.max(1).next_power_of_two();
        let builder = |level: u8| {
            let mut b = IoUring::builder();
            if opts.sqthread_poll {
                b.setup_sqpoll(1000);
            }
            if opts.hipri {
                b.setup_iopoll();
            }
            if level >= 1 {
                // Completions are handled when the thread enters the kernel
                // anyway, instead of interrupting it.
                b.setup_coop_taskrun();
            }
            // The ring is built and driven by the clone's one thread (and
            // reaped with GETEVENTS whenever it waits); not with an SQ
            // polling thread, which is a second issuer.
            if level >= 2 && !opts.sqthread_poll {
                b.setup_single_issuer();
                b.setup_defer_taskrun();
            }
            // A completion queue as deep as the submission queue, as fio's
            // (the kernel's default is twice as deep).
            b.setup_cqsize(entries);
            b
        };
        let refused = |e: &io::Error| e.raw_os_error() == Some(libc::EINVAL);
        let ring = builder(2)
            .build(entries)
            .or_else(|e| match refused(&e) {
                true => builder(1).build(entries),
                false => Err(e),
            })
            .or_else(|e| match refused(&e) {
                true => builder(0).build(entries),
                false => Err(e),
            })
            .map_err(|e| {
            let what = match (opts.sqthread_poll, opts.hipri) {
                (true, true) => "sqthread_poll/hipri",
                (true, false) => "sqthread_poll",
                (false, true) => "hipri",
                (false, false) => "ioengine=io_uring",
            };
            let problem = match e.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => {
                    format!("not permitted to set up this io_uring ({e}); run as root or drop the option")
                }
                Some(libc::ENOSYS) => format!("this kernel has no io_uring ({e})"),
                _ => format!("the kernel refused to set up the io_uring: {e}"),
            };
            EngineError::new(what, problem)
        })?;
        Ok(UringEngine {
            ring,
            opts,
            rw_flags: if opts.nowait { libc::RWF_NOWAIT } else { 0 },
            queued: 0,
            prio: super::cmdprio::Picker::of(&cfg.cmdprio).map(Box::new),
        })
    }

    fn attach(&mut self, a: Attach<'_>) -> io::Result<()> {
        let sub = self.ring.submitter();
        if self.opts.fixedbufs {
            // SAFETY: the buffers stay allocated and in place while the ring
            // exists (the runner drops the engine before the buffers).
            unsafe { sub.register_buffers(a.bufs) }
                .map_err(|e| io::Error::new(e.kind(), format!("fixedbufs: {e}")))?;
        }
        if self.opts.registerfiles {
            sub.register_files(a.fds)
                .map_err(|e| io::Error::new(e.kind(), format!("registerfiles: {e}")))?;
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, tag: u32, fd: RawFd, unit: IoUnit, buf: &mut [u8]) -> io::Result<Queued> {
        let ptr = buf.as_mut_ptr();
        let (len, off, rwf) = (unit.len, unit.offset, self.rw_flags);
        // 0: the thread's own priority (the kernel's default for the SQE).
        let prio = match &mut self.prio {
            Some(p) => p.pick(unit.write, len).unwrap_or(0),
            None => 0,
        };
        macro_rules! build {
            ($target:expr) => {
                match (unit.write, self.opts.fixedbufs) {
                    (false, false) => opcode::Read::new($target, ptr, len)
                        .offset(off)
                        .rw_flags(rwf)
                        .ioprio(prio)
                        .build(),
                    (true, false) => opcode::Write::new($target, ptr, len)
                        .offset(off)
                        .rw_flags(rwf)
                        .ioprio(prio)
                        .build(),
                    (false, true) => opcode::ReadFixed::new($target, ptr, len, tag as u16)
                        .offset(off)
                        .rw_flags(rwf)
                        .ioprio(prio)
                        .build(),
                    (true, true) => opcode::WriteFixed::new($target, ptr, len, tag as u16)
                        .offset(off)
                        .rw_flags(rwf)
                        .ioprio(prio)
                        .build(),
                }
            };
        }
        let entry: squeue::Entry = if self.opts.registerfiles {
            build!(types::Fixed(unit.file as u32))
        } else {
            build!(types::Fd(fd))
        };
        let entry = entry.user_data(tag as u64);
        // SAFETY: the buffer (registered or not) stays valid until the
        // completion with this tag is reaped; the runner guarantees it.
        while unsafe { self.ring.submission().push(&entry) }.is_err() {
            // The ring holds iodepth entries and at most iodepth I/Os are in
            // flight, but with SQPOLL the kernel thread may post a completion
            // before it moves the ring's head past that entry: wait for it.
            if !self.opts.sqthread_poll {
                return Err(io::Error::other(
                    "io_uring submission ring is full: more I/Os queued than iodepth (an iolab bug)",
                ));
            }
            match self.ring.submitter().squeue_wait() {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.queued += 1;
        Ok(Queued::Pending)
    }

    fn last_prio(&self) -> u16 {
        self.prio.as_ref().map_or(0, |p| p.last)
    }

    fn commit(&mut self) -> io::Result<usize> {
        let n = std::mem::take(&mut self.queued);
        if n == 0 {
            return Ok(0);
        }
        if self.opts.sqthread_poll {
            let sent = loop {
                match self.ring.submit() {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => break other?,
                }
            };
            // With SQPOLL, submit() reports what was pushed; the kernel
            // thread picks it up.
            return Ok(sent.max(n));
        }
        // As fio's commit: enter until the kernel has taken every entry (it
        // ends a batch after an entry that fails at once, whose error comes
        // back as its completion). What it did not take is reported short.
        let mut sent = 0;
        while sent < n {
            match self.enter((n - sent) as u32, 0) {
                Ok(0) => break,
                Ok(k) => sent += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if sent == 0 => return Err(e),
                Err(_) => break,
            }
        }
        Ok(sent)
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        let mut got = 0;
        loop {
            for cqe in self.ring.completion().take(max - got) {
                out.push(Completion {
                    tag: cqe.user_data() as u32,
                    result: cqe.result() as i64,
                });
                got += 1;
            }
            if got >= min {
                return Ok(());
            }
            let waited = match self.opts.sqthread_poll {
                true => self.ring.submit_and_wait(min - got),
                // Only waits: an entry the kernel refused to take stays out.
                false => self.enter(0, (min - got) as u32),
            };
            match waited {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// `IORING_ENTER_GETEVENTS` (include/uapi/linux/io_uring.h).
const ENTER_GETEVENTS: u32 = 1;

impl UringEngine {
    /// `io_uring_enter` with GETEVENTS: sends `to_submit` of the entries
    /// pushed and waits for `min_complete` completions. GETEVENTS also when
    /// only submitting, as fio's commit does: under DEFER_TASKRUN the kernel
    /// posts the completions it holds only on such an enter, so the next
    /// reap finds them in the ring instead of entering the kernel again.
    fn enter(&self, to_submit: u32, min_complete: u32) -> io::Result<usize> {
        let sub = self.ring.submitter();
        // SAFETY: the entries were pushed through `submission()`, whose drop
        // published the tail, and `to_submit` never exceeds them; no
        // argument is passed.
        unsafe { sub.enter::<libc::sigset_t>(to_submit, min_complete, ENTER_GETEVENTS, None) }
    }
}
