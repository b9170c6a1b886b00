//! iolab's results database (`store`): every run, sweep, exec and trace
//! with its environment, key figures and whole result; imports of fio's
//! JSON. Above the run layer only: the compiler keeps it from importing
//! the trace, analysis or render layers (docs/ARCHITECTURE.md).

pub mod store;

pub use store::{StoreError, StoreResult};

// The layers below, under the paths the store code uses (crate::runner::...).
pub use iolab_disk::disk;
pub use iolab_job::job;
pub use iolab_runner::{dist, runner, tree};
pub use iolab_sys::{metrics, sys};
