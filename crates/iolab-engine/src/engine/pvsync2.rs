//! `pvsync2`: `preadv2(2)` / `pwritev2(2)`, one syscall per I/O, with fio's
//! engine options as per-I/O flags: `hipri` sets RWF_HIPRI (the task polls
//! for the completion where the device has poll queues), `nowait` sets
//! RWF_NOWAIT (an I/O that would block, such as a read of data not in the
//! page cache, fails with EAGAIN instead).

use super::{Engine, EngineConfig, EngineError, Queued};
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
        let nr = (libc::SYS_preadv2, libc::SYS_pwritev2);
        super::pvsync::vector_io(nr, fd, unit, buf, self.flags).map(Queued::Done)
    }
}
