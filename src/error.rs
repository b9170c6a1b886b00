//! The one error the binary sees and the one table of exit codes. It names
//! the error of every layer: the run layer's (`iolab_runner::Error`, which
//! itself holds the job's, the engine's and the hosts' errors), the
//! store's, the injected disks', the tracer's, `exec`'s and the
//! comparisons'. [`Error::exit_code`] is the only place that turns an error
//! into a process exit code.

use crate::store::StoreError;
pub use iolab_runner::error::{is_no_space, signal_name};
use std::path::PathBuf;

/// The run layer's error, named at the top as one of the layers' errors.
pub use iolab_runner::Error as RunError;

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
    /// A run, a tree, a flamegraph or a run over hosts; also a bad
    /// argument, a refusal, a full file system or a failed system call of
    /// any command (the run layer's error holds those).
    #[error(transparent)]
    Run(RunError),
    /// The results database.
    #[error(transparent)]
    Store(Box<StoreError>),
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
}

impl From<RunError> for Error {
    fn from(e: RunError) -> Error {
        Error::Run(e)
    }
}

impl From<crate::job::JobError> for Error {
    fn from(e: crate::job::JobError) -> Error {
        Error::Run(e.into())
    }
}

impl From<crate::dist::DistError> for Error {
    fn from(e: crate::dist::DistError) -> Error {
        Error::Run(e.into())
    }
}

impl From<iolab_sys::Error> for Error {
    fn from(e: iolab_sys::Error) -> Error {
        Error::Run(e.into())
    }
}

impl From<crate::exec::ExecError> for Error {
    /// The layers' errors `exec` carries are shown as themselves.
    fn from(e: crate::exec::ExecError) -> Error {
        use crate::exec::ExecError as E;
        match e {
            E::Run(e) => Error::Run(e),
            E::Store(e) => Error::Store(e),
            E::Trace(e) => Error::from(*e),
            E::Analysis(e) => Error::from(*e),
            e => Error::Exec(Box::new(e)),
        }
    }
}

impl From<crate::trace::TraceError> for Error {
    /// A run or the store failing under a trace command is that layer's
    /// error here too (its message and exit code).
    fn from(e: crate::trace::TraceError) -> Error {
        match e {
            crate::trace::TraceError::Run(e) => Error::Run(*e),
            crate::trace::TraceError::Store(e) => Error::Store(e),
            e => Error::Trace(Box::new(e)),
        }
    }
}

impl From<crate::disk::DiskError> for Error {
    fn from(e: crate::disk::DiskError) -> Error {
        Error::Disk(Box::new(e))
    }
}

impl From<crate::analysis::AnalysisError> for Error {
    /// The layers' errors an analysis carries are shown as themselves.
    fn from(e: crate::analysis::AnalysisError) -> Error {
        use crate::analysis::AnalysisError as A;
        match e {
            A::Run(e) => Error::Run(e),
            A::Store(e) => Error::Store(e),
            A::Trace(e) => Error::Trace(e),
            A::MixedWorkloads(e) => Error::MixedWorkloads(e),
            A::UnlikeTraces(e) => Error::UnlikeTraces(e),
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
        Error::Run(RunError::io(context, source))
    }

    /// The error of a run `stop` stopped: the signal that raised it
    /// (SIGINT when it was asked without one).
    pub fn interrupted(stop: &crate::sys::stop::StopFlag) -> Error {
        Error::Run(RunError::interrupted(stop))
    }

    /// A bad command-line argument: what was given, what is wrong.
    pub fn usage(what: impl Into<String>, problem: impl Into<String>) -> Error {
        Error::Run(RunError::usage(what, problem))
    }

    /// A refusal to touch `path`.
    pub fn refused(path: impl Into<PathBuf>, reason: impl Into<String>) -> Error {
        Error::Run(RunError::refused(path, reason))
    }

    /// A failure of an outside tool or library.
    pub fn tool(tool: &'static str, problem: impl Into<String>) -> Error {
        Error::Run(RunError::tool(tool, problem))
    }

    /// The process exit code for this error (see [`code`]).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Run(e) => run_exit_code(e),
            Error::MixedWorkloads(_) | Error::UnlikeTraces(_) => code::USAGE,
            Error::Store(e) if e.is_usage() => code::USAGE,
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
            Error::Store(_) => code::FAILED,
        }
    }

    /// True for an interrupted run: the user stopped it, nothing failed.
    pub fn is_interrupt(&self) -> bool {
        matches!(self, Error::Run(RunError::Interrupted { .. }))
    }
}

/// The exit code of a run-layer error.
fn run_exit_code(e: &RunError) -> i32 {
    match e {
        RunError::Job(_) | RunError::Usage { .. } | RunError::Engine { .. } => code::USAGE,
        RunError::Refused { .. } => code::REFUSED,
        RunError::NoSpace { .. } | RunError::NotEnoughSpace { .. } => code::NO_SPACE,
        RunError::Io { source, .. } if is_no_space(source) => code::NO_SPACE,
        RunError::Interrupted { signal } => code::SIGNAL_BASE + signal,
        RunError::Dist(e) => match **e {
            crate::dist::DistError::Usage { .. } => code::USAGE,
            _ => code::FAILED,
        },
        RunError::Io { .. } | RunError::Tool { .. } | RunError::RunFailed { .. } => code::FAILED,
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
        let sigterm = Error::Run(RunError::Interrupted {
            signal: libc::SIGTERM,
        });
        assert_eq!(sigterm.exit_code(), 143);
        assert_eq!(sigterm.to_string(), "interrupted by SIGTERM");
    }
}
