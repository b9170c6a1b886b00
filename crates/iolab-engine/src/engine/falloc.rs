//! `falloc`: no data moves; each I/O is an `fallocate(2)` of its range, as
//! fio's engines/falloc.c: a read is `fallocate(FALLOC_FL_KEEP_SIZE)` (the
//! blocks are allocated, the size stays), a write `fallocate(0)` (the file
//! grows to cover the range), a trim `fallocate(PUNCH_HOLE | KEEP_SIZE)`
//! (the blocks are freed). Reads need a writable file, so a falloc job
//! counts as one that changes its files.

use super::IoUnit;
use super::{Engine, EngineConfig, EngineError, Queued};
use std::io;
use std::os::fd::RawFd;

/// Allocation instead of transfer.
#[derive(Debug, Default)]
pub struct FallocEngine;

impl Engine for FallocEngine {
    const MOVES_DATA: bool = false;
    const WRITES_ON_READ: bool = true;

    fn hint(err: &io::Error, _cfg: &EngineConfig) -> Option<&'static str> {
        (err.raw_os_error() == Some(libc::EOPNOTSUPP))
            .then_some("this file system does not support fallocate(2)")
    }

    fn build(_: &EngineConfig) -> Result<Self, EngineError> {
        Ok(FallocEngine)
    }

    #[inline]
    fn queue(&mut self, _tag: u32, fd: RawFd, unit: IoUnit, _buf: &mut [u8]) -> io::Result<Queued> {
        let mode = if unit.write {
            0
        } else {
            libc::FALLOC_FL_KEEP_SIZE
        };
        fallocate(fd, mode, unit)?;
        Ok(Queued::Done(unit.len as usize))
    }

    /// fio's falloc trim: a hole punched in the range, the size kept.
    fn trim(&mut self, fd: RawFd, unit: IoUnit) -> io::Result<()> {
        fallocate(fd, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, unit)
    }
}

/// `fallocate(2)` of the unit's range with `mode`.
fn fallocate(fd: RawFd, mode: libc::c_int, unit: IoUnit) -> io::Result<()> {
    let (off, len) = (unit.offset as libc::off_t, unit.len as libc::off_t);
    // SAFETY: fallocate on the clone's descriptor; no memory is passed.
    if unsafe { libc::fallocate(fd, mode, off, len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
