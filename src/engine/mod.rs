//! How one I/O is issued. The runner stamps issue and completion times around
//! [`Engine::submit`]; an engine only performs the operation (like fio's
//! `ioengine_ops.queue` for a sync engine).

mod null;
mod psync;
mod sync;

pub use null::NullEngine;
pub use psync::PsyncEngine;
pub use sync::SyncEngine;

use crate::plan::IoUnit;
use std::os::fd::RawFd;

/// A synchronous I/O engine.
pub trait Engine: Send {
    /// fio's name of the engine.
    fn name(&self) -> &'static str;

    /// Performs `io` on `fd` with `buf` (`io.len` bytes) and returns the bytes
    /// transferred once it has completed.
    fn submit(&mut self, fd: RawFd, io: &IoUnit, buf: &mut [u8]) -> std::io::Result<usize>;
}

fn check(rc: isize) -> std::io::Result<usize> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}
