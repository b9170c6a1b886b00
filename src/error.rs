//! One error type for the library and one table of exit codes for the
//! binary. Every variant carries what failed (the job file and line, the
//! option, the path, the operation, the OS error); [`Error::exit_code`] is
//! the only place that turns an error into a process exit code.

use crate::job::JobError;
use crate::store::StoreError;
use std::path::PathBuf;

/// Process exit codes, the same for every subcommand (README, "Exit codes").
pub mod code {
    /// Done.
    pub const OK: i32 = 0;
    /// The command ran and failed: an I/O error, a tool or the database failed.
    pub const FAILED: i32 = 1;
    /// Bad usage: an unknown option, a bad value, a job file that does not parse.
    pub const USAGE: i32 = 2;
    /// The file system is full (ENOSPC or EDQUOT); what was done is reported.
    pub const NO_SPACE: i32 = 3;
    /// Refused as unsafe: it would write or remove data iolab did not create.
    pub const REFUSED: i32 = 4;
    /// Stopped by a signal: 128 + the signal number (SIGINT 130, SIGTERM 143).
    pub const SIGNAL_BASE: i32 = 128;
}

/// Why a command could not be done.
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
    /// The results database.
    #[error(transparent)]
    Store(Box<StoreError>),
    /// The run went on but I/O failed; each message names the file and
    /// the operation (the results were reported).
    #[error("{}", .errors.join("\n"))]
    RunFailed {
        /// One line per failure.
        errors: Vec<String>,
    },
    /// A side of a comparison pools runs of different workloads.
    #[error(transparent)]
    MixedWorkloads(Box<crate::analysis::fingerprint::MixedWorkloads>),
    /// The sides of a comparison are traces of different programs, or a
    /// trace and a run.
    #[error(transparent)]
    UnlikeTraces(Box<crate::analysis::fingerprint::UnlikeTraces>),
    /// An injected disk (`iolab disk`) could not be made, changed or removed.
    #[error(transparent)]
    Disk(Box<crate::disk::DiskError>),
    /// A program could not be traced, or a trace read or turned into
    /// something else (`iolab trace`, `iolab replay`).
    #[error(transparent)]
    Trace(Box<crate::trace::TraceError>),
    /// Running a command under `iolab exec` failed, or some of its runs.
    #[error(transparent)]
    Exec(Box<crate::exec::ExecError>),
    /// A run over several hosts (`--hosts`, `iolab worker`) failed; the
    /// error names the host.
    #[error(transparent)]
    Dist(Box<crate::dist::DistError>),
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

impl From<crate::dist::DistError> for Error {
    fn from(e: crate::dist::DistError) -> Error {
        Error::Dist(Box::new(e))
    }
}

impl From<crate::exec::ExecError> for Error {
    fn from(e: crate::exec::ExecError) -> Error {
        Error::Exec(Box::new(e))
    }
}

impl From<crate::trace::TraceError> for Error {
    fn from(e: crate::trace::TraceError) -> Error {
        Error::Trace(Box::new(e))
    }
}

impl From<crate::disk::DiskError> for Error {
    fn from(e: crate::disk::DiskError) -> Error {
        Error::Disk(Box::new(e))
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

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Error {
        Error::Store(Box::new(e))
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

    /// The process exit code for this error (see [`code`]).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Job(_)
            | Error::Usage { .. }
            | Error::Engine { .. }
            | Error::MixedWorkloads(_)
            | Error::UnlikeTraces(_) => code::USAGE,
            Error::Store(e) if e.is_usage() => code::USAGE,
            Error::Refused { .. } => code::REFUSED,
            Error::NoSpace { .. } | Error::NotEnoughSpace { .. } => code::NO_SPACE,
            Error::Io { source, .. } if is_no_space(source) => code::NO_SPACE,
            Error::Interrupted { signal } => code::SIGNAL_BASE + signal,
            Error::Disk(e) => match **e {
                crate::disk::DiskError::Usage { .. } | crate::disk::DiskError::Rule(_) => {
                    code::USAGE
                }
                crate::disk::DiskError::NotEmpty(_)
                | crate::disk::DiskError::MountPoint { .. }
                | crate::disk::DiskError::Nested { .. } => code::REFUSED,
                crate::disk::DiskError::Interrupted { signal } => code::SIGNAL_BASE + signal,
                _ => code::FAILED,
            },
            Error::Dist(e) => match **e {
                crate::dist::DistError::Usage { .. } => code::USAGE,
                _ => code::FAILED,
            },
            Error::Exec(e) => match **e {
                crate::exec::ExecError::Usage { .. } => code::USAGE,
                // The program's own status is in the message: passed on as iolab's
                // exit code, 3 would read as "no space" and 4 as "refused".
                crate::exec::ExecError::RunsFailed { .. } => code::FAILED,
                _ => code::FAILED,
            },
            Error::Trace(e) => match **e {
                crate::trace::TraceError::Usage { .. }
                | crate::trace::TraceError::Format { .. } => code::USAGE,
                crate::trace::TraceError::Interrupted { signal } => code::SIGNAL_BASE + signal,
                crate::trace::TraceError::Exists(_) => code::REFUSED,
                crate::trace::TraceError::CommandFailed { status } => status,
                _ => code::FAILED,
            },
            Error::Io { .. } | Error::Tool { .. } | Error::Store(_) | Error::RunFailed { .. } => {
                code::FAILED
            }
        }
    }

    /// True for [`Error::Interrupted`]: the user stopped it, nothing failed.
    pub fn is_interrupt(&self) -> bool {
        matches!(self, Error::Interrupted { .. })
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

/// Result with the library's error.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_code_per_class() {
        let nospc = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(Error::io("write x", nospc).exit_code(), code::NO_SPACE);
        let eio = std::io::Error::from_raw_os_error(libc::EIO);
        assert_eq!(Error::io("read x", eio).exit_code(), code::FAILED);
        assert_eq!(Error::usage("--x", "bad").exit_code(), code::USAGE);
        assert_eq!(Error::refused("/f", "no").exit_code(), code::REFUSED);
        let sigterm = Error::Interrupted {
            signal: libc::SIGTERM,
        };
        assert_eq!(sigterm.exit_code(), 143);
        assert_eq!(sigterm.to_string(), "interrupted by SIGTERM");
    }
}
