//! Many hosts: the same job run by `iolab worker` processes that a
//! launcher (ssh, srun, a local shell) starts, one per host, speaking JSON
//! lines over their stdin and stdout ([`protocol`]). The coordinator
//! ([`coordinator`]) checks each worker's version, estimates its clock
//! offset, hands it the job and its rank, releases all of them at one
//! barrier once every one has laid out its files, and gathers the results,
//! which [`merge`] makes one run: every rank's clones, with exactly merged
//! histograms, and a summary per host.

pub mod coordinator;
pub mod merge;
pub mod mpi;
pub mod protocol;
pub mod rank;
pub mod trees;
pub mod worker;

pub use crate::error::DistError;
pub use coordinator::{Coordinator, Launch};
pub use merge::{DistRun, HostRun};
