//! `psync`: `pread(2)` / `pwrite(2)`.

use super::{Engine, EngineConfig, EngineError, Queued, check};
use super::IoUnit;
use std::io;
use std::os::fd::RawFd;

/// Positional reads and writes, one syscall per I/O.
#[derive(Debug, Default)]
pub struct PsyncEngine;

impl Engine for PsyncEngine {
    fn build(_: &EngineConfig) -> Result<Self, EngineError> {
        Ok(PsyncEngine)
    }

    #[inline]
    fn queue(&mut self, _tag: u32, fd: RawFd, unit: IoUnit, buf: &mut [u8]) -> io::Result<Queued> {
        let len = unit.len as usize;
        debug_assert!(buf.len() >= len);
        // Raw syscalls: glibc's wrappers are cancellation points that cost
        // two extra calls per I/O in a multi-threaded process.
        let nr = if unit.write {
            libc::SYS_pwrite64
        } else {
            libc::SYS_pread64
        };
        // SAFETY: `buf` is valid for `len` bytes (the runner sizes buffers to
        // the job's largest I/O); the kernel reads or writes at most `len`.
        let rc =
            unsafe { libc::syscall(nr, fd, buf.as_mut_ptr(), len, unit.offset as libc::off_t) };
        check(rc as isize).map(Queued::Done)
    }
}
