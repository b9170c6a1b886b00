//! `sync`: `lseek(2)` then `read(2)` / `write(2)`.

use super::{Engine, Queued, check};
use crate::plan::IoUnit;
use std::os::fd::RawFd;

/// Seek-then-transfer, two syscalls per I/O (fio's `sync`).
#[derive(Debug, Default)]
pub struct SyncEngine;

impl Engine for SyncEngine {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn queue(
        &mut self,
        _tag: u32,
        fd: RawFd,
        io: IoUnit,
        buf: &mut [u8],
    ) -> std::io::Result<Queued> {
        let len = io.len as usize;
        debug_assert!(buf.len() >= len);
        // SAFETY: lseek on a descriptor the runner owns; `buf` is valid for
        // `len` bytes.
        unsafe {
            if libc::lseek(fd, io.offset as libc::off_t, libc::SEEK_SET) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let nr = if io.write {
                libc::SYS_write
            } else {
                libc::SYS_read
            };
            let rc = libc::syscall(nr, fd, buf.as_mut_ptr(), len);
            check(rc as isize).map(Queued::Done)
        }
    }
}
