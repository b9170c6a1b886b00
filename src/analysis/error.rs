//! What can go wrong comparing or sweeping: a bad argument, sides that do
//! not compare, and the failures of the layers below (a run, the store, a
//! trace). The top error shows each of the layers' as itself.

use super::fingerprint::{MixedWorkloads, UnlikeTraces};
use crate::store::StoreError;
use crate::trace::TraceError;
use iolab_runner::Error as RunError;

/// A comparison's or a sweep's failure.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// A run failed, or an argument is bad (the run layer's usage error).
    #[error(transparent)]
    Run(RunError),
    /// The results database.
    #[error(transparent)]
    Store(Box<StoreError>),
    /// A stored trace could not be read.
    #[error(transparent)]
    Trace(Box<TraceError>),
    /// A side of a comparison pools runs of different workloads.
    #[error(transparent)]
    MixedWorkloads(Box<MixedWorkloads>),
    /// The sides of a comparison are traces of different programs, or a
    /// trace and a run.
    #[error(transparent)]
    UnlikeTraces(Box<UnlikeTraces>),
}

/// Result with the analysis layer's error.
pub type AnalysisResult<T> = std::result::Result<T, AnalysisError>;

impl AnalysisError {
    /// A bad command-line argument: what was given, what is wrong.
    pub fn usage(what: impl Into<String>, problem: impl Into<String>) -> AnalysisError {
        AnalysisError::Run(RunError::usage(what, problem))
    }

    /// True for a sweep or comparison stopped by the user (a signal).
    pub fn is_interrupt(&self) -> bool {
        matches!(self, AnalysisError::Run(RunError::Interrupted { .. }))
    }
}

impl From<RunError> for AnalysisError {
    fn from(e: RunError) -> AnalysisError {
        AnalysisError::Run(e)
    }
}

impl From<crate::job::JobError> for AnalysisError {
    fn from(e: crate::job::JobError) -> AnalysisError {
        AnalysisError::Run(e.into())
    }
}

impl From<StoreError> for AnalysisError {
    fn from(e: StoreError) -> AnalysisError {
        AnalysisError::Store(Box::new(e))
    }
}

impl From<TraceError> for AnalysisError {
    fn from(e: TraceError) -> AnalysisError {
        match e {
            TraceError::Run(e) => AnalysisError::Run(*e),
            TraceError::Store(e) => AnalysisError::Store(e),
            e => AnalysisError::Trace(Box::new(e)),
        }
    }
}
