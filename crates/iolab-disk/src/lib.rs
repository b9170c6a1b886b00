//! iolab's injected disks (`iolab disk`): a FUSE file system or a loop
//! device over one, that delays, fails and limits I/O by rules. Above the
//! job layer only: the compiler keeps it from importing the runner, store
//! or render layers (docs/ARCHITECTURE.md); what it needs from them comes
//! in as parameters.

pub mod disk;

// The layers below, under the paths the disk code uses (crate::sys::...).
pub use iolab_job::{job, plan};
pub use iolab_sys::{metrics, registry, sys};
