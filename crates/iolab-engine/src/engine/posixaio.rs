//! `posixaio`: POSIX AIO from the C library (`aio_read(3)`, `aio_write(3)`,
//! `aio_error(3)`, `aio_suspend(3)`), as fio's engines/posixaio.c: each I/O
//! is started when queued, up to `iodepth` at a time, and completions are
//! polled with `aio_error`, waiting in `aio_suspend` on at most 8 of them.
//! glibc runs the transfers on helper threads of its own; they use the
//! process's descriptor table, so this engine's clones keep their files
//! there ([`Engine::SHARED_FDS`]).

use super::IoUnit;
use super::{Completion, Engine, EngineConfig, EngineError, Queued};
use std::io;
use std::os::fd::RawFd;

// glibc 2.34+ has these in libc itself; older ones in librt (kept there as
// stubs since), so linking librt works with both.
#[link(name = "rt")]
unsafe extern "C" {
    fn aio_read(cb: *mut libc::aiocb) -> libc::c_int;
    fn aio_write(cb: *mut libc::aiocb) -> libc::c_int;
    fn aio_error(cb: *const libc::aiocb) -> libc::c_int;
    fn aio_return(cb: *mut libc::aiocb) -> libc::ssize_t;
    fn aio_cancel(fd: libc::c_int, cb: *mut libc::aiocb) -> libc::c_int;
    fn aio_suspend(
        list: *const *const libc::aiocb,
        n: libc::c_int,
        timeout: *const libc::timespec,
    ) -> libc::c_int;
}

/// At most this many control blocks per `aio_suspend` (fio's SUSPEND_ENTRIES).
const SUSPEND_ENTRIES: usize = 8;

/// One control block per tag (they never move while in flight), the tags
/// in flight and how many were queued since the last commit.
pub struct PosixaioEngine {
    cbs: Box<[libc::aiocb]>,
    flight: Vec<u32>,
    queued: usize,
}

impl std::fmt::Debug for PosixaioEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PosixaioEngine")
            .field("in_flight", &self.flight.len())
            .finish()
    }
}

// SAFETY: the control blocks and the buffers they point to belong to this
// clone and are used by one thread at a time (glibc's helpers only through
// the aio_* calls).
unsafe impl Send for PosixaioEngine {}

impl Engine for PosixaioEngine {
    const QUEUED: bool = true;
    const SHARED_FDS: bool = true;

    fn build(cfg: &EngineConfig) -> Result<Self, EngineError> {
        let depth = cfg.iodepth.max(1) as usize;
        Ok(PosixaioEngine {
            cbs: (0..depth).map(|_| blank()).collect(),
            flight: Vec::with_capacity(depth),
            queued: 0,
        })
    }

    fn queue(&mut self, tag: u32, fd: RawFd, unit: IoUnit, buf: &mut [u8]) -> io::Result<Queued> {
        let len = unit.len as usize;
        assert!(buf.len() >= len, "buffer shorter than the I/O");
        let cb = &mut self.cbs[tag as usize];
        *cb = blank();
        cb.aio_fildes = fd;
        cb.aio_buf = buf.as_mut_ptr().cast();
        cb.aio_nbytes = len;
        cb.aio_offset = unit.offset as libc::off_t;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        // SAFETY: the block and the `len` bytes of `buf` it points to stay in
        // place until the completion is reaped (the runner keeps the buffer;
        // the block is this engine's and is not touched meanwhile).
        let rc = unsafe {
            if unit.write {
                aio_write(cb)
            } else {
                aio_read(cb)
            }
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        self.flight.push(tag);
        self.queued += 1;
        Ok(Queued::Pending)
    }

    /// The I/Os started when queued: nothing more to send.
    fn commit(&mut self) -> io::Result<usize> {
        Ok(std::mem::take(&mut self.queued))
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        let mut got = 0;
        loop {
            let mut i = 0;
            while i < self.flight.len() && got < max {
                let tag = self.flight[i];
                match self.finished(tag) {
                    Some(result) => {
                        self.flight.swap_remove(i);
                        out.push(Completion { tag, result });
                        got += 1;
                    }
                    None => i += 1,
                }
            }
            if got >= min || self.flight.is_empty() {
                return Ok(());
            }
            let mut wait = [std::ptr::null::<libc::aiocb>(); SUSPEND_ENTRIES];
            let n = self.flight.len().min(SUSPEND_ENTRIES);
            for (w, &tag) in wait.iter_mut().zip(&self.flight) {
                *w = &self.cbs[tag as usize];
            }
            // SAFETY: `n` pointers to blocks in flight; no timeout. EINTR and
            // EAGAIN just lead to another look.
            unsafe { aio_suspend(wait.as_ptr(), n as libc::c_int, std::ptr::null()) };
        }
    }
}

impl PosixaioEngine {
    /// The result of the I/O of `tag` (bytes, or a negative errno) once it
    /// has finished; `None` while it is in progress.
    fn finished(&mut self, tag: u32) -> Option<i64> {
        let cb = &mut self.cbs[tag as usize];
        // SAFETY: a block started by aio_read/aio_write; aio_return is
        // called once, after it finished.
        unsafe {
            match aio_error(cb) {
                libc::EINPROGRESS => None,
                0 => Some(aio_return(cb) as i64),
                err => {
                    aio_return(cb);
                    Some(-(err as i64))
                }
            }
        }
    }
}

/// A zeroed control block (its C definition has no other default).
fn blank() -> libc::aiocb {
    // SAFETY: aiocb is plain data (integers and pointers); all zeros is
    // valid, as C's memset initialisation.
    unsafe { std::mem::zeroed() }
}

impl Drop for PosixaioEngine {
    /// Cancels what is still in flight and waits for it: the buffers it
    /// points to are freed after the engine.
    fn drop(&mut self) {
        for &tag in &self.flight {
            let cb = &mut self.cbs[tag as usize];
            // SAFETY: a block in flight on its own descriptor.
            unsafe { aio_cancel(cb.aio_fildes, cb) };
        }
        let mut out = Vec::new();
        while !self.flight.is_empty() {
            let _ = self.reap(self.flight.len(), usize::MAX, &mut out);
        }
    }
}
