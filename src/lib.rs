#![recursion_limit = "256"]
//! iolab: a laboratory for I/O effects.
//!
//! The library measures and returns data; it never prints. Data flows
//! `spec` (job input) → `plan` (offsets) → `runner` (threads, cache, repeats)
//! → `engine` (syscalls), measured by `metrics`, and shown by `render`.

pub mod compare;
pub mod counters;
pub mod engine;
pub mod environment;
pub mod error;
pub mod fio_import;
pub mod lab;
pub mod metrics;
pub mod pagecache;
pub mod plan;
pub mod plot;
pub mod profile;
pub mod render;
pub mod runner;
pub mod spec;
pub mod stats;
pub mod store;
pub mod summary;
pub mod sweep;
pub mod tree;
pub mod xattr;

pub use error::{Error, Result};
