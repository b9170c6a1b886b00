//! What can go wrong running a command under `iolab exec`: its own
//! failures, and those of the layers it uses (a run-level refusal or
//! system call, the store, the tracer, a comparison), which the top error
//! shows as themselves.

use crate::analysis::AnalysisError;
use crate::store::StoreError;
use crate::trace::TraceError;
use iolab_runner::Error as RunError;

/// An `iolab exec` failure, naming what failed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A wrong argument (no command, a cache state without files).
    #[error("{what}: {problem}")]
    Usage {
        /// The argument.
        what: String,
        /// What is wrong with it, and what was expected.
        problem: String,
    },
    /// Starting the command failed.
    #[error("cannot start {command}: {source}")]
    Spawn {
        /// The command.
        command: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Waiting for the command or reading its counters failed.
    #[error("{command}: {what}: {source}")]
    Wait {
        /// The command.
        command: String,
        /// The step (waiting, reaping).
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// Some runs of the command failed (they are kept, not counted).
    #[error("{failed} of {runs} runs of {command} failed (exit status {}); they are kept, and left out of the figures", .statuses.join(", "))]
    RunsFailed {
        /// The command.
        command: String,
        /// Runs that failed.
        failed: usize,
        /// Runs made.
        runs: usize,
        /// Their exit statuses (128 + the signal for one killed).
        statuses: Vec<String>,
        /// The first failed run's status (iolab exits 1: the status is in
        /// the message).
        first_status: i32,
    },
    /// A run-level failure: a system call, a refusal, a tool (perf), a
    /// stop by a signal.
    #[error(transparent)]
    Run(RunError),
    /// The results database.
    #[error(transparent)]
    Store(Box<StoreError>),
    /// The tracer (`--trace`).
    #[error(transparent)]
    Trace(Box<TraceError>),
    /// A comparison of the two sides (`compare --exec`).
    #[error(transparent)]
    Analysis(Box<AnalysisError>),
}

/// Result with `exec`'s error.
pub type Result<T> = std::result::Result<T, ExecError>;

impl From<RunError> for ExecError {
    fn from(e: RunError) -> ExecError {
        ExecError::Run(e)
    }
}

impl From<iolab_sys::Error> for ExecError {
    fn from(e: iolab_sys::Error) -> ExecError {
        ExecError::Run(e.into())
    }
}

impl From<StoreError> for ExecError {
    fn from(e: StoreError) -> ExecError {
        ExecError::Store(Box::new(e))
    }
}

impl From<TraceError> for ExecError {
    fn from(e: TraceError) -> ExecError {
        ExecError::Trace(Box::new(e))
    }
}

impl From<AnalysisError> for ExecError {
    fn from(e: AnalysisError) -> ExecError {
        ExecError::Analysis(Box::new(e))
    }
}

impl ExecError {
    /// A usage error.
    pub fn usage(what: impl Into<String>, problem: impl Into<String>) -> ExecError {
        ExecError::Usage {
            what: what.into(),
            problem: problem.into(),
        }
    }
}
