//! What can go wrong running a command under `iolab exec`.

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
