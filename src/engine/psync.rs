//! `psync`: `pread(2)` / `pwrite(2)`.

use super::{Engine, Queued, check};
use crate::plan::IoUnit;
use std::os::fd::RawFd;

/// Positional reads and writes, one syscall per I/O.
#[derive(Debug, Default)]
pub struct PsyncEngine;

impl Engine for PsyncEngine {
    fn name(&self) -> &'static str {
        "psync"
    }

    #[inline]
    fn queue(
        &mut self,
        _tag: u32,
        fd: RawFd,
        io: IoUnit,
        buf: &mut [u8],
    ) -> std::io::Result<Queued> {
        let len = io.len as usize;
        debug_assert!(buf.len() >= len);
        // Raw syscalls: glibc's wrappers are cancellation points that cost
        // two extra calls per I/O in a multi-threaded process.
        let nr = if io.write {
            libc::SYS_pwrite64
        } else {
            libc::SYS_pread64
        };
        // SAFETY: `buf` is valid for `len` bytes (the runner sizes buffers to
        // the job's largest I/O); the kernel reads or writes at most `len`.
        let rc = unsafe { libc::syscall(nr, fd, buf.as_mut_ptr(), len, io.offset as libc::off_t) };
        check(rc as isize).map(Queued::Done)
    }
}
