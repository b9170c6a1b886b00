//! iolab's tracer layer (`trace`): a program's I/O calls traced with eBPF
//! or strace, or imported from strace's output; traces stored as runs,
//! exported as iologs and jobs, imitated by a job and replayed. Above the
//! store only: the compiler keeps it from importing the analysis, exec or
//! render layers (docs/ARCHITECTURE.md).

pub mod trace;

pub use trace::{TraceError as Error, TraceResult as Result};

// The layers below, under the paths the trace code uses (crate::runner::...).
pub use iolab_disk::disk;
pub use iolab_job::job;
pub use iolab_runner::{runner, tree};
pub use iolab_store::store;
pub use iolab_sys::{metrics, registry, sys};
