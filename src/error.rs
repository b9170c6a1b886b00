//! The library's error type: every message names what failed.

/// Why a run could not be done.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad job input (options, files, sizes).
    #[error("{0}")]
    Input(String),
    /// iolab refused to do something unsafe (e.g. overwrite foreign data).
    #[error("{0}")]
    Refused(String),
    /// A system call failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, naming the file.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// An outside tool iolab drives (perf) failed or is missing.
    #[error("{0}")]
    Tool(String),
    /// Stopped by the user (SIGINT) before anything could be measured.
    #[error("interrupted")]
    Interrupted,
}

impl Error {
    /// An I/O error with context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// Result with the library's error.
pub type Result<T> = std::result::Result<T, Error>;
