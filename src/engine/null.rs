//! `null`: no I/O; every I/O completes at once. Measures iolab's own cost.

use super::Engine;
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
    fn submit(&mut self, _fd: RawFd, io: &IoUnit, _buf: &mut [u8]) -> std::io::Result<usize> {
        Ok(io.len as usize)
    }
}
