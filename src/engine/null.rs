//! `null`: no I/O; every I/O completes at once. Measures iolab's own cost.

use super::{Engine, EngineConfig, EngineError, Queued};
use super::IoUnit;
use std::io;
use std::os::fd::RawFd;

/// Completes every I/O without a syscall.
#[derive(Debug, Default)]
pub struct NullEngine;

impl Engine for NullEngine {
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
}
