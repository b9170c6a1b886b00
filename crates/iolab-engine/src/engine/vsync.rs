//! `vsync`: `lseek(2)` then `readv(2)` / `writev(2)`, merging adjacent I/Os
//! as fio's `vsync` does (engines/sync.c): an I/O that continues the queued
//! ones (same file, same direction, next offset) joins their iovec array;
//! any other waits ([`Queued::Busy`]) until they are sent. One commit is one
//! `readv`/`writev` of every queued I/O, so with `iodepth_batch_submit=N`
//! sequential I/Os go N to a syscall, and with the default of 1 each alone.
//! The transfer happens when the I/Os are sent: their `slat` holds it.

use super::IoUnit;
use super::{Completion, Engine, EngineConfig, EngineError, Queued};
use std::io;
use std::os::fd::RawFd;

/// The I/Os queued since the last commit and the completions not reaped.
#[derive(Debug)]
pub struct VsyncEngine {
    iovecs: Vec<libc::iovec>,
    tags: Vec<u32>,
    fd: RawFd,
    file: u16,
    write: bool,
    first: u64,
    next: u64,
    done: Vec<Completion>,
}

// SAFETY: the iovecs point into the runner's buffers of this clone, used by
// one thread at a time.
unsafe impl Send for VsyncEngine {}

/// The most iovecs one call takes (the kernel's UIO_MAXIOV).
const IOV_MAX: usize = 1024;

impl Engine for VsyncEngine {
    const QUEUED: bool = true;

    fn build(cfg: &EngineConfig) -> Result<Self, EngineError> {
        let depth = cfg.iodepth.max(1) as usize;
        let group = depth.min(IOV_MAX);
        Ok(VsyncEngine {
            iovecs: Vec::with_capacity(group),
            tags: Vec::with_capacity(group),
            fd: -1,
            file: 0,
            write: false,
            first: 0,
            next: 0,
            done: Vec::with_capacity(depth),
        })
    }

    fn queue(&mut self, tag: u32, fd: RawFd, unit: IoUnit, buf: &mut [u8]) -> io::Result<Queued> {
        let len = unit.len as usize;
        assert!(buf.len() >= len, "buffer shorter than the I/O");
        if !self.tags.is_empty() {
            let adjacent =
                unit.file == self.file && unit.write == self.write && unit.offset == self.next;
            if !adjacent || self.tags.len() == self.tags.capacity() {
                return Ok(Queued::Busy);
            }
        } else {
            (self.fd, self.file, self.write, self.first) =
                (fd, unit.file, unit.write, unit.offset);
        }
        self.iovecs.push(libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: len,
        });
        self.tags.push(tag);
        self.next = unit.offset + unit.len as u64;
        Ok(Queued::Pending)
    }

    /// One seek and one vectored transfer of everything queued; each I/O's
    /// share of a short transfer is handed out in order, as fio does.
    fn commit(&mut self) -> io::Result<usize> {
        let n = self.tags.len();
        if n == 0 {
            return Ok(0);
        }
        let nr = if self.write {
            libc::SYS_writev
        } else {
            libc::SYS_readv
        };
        // SAFETY: lseek on the clone's descriptor; every iovec points at
        // `iov_len` bytes of a buffer the runner keeps until the I/O is reaped.
        let rc = unsafe {
            if libc::lseek(self.fd, self.first as libc::off_t, libc::SEEK_SET) < 0 {
                -1
            } else {
                libc::syscall(nr, self.fd, self.iovecs.as_ptr(), n as libc::c_int)
            }
        };
        let err = (rc < 0).then(|| -(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64));
        let mut left = rc.max(0) as u64;
        for (iov, &tag) in self.iovecs.iter().zip(&self.tags) {
            let this = left.min(iov.iov_len as u64);
            left -= this;
            let result = err.unwrap_or(this as i64);
            self.done.push(Completion { tag, result });
        }
        self.iovecs.clear();
        self.tags.clear();
        Ok(n)
    }

    /// Every I/O done, whatever `max`: fio's vsync getevents returns them
    /// all (its `iodepth_batch_complete_max` does not reach this engine).
    fn reap(&mut self, _min: usize, _max: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        out.append(&mut self.done);
        Ok(())
    }
}
