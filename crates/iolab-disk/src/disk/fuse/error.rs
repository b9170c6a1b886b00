//! What can go wrong serving the image.

use std::path::PathBuf;

/// An error of the FUSE server.
#[derive(Debug, thiserror::Error)]
pub enum FuseError {
    /// A system call failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// The mount did not work.
    #[error("cannot mount FUSE at {dir}: {source}")]
    Mount {
        /// The mount point.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The kernel never sent FUSE_INIT, or sent something else first.
    #[error("FUSE_INIT: {0}")]
    Init(String),
    /// io_uring was asked for ([`super::TransportChoice::Uring`]) and
    /// cannot run; the text says why.
    #[error("FUSE over io_uring is unavailable: {0}")]
    UringUnavailable(String),
    /// A queue thread stopped on an error before the unmount.
    #[error("FUSE queue {queue}: {what}")]
    Queue {
        /// The queue.
        queue: usize,
        /// What happened.
        what: String,
    },
}

impl FuseError {
    /// An [`FuseError::Io`] from `what` and an errno.
    pub(crate) fn errno(what: impl Into<String>, e: nix::errno::Errno) -> FuseError {
        FuseError::Io {
            what: what.into(),
            source: std::io::Error::from_raw_os_error(e as i32),
        }
    }

    /// An [`FuseError::Io`] from `what` and an I/O error.
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> FuseError {
        FuseError::Io {
            what: what.into(),
            source,
        }
    }
}
