#![recursion_limit = "256"]
//! iolab: a laboratory for I/O effects.
//!
//! The library measures and returns data; it never prints. Data flows
//! `job` (job input) → `plan` (offsets) → `runner` (threads, cache, repeats)
//! → `engine` (syscalls), measured by `metrics`, and shown by `render`.

pub mod analysis;
pub mod error;
pub mod exec;
pub mod explain;
pub mod lab;
pub mod render;

pub use error::{Error, Result};
// The bottom layer, its own crate: under their old paths (crate::sys::...).
pub use iolab_disk::disk;
pub use iolab_engine::engine;
pub use iolab_job::{job, plan};
pub use iolab_runner::{counters, dist, profile, runner, tree};
pub use iolab_store::store;
pub use iolab_sys::{metrics, registry, sys};
pub use iolab_trace::trace;
