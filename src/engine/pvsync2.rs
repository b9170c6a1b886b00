//! `pvsync2`: `preadv2(2)` / `pwritev2(2)`, one syscall per I/O, with fio's
//! engine options as per-I/O flags: `hipri` sets RWF_HIPRI (the task polls
//! for the completion where the device has poll queues), `nowait` sets
//! RWF_NOWAIT (an I/O that would block, such as a read of data not in the
//! page cache, fails with EAGAIN instead).

use super::{Engine, EngineConfig, EngineError, Queued, check};
use super::IoUnit;
use std::io;
use std::os::fd::RawFd;

/// Positional vectored reads and writes with the job's RWF flags.
#[derive(Debug, Default)]
pub struct Pvsync2Engine {
    flags: libc::c_int,
}

impl Engine for Pvsync2Engine {
    const OPTIONS: &'static [&'static str] = &["hipri", "nowait"];

    fn build(cfg: &EngineConfig) -> Result<Self, EngineError> {
        let on = |set: bool, flag: libc::c_int| if set { flag } else { 0 };
        Ok(Pvsync2Engine {
            flags: on(cfg.flags.hipri, libc::RWF_HIPRI) | on(cfg.flags.nowait, libc::RWF_NOWAIT),
        })
    }

    #[inline]
    fn queue(&mut self, _tag: u32, fd: RawFd, unit: IoUnit, buf: &mut [u8]) -> io::Result<Queued> {
        let len = unit.len as usize;
        debug_assert!(buf.len() >= len);
        let iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: len,
        };
        let nr = if unit.write {
            libc::SYS_pwritev2
        } else {
            libc::SYS_preadv2
        };
        // The raw syscall (as psync: no cancellation-point wrapper) takes the
        // offset as low and high words; the high word is 0 on 64-bit.
        let (lo, hi) = (unit.offset as libc::c_ulong, ((unit.offset as u128) >> libc::c_ulong::BITS) as libc::c_ulong);
        // SAFETY: one iovec over `len` bytes of `buf`, which is valid for them;
        // the kernel reads or writes at most `len` bytes.
        let rc = unsafe { libc::syscall(nr, fd, &iov as *const libc::iovec, 1, lo, hi, self.flags) };
        check(rc as isize).map(Queued::Done)
    }
}
