//! iolab's engine layer: how I/O is issued (one trait, one file per engine,
//! one list). Above the system layer only: the compiler keeps it from
//! importing the job, plan or runner layers (docs/ARCHITECTURE.md).

pub mod engine;

// The layer below, under the paths the engines use (crate::sys::...).
pub use iolab_sys::{metrics, registry, sys};
