//! What can go wrong with the results database, naming the file.

use std::path::PathBuf;

/// Why the database could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No location for the database could be worked out.
    #[error("no results database: set --db, IOLAB_DB or HOME")]
    NoLocation,
    /// The database cannot be opened: a directory, a missing parent, a
    /// file that is not an iolab database, a schema newer than this iolab.
    #[error("results database {}: {problem}", .path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The file at the database path is not iolab's (another program's
    /// SQLite database, or not a database at all): refused before anything
    /// was written to it.
    #[error("results database {}: not an iolab database ({why}); it was left untouched", .path.display())]
    Foreign {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        why: String,
    },
    /// A command that stores results met a database it cannot write.
    #[error(
        "results database {} cannot be written ({why}); commands that only read it work; \
         to store results give a writable --db (or use --no-store)",
        .path.display()
    )]
    ReadOnly {
        /// The file.
        path: PathBuf,
        /// What cannot be written.
        why: String,
    },
    /// A query or write failed.
    #[error("results database {}: {op}: {source}", .path.display())]
    Sql {
        /// The file.
        path: PathBuf,
        /// What was being done (`store run`, `list runs`).
        op: String,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// A stored value does not read back (written by a broken or newer iolab).
    #[error("run {id}: {what} unreadable: {problem}")]
    Decode {
        /// The run.
        id: i64,
        /// `environment`, `summary`, `stored result`.
        what: &'static str,
        /// The decoder's message.
        problem: String,
    },
    /// No run with this id.
    #[error("no run {id} in {}", .path.display())]
    NoRun {
        /// The id asked for.
        id: i64,
        /// The database.
        path: PathBuf,
    },
    /// Neither a run id nor a label of any stored run.
    #[error("'{name}' is neither a run id nor a stored label (in {})", .path.display())]
    NoSuchName {
        /// What was asked for.
        name: String,
        /// The database.
        path: PathBuf,
    },
    /// A document to import is not a fio result.
    #[error(transparent)]
    NotFio(#[from] NotFio),
    /// Something to store could not be serialised.
    #[error("cannot serialise {what}: {problem}")]
    Encode {
        /// What.
        what: &'static str,
        /// serde's message.
        problem: String,
    },
}

/// A document `iolab import` cannot read as a fio result.
#[derive(Debug, thiserror::Error)]
#[error("{origin}: {problem}")]
pub struct NotFio {
    /// The file, as the user named it.
    pub origin: String,
    /// What is wrong with it.
    pub problem: String,
}

impl StoreError {
    /// True when the user named something that is not there or not usable
    /// (exit code 2), false when the database failed under a command.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            StoreError::NoLocation
                | StoreError::Open { .. }
                | StoreError::Foreign { .. }
                | StoreError::ReadOnly { .. }
                | StoreError::NoRun { .. }
                | StoreError::NoSuchName { .. }
                | StoreError::NotFio(_)
        )
    }
}
