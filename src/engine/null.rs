//! `null`: no I/O; every I/O completes at once. Measures iolab's own cost.

use super::{Engine, Queued};
use crate::plan::IoUnit;
use std::os::fd::RawFd;

/// Completes every I/O without a syscall.
#[derive(Debug, Default)]
pub struct NullEngine;

impl Engine for NullEngine {
    fn name(&self) -> &'static str {
        "null"
    }

    #[inline]
    fn queue(
        &mut self,
        _tag: u32,
        _fd: RawFd,
        io: IoUnit,
        _buf: &mut [u8],
    ) -> std::io::Result<Queued> {
        Ok(Queued::Done(io.len as usize))
    }
}
