//! `io_uring` through the io-uring crate: reads and writes queued in the
//! submission ring, sent with one `io_uring_enter` per commit (combined with
//! the wait for completions when the runner reaps right after), optionally
//! with registered buffers and files, a kernel polling thread and polled
//! completions.

use super::{Attach, Completion, Engine, Queued};
use crate::plan::IoUnit;
use io_uring::{IoUring, opcode, squeue, types};
use std::os::fd::RawFd;

/// io_uring settings of a job (fio's option names).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UringOptions {
    /// Ring size and I/Os in flight.
    pub iodepth: u32,
    /// `fixedbufs`: register the I/O buffers, use READ_FIXED/WRITE_FIXED.
    pub fixedbufs: bool,
    /// `registerfiles`: register the descriptors, address them by index.
    pub registerfiles: bool,
    /// `sqthread_poll`: a kernel thread polls the submission ring.
    pub sqthread_poll: bool,
    /// `hipri`: polled completions (IORING_SETUP_IOPOLL; O_DIRECT only).
    pub hipri: bool,
}

/// A ring of `iodepth` entries.
pub struct UringEngine {
    ring: IoUring,
    opts: UringOptions,
    queued: usize,
}

impl std::fmt::Debug for UringEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringEngine")
            .field("opts", &self.opts)
            .finish()
    }
}

impl UringEngine {
    /// Sets up the ring; the error names the option the kernel refused.
    pub fn new(opts: UringOptions) -> Result<UringEngine, String> {
        let builder = |coop: bool| {
            let mut b = IoUring::builder();
            if opts.sqthread_poll {
                b.setup_sqpoll(1000);
            }
            if opts.hipri {
                b.setup_iopoll();
            }
            if coop {
                // Completions are handled when the thread enters the kernel
                // anyway, instead of interrupting it (as fio does); kernels
                // before 5.19 refuse the flag, so it is retried without.
                b.setup_coop_taskrun();
            }
            b
        };
        let entries = opts.iodepth.max(1).next_power_of_two();
        let ring = builder(true)
            .build(entries)
            .or_else(|e| match e.raw_os_error() {
                Some(libc::EINVAL) => builder(false).build(entries),
                _ => Err(e),
            })
            .map_err(|e| {
            let what = match (opts.sqthread_poll, opts.hipri) {
                (true, true) => "sqthread_poll/hipri",
                (true, false) => "sqthread_poll",
                (false, true) => "hipri",
                (false, false) => "ioengine=io_uring",
            };
            match e.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => {
                    format!("{what}: not permitted to set up this io_uring ({e}); run as root or drop the option")
                }
                Some(libc::ENOSYS) => format!("{what}: this kernel has no io_uring ({e})"),
                _ => format!("{what}: the kernel refused to set up the io_uring: {e}"),
            }
        })?;
        Ok(UringEngine {
            ring,
            opts,
            queued: 0,
        })
    }
}

impl Engine for UringEngine {
    fn name(&self) -> &'static str {
        "io_uring"
    }

    fn is_sync(&self) -> bool {
        false
    }

    fn attach(&mut self, a: Attach<'_>) -> std::io::Result<()> {
        let sub = self.ring.submitter();
        if self.opts.fixedbufs {
            // SAFETY: the buffers stay allocated and in place while the ring
            // exists (the runner drops the engine before the buffers).
            unsafe { sub.register_buffers(a.bufs) }
                .map_err(|e| std::io::Error::new(e.kind(), format!("fixedbufs: {e}")))?;
        }
        if self.opts.registerfiles {
            sub.register_files(a.fds)
                .map_err(|e| std::io::Error::new(e.kind(), format!("registerfiles: {e}")))?;
        }
        Ok(())
    }

    #[inline]
    fn queue(
        &mut self,
        tag: u32,
        fd: RawFd,
        io: IoUnit,
        buf: &mut [u8],
    ) -> std::io::Result<Queued> {
        let ptr = buf.as_mut_ptr();
        let len = io.len;
        let off = io.offset;
        macro_rules! build {
            ($target:expr) => {
                match (io.write, self.opts.fixedbufs) {
                    (false, false) => opcode::Read::new($target, ptr, len).offset(off).build(),
                    (true, false) => opcode::Write::new($target, ptr, len).offset(off).build(),
                    (false, true) => opcode::ReadFixed::new($target, ptr, len, tag as u16)
                        .offset(off)
                        .build(),
                    (true, true) => opcode::WriteFixed::new($target, ptr, len, tag as u16)
                        .offset(off)
                        .build(),
                }
            };
        }
        let entry: squeue::Entry = if self.opts.registerfiles {
            build!(types::Fixed(io.file as u32))
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
                return Err(std::io::Error::other(
                    "io_uring submission ring is full: more I/Os queued than iodepth (an iolab bug)",
                ));
            }
            match self.ring.submitter().squeue_wait() {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.queued += 1;
        Ok(Queued::Pending)
    }

    fn commit(&mut self) -> std::io::Result<usize> {
        let n = self.queued;
        if n > 0 {
            let sent = loop {
                match self.ring.submit() {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    other => break other?,
                }
            };
            self.queued = 0;
            // With SQPOLL, submit() reports what was pushed; the kernel thread
            // picks it up.
            return Ok(sent.max(n));
        }
        Ok(0)
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> std::io::Result<()> {
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
            match self.ring.submit_and_wait(min - got) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => return Err(e),
            }
        }
    }
}
