//! How I/O is issued: one trait, one file per engine. The runner stamps the
//! times (queued, submitted, completed) around the trait's calls; an engine
//! only performs the operations, like fio's `ioengine_ops`.
//!
//! A synchronous engine implements [`Engine::queue`] alone and returns
//! [`Queued::Done`] ("submit and complete"). An asynchronous engine returns
//! [`Queued::Pending`], sends what it queued to the kernel in
//! [`Engine::commit`] and hands completions back from [`Engine::reap`].

mod libaio;
mod mmap;
mod null;
mod psync;
mod sync;
pub mod uring;

pub use libaio::LibaioEngine;
pub use mmap::MmapEngine;
pub use null::NullEngine;
pub use psync::PsyncEngine;
pub use sync::SyncEngine;
pub use uring::UringEngine;

use crate::plan::IoUnit;
use std::os::fd::RawFd;

/// What [`Engine::queue`] did with an I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// Completed already, with this many bytes transferred.
    Done(usize),
    /// Queued; it completes through [`Engine::reap`].
    Pending,
}

/// One completion from [`Engine::reap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The tag given to [`Engine::queue`].
    pub tag: u32,
    /// Bytes transferred, or a negative errno.
    pub result: i64,
}

/// The files and buffers an engine works with, known before the start.
pub struct Attach<'a> {
    /// Open descriptors, indexed by `IoUnit::file`.
    pub fds: &'a [RawFd],
    /// Size of each file in bytes.
    pub sizes: &'a [u64],
    /// One buffer per tag (`iodepth` of them), as (address, length); they
    /// stay allocated and in place until the engine is dropped.
    pub bufs: &'a [libc::iovec],
    /// The job writes.
    pub writes: bool,
}

/// An I/O engine.
pub trait Engine: Send {
    /// fio's name of the engine.
    fn name(&self) -> &'static str;

    /// True when every I/O completes inside [`Engine::queue`]; the runner
    /// then uses its one-I/O-at-a-time loop.
    fn is_sync(&self) -> bool {
        true
    }

    /// Called once with the clone's files and buffers before the start
    /// barrier (mmap maps the files, io_uring registers them).
    fn attach(&mut self, _a: Attach<'_>) -> std::io::Result<()> {
        Ok(())
    }

    /// Starts `io` on descriptor `fd` (file index `io.file`) with `buf`
    /// (`io.len` bytes), remembering `tag` for its completion.
    fn queue(&mut self, tag: u32, fd: RawFd, io: IoUnit, buf: &mut [u8])
    -> std::io::Result<Queued>;

    /// Sends the queued I/Os to the kernel; returns how many were sent.
    fn commit(&mut self) -> std::io::Result<usize> {
        Ok(0)
    }

    /// Waits until at least `min` I/Os have completed and appends every
    /// completion available (at most `max`) to `out`.
    fn reap(
        &mut self,
        _min: usize,
        _max: usize,
        _out: &mut Vec<Completion>,
    ) -> std::io::Result<()> {
        Ok(())
    }
}

fn check(rc: isize) -> std::io::Result<usize> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}
