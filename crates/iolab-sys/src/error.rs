//! The system layer's one error type. The top crate turns it into its own
//! `Error` with the same message and exit code.

use std::path::PathBuf;

/// A failure of a system-layer call.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Refused as unsafe: the write or removal would touch data iolab did
    /// not create.
    #[error("{reason}")]
    Refused {
        /// The file, device or directory concerned.
        path: PathBuf,
        /// Why, and how to allow it.
        reason: String,
    },
    /// A system call on a file failed.
    #[error("{context}: {source}")]
    Io {
        /// The operation and the path (`cannot lay out /data/f`).
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The system layer's result.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An I/O error with the operation and path it concerns.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// A refusal to touch `path`.
    pub fn refused(path: impl Into<PathBuf>, reason: impl Into<String>) -> Error {
        Error::Refused {
            path: path.into(),
            reason: reason.into(),
        }
    }
}
