//! `sync`: `lseek(2)` then `read(2)` / `write(2)`.

use super::{Engine, EngineConfig, EngineError, Queued, check};
use super::IoUnit;
use std::io;
use std::os::fd::RawFd;

/// Seek-then-transfer, two syscalls per I/O (fio's `sync`).
#[derive(Debug, Default)]
pub struct SyncEngine;

impl Engine for SyncEngine {
    fn build(_: &EngineConfig) -> Result<Self, EngineError> {
        Ok(SyncEngine)
    }

    fn queue(&mut self, _tag: u32, fd: RawFd, unit: IoUnit, buf: &mut [u8]) -> io::Result<Queued> {
        let len = unit.len as usize;
        debug_assert!(buf.len() >= len);
        // SAFETY: lseek on a descriptor the runner owns; `buf` is valid for
        // `len` bytes.
        unsafe {
            if libc::lseek(fd, unit.offset as libc::off_t, libc::SEEK_SET) < 0 {
                return Err(io::Error::last_os_error());
            }
            let nr = if unit.write {
                libc::SYS_write
            } else {
                libc::SYS_read
            };
            check(libc::syscall(nr, fd, buf.as_mut_ptr(), len) as isize).map(Queued::Done)
        }
    }
}
