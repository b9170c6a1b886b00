//! iolab's run layer: a job run (`runner`: layout, cache, clones, results),
//! the counters read around it (`counters`), metadata trees (`tree`),
//! flamegraphs (`profile`) and runs over many hosts (`dist`, the `mpi`
//! feature). Above the disk layer only: the compiler keeps it from
//! importing the store, trace or render layers (docs/ARCHITECTURE.md).

pub mod counters;
pub mod dist;
pub mod error;
pub mod profile;
pub mod runner;
pub mod tree;

pub use error::{Error, Result};

// The layers below, under the paths the run code uses (crate::job::...).
pub use iolab_disk::disk;
pub use iolab_engine::engine;
pub use iolab_job::{job, plan};
pub use iolab_sys::{metrics, registry, sys};
