//! The run layer's one error type: every variant carries what failed (the
//! job file and line, the option, the path, the operation, the OS error).
//! The top crate wraps it in its own `Error`, which alone turns an error
//! into an exit code.

mod dist;

pub use dist::DistError;

use crate::job::JobError;
use std::path::PathBuf;

/// Why a run (or a tree, a flamegraph, a run over hosts) could not be
/// done: the run layer's one error type. The top crate's `Error` wraps it
/// and gives each variant its exit code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Job input is wrong: a job file, a job option or its value.
    #[error(transparent)]
    Job(Box<JobError>),
    /// One of iolab's own command-line arguments is wrong.
    #[error("{what}: {problem}")]
    Usage {
        /// The argument as given (`--plot x.jpg`, `A`, `run 12`).
        what: String,
        /// What is wrong with it, and what was expected.
        problem: String,
    },
    /// Refused as unsafe: the write or removal would touch data iolab did not create.
    #[error("{reason}")]
    Refused {
        /// The file, device or directory concerned.
        path: PathBuf,
        /// Why, and how to allow it.
        reason: String,
    },
    /// The file system filled up while iolab made files or trees.
    #[error("file system full (ENOSPC) at {at}")]
    NoSpace {
        /// Where it happened.
        at: String,
    },
    /// The file systems have less room than the job's layout (or a
    /// replay) needs: found before anything was written.
    #[error(
        "not enough space to {what} in {}: {need} bytes needed, {free} free; nothing was written",
        .at.display()
    )]
    NotEnoughSpace {
        /// What the space is for (`lay out the job's files`).
        what: &'static str,
        /// The directory (or file) whose file system is short.
        at: PathBuf,
        /// Bytes the layout would write there.
        need: u64,
        /// Bytes free there.
        free: u64,
    },
    /// A system call on a file failed.
    #[error("{context}: {source}")]
    Io {
        /// The operation and the path (`cannot lay out /data/f`).
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// An engine could not be set up for a job (the kernel refused).
    #[error("job '{job}': {source}")]
    Engine {
        /// The job.
        job: String,
        /// What the engine or the kernel said.
        source: crate::engine::EngineError,
    },
    /// An outside tool iolab drives (perf) or a library it uses (plotters,
    /// inferno) failed.
    #[error("{tool}: {problem}")]
    Tool {
        /// `perf`, `plotters`, `inferno`.
        tool: &'static str,
        /// What went wrong.
        problem: String,
    },
    /// The run went on but I/O failed; each message names the file and
    /// the operation (the results were reported).
    #[error("{}", .errors.join("\n"))]
    RunFailed {
        /// One line per failure.
        errors: Vec<String>,
    },
    /// A run over several hosts (`--hosts`, `iolab worker`) failed; the
    /// error names the host.
    #[error(transparent)]
    Dist(Box<DistError>),
    /// Stopped by a signal (SIGINT, SIGTERM) before the work was done.
    #[error("interrupted by {}", signal_name(*.signal))]
    Interrupted {
        /// The signal number.
        signal: i32,
    },
}

impl From<JobError> for Error {
    fn from(e: JobError) -> Error {
        Error::Job(Box::new(e))
    }
}

impl From<DistError> for Error {
    fn from(e: DistError) -> Error {
        Error::Dist(Box::new(e))
    }
}

impl From<iolab_sys::Error> for Error {
    fn from(e: iolab_sys::Error) -> Error {
        match e {
            iolab_sys::Error::Refused { path, reason } => Error::Refused { path, reason },
            iolab_sys::Error::Io { context, source } => Error::Io { context, source },
        }
    }
}

impl Error {
    /// An I/O error with the operation and path it concerns.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// The error of a run `stop` stopped: the signal that raised it
    /// (SIGINT when it was asked without one).
    pub fn interrupted(stop: &crate::sys::stop::StopFlag) -> Error {
        Error::Interrupted {
            signal: stop.signal().unwrap_or(libc::SIGINT),
        }
    }

    /// A bad command-line argument: what was given, what is wrong.
    pub fn usage(what: impl Into<String>, problem: impl Into<String>) -> Error {
        Error::Usage {
            what: what.into(),
            problem: problem.into(),
        }
    }

    /// A refusal to touch `path`.
    pub fn refused(path: impl Into<PathBuf>, reason: impl Into<String>) -> Error {
        Error::Refused {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// A failure of an outside tool or library.
    pub fn tool(tool: &'static str, problem: impl Into<String>) -> Error {
        Error::Tool {
            tool,
            problem: problem.into(),
        }
    }
}

/// True for "no space left on device" and "disk quota exceeded".
pub fn is_no_space(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// `SIGINT`, `SIGTERM`, or `signal N`.
pub fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// Result with the run layer's error.
pub type Result<T> = std::result::Result<T, Error>;
