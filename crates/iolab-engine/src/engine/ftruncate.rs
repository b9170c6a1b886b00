//! `ftruncate`: no data moves; each write sets the file's size to its
//! offset with `ftruncate(2)` (its length is ignored), as fio's
//! engines/ftruncate.c. A read fails with EINVAL, as in fio.

use super::IoUnit;
use super::{Engine, EngineConfig, EngineError, Queued};
use std::io;
use std::os::fd::RawFd;

/// Truncation to each write's offset.
#[derive(Debug, Default)]
pub struct FtruncateEngine;

impl Engine for FtruncateEngine {
    const MOVES_DATA: bool = false;

    fn check(cfg: &EngineConfig) -> Result<(), EngineError> {
        if cfg.reads {
            return Err(EngineError::new(
                "ioengine",
                "ftruncate only writes (fio fails every read with EINVAL); use rw=write or rw=randwrite",
            ));
        }
        Ok(())
    }

    fn hint(err: &io::Error, _cfg: &EngineConfig) -> Option<&'static str> {
        (err.raw_os_error() == Some(libc::EINVAL))
            .then_some("ioengine=ftruncate only writes (a read fails with EINVAL, as in fio)")
    }

    fn build(_: &EngineConfig) -> Result<Self, EngineError> {
        Ok(FtruncateEngine)
    }

    #[inline]
    fn queue(&mut self, _tag: u32, fd: RawFd, unit: IoUnit, _buf: &mut [u8]) -> io::Result<Queued> {
        if !unit.write {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: ftruncate on the clone's descriptor; no memory is passed.
        if unsafe { libc::ftruncate(fd, unit.offset as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Queued::Done(unit.len as usize))
    }
}
