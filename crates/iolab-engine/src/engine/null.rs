//! `null`: no I/O; every I/O completes at once, trims too. Measures
//! iolab's own cost. Like fio's, it lays out and opens no file.

use super::{Engine, EngineConfig, EngineError, Queued};
use super::IoUnit;
use std::io;
use std::os::fd::RawFd;

/// Completes every I/O without a syscall.
#[derive(Debug, Default)]
pub struct NullEngine;

impl Engine for NullEngine {
    const DISKLESS: bool = true;

    fn build(_: &EngineConfig) -> Result<Self, EngineError> {
        Ok(NullEngine)
    }

    #[inline]
    fn queue(
        &mut self,
        _tag: u32,
        _fd: RawFd,
        unit: IoUnit,
        _buf: &mut [u8],
    ) -> io::Result<Queued> {
        Ok(Queued::Done(unit.len as usize))
    }

    /// A trim succeeds at once, as fio's null engine.
    fn trim(&mut self, _fd: RawFd, _unit: IoUnit) -> io::Result<()> {
        Ok(())
    }
}
