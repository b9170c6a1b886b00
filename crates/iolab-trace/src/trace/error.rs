//! What can go wrong while tracing, reading a trace or turning it into
//! something else.

use std::path::PathBuf;

/// A tracing failure, naming what failed.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Something the tracer needs is missing: root, BTF, BPF, tracefs.
    #[error("iolab trace needs {what}: {hint}")]
    Missing {
        /// What is missing.
        what: &'static str,
        /// How to get it.
        hint: String,
    },
    /// The kernel refused the BPF program or one of its attachments.
    #[error("BPF {what}: {problem}")]
    Bpf {
        /// The step that failed (load, attach sys_enter_pread64, ...).
        what: String,
        /// The kernel's or loader's message.
        problem: String,
    },
    /// A wrong argument (a pid that does not exist, no command).
    #[error("{what}: {problem}")]
    Usage {
        /// The argument.
        what: String,
        /// What is wrong with it, and what was expected.
        problem: String,
    },
    /// The file to write exists: iolab never replaces one.
    #[error("{} exists: iolab never overwrites a file (remove it or give another -o)", .0.display())]
    Exists(PathBuf),
    /// Reading or writing a file failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A trace file (or strace output) that does not read as one.
    #[error("{}:{line}: {problem}", .path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// Its line (1-based).
        line: usize,
        /// What was expected.
        problem: String,
    },
    /// Starting the command to trace failed.
    #[error("cannot start {command}: {source}")]
    Spawn {
        /// The command.
        command: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Stopped by a signal (SIGINT, SIGTERM); what was recorded is kept.
    #[error("tracing stopped by signal {signal}")]
    Interrupted {
        /// The signal.
        signal: i32,
    },
    /// A run of the layer below failed or was refused (`replay` and
    /// `imitate` run jobs, copy files and check free space); the top shows
    /// it, and gives its exit code, as any run's.
    #[error(transparent)]
    Run(Box<iolab_runner::Error>),
    /// The results database (a stored trace).
    #[error(transparent)]
    Store(Box<crate::store::StoreError>),
    /// The traced command failed: iolab exits with its status (as strace
    /// does), after showing and storing the trace.
    #[error("the traced command exited with status {status}")]
    CommandFailed {
        /// Its exit status (128 + the signal for one killed).
        status: i32,
    },
}

impl From<iolab_runner::Error> for TraceError {
    fn from(e: iolab_runner::Error) -> TraceError {
        TraceError::Run(Box::new(e))
    }
}

impl From<crate::job::JobError> for TraceError {
    fn from(e: crate::job::JobError) -> TraceError {
        TraceError::Run(Box::new(e.into()))
    }
}

impl From<crate::store::StoreError> for TraceError {
    fn from(e: crate::store::StoreError) -> TraceError {
        TraceError::Store(Box::new(e))
    }
}

impl TraceError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> TraceError {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            return TraceError::Exists(path.into());
        }
        TraceError::Io {
            path: path.into(),
            source,
        }
    }
}

/// What is wrong with one line of a trace file or of strace's output; the
/// reader makes it a [`TraceError::Format`] with the file and the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LineProblem(pub String);

impl From<String> for LineProblem {
    fn from(s: String) -> LineProblem {
        LineProblem(s)
    }
}

impl From<&str> for LineProblem {
    fn from(s: &str) -> LineProblem {
        LineProblem(s.to_string())
    }
}

/// A result whose error is a [`TraceError`].
pub type TraceResult<T> = std::result::Result<T, TraceError>;
