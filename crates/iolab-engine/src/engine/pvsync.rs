//! `pvsync`: `preadv(2)` / `pwritev(2)` with one iovec, one syscall per I/O
//! (fio's `pvsync`). [`vector_io`] is shared with `pvsync2`.

use super::IoUnit;
use super::{Engine, EngineConfig, EngineError, Queued, check};
use std::io;
use std::os::fd::RawFd;

/// Positional vectored reads and writes.
#[derive(Debug, Default)]
pub struct PvsyncEngine;

impl Engine for PvsyncEngine {
    fn build(_: &EngineConfig) -> Result<Self, EngineError> {
        Ok(PvsyncEngine)
    }

    #[inline]
    fn queue(&mut self, _tag: u32, fd: RawFd, unit: IoUnit, buf: &mut [u8]) -> io::Result<Queued> {
        let nr = (libc::SYS_preadv, libc::SYS_pwritev);
        vector_io(nr, fd, unit, buf, 0).map(Queued::Done)
    }
}

/// `unit` as one iovec over `buf` through the raw syscall `nr` (its read and
/// write numbers, `preadv`/`pwritev` or `preadv2`/`pwritev2`) with the RWF
/// `flags` (ignored by `preadv`/`pwritev`). Raw syscalls, as psync: glibc's
/// wrappers are cancellation points costing two calls more per I/O.
#[inline]
pub(super) fn vector_io(
    (read, write): (libc::c_long, libc::c_long),
    fd: RawFd,
    unit: IoUnit,
    buf: &mut [u8],
    flags: libc::c_int,
) -> io::Result<usize> {
    let len = unit.len as usize;
    assert!(buf.len() >= len, "buffer shorter than the I/O");
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    let nr = if unit.write { write } else { read };
    // The kernel takes the offset as low and high words; the high word is 0
    // on 64-bit.
    let lo = unit.offset as libc::c_ulong;
    let hi = ((unit.offset as u128) >> libc::c_ulong::BITS) as libc::c_ulong;
    // SAFETY: one iovec over `len` bytes of `buf`, which is valid for them
    // (checked above); the kernel reads or writes at most `len` bytes.
    let rc = unsafe { libc::syscall(nr, fd, &iov as *const libc::iovec, 1, lo, hi, flags) };
    check(rc as isize)
}
