//! `psync`: `pread(2)` / `pwrite(2)`.

use super::{Engine, check};
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
    fn submit(&mut self, fd: RawFd, io: &IoUnit, buf: &mut [u8]) -> std::io::Result<usize> {
        let len = io.len as usize;
        debug_assert!(buf.len() >= len);
        // SAFETY: `buf` is valid for `len` bytes (checked by the runner, which
        // sizes buffers to the job's largest I/O).
        let rc = unsafe {
            if io.write {
                libc::pwrite(fd, buf.as_ptr().cast(), len, io.offset as libc::off_t)
            } else {
                libc::pread(fd, buf.as_mut_ptr().cast(), len, io.offset as libc::off_t)
            }
        };
        check(rc)
    }
}
