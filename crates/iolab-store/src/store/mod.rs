//! The results database: every run, imported fio result and sweep, kept in
//! one SQLite file (WAL mode, so readers never block the writer and a killed
//! writer loses only its own uncommitted run). Commands that store open it
//! with [`Store::open`]; commands that only read with
//! [`Store::open_read_only`], which works on a read-only copy too.
//!
//! Where: `--db PATH`, else `$IOLAB_DB`, else `$XDG_DATA_HOME/iolab/iolab.db`
//! (`~/.local/share/iolab/iolab.db`).

mod error;
mod hosts;
mod identity;
pub mod import;
mod open;
pub mod record;
mod runs;
pub mod schema;
mod status;

pub use error::StoreError;
pub use hosts::HostRow;
pub use runs::{Filter, NewRun, StoredRun, Target, encode, kind};
pub use status::Status;

use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Result of a store operation.
pub type StoreResult<T> = std::result::Result<T, StoreError>;

/// An open results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The schema version on disk (older than [`schema::VERSION`] only
    /// when opened to read).
    version: i64,
}

impl Store {
    /// The database path from `--db`, `$IOLAB_DB` or the XDG data directory.
    pub fn default_path(db: Option<&Path>) -> StoreResult<PathBuf> {
        if let Some(p) = db {
            return Ok(p.to_path_buf());
        }
        if let Some(p) = std::env::var_os("IOLAB_DB").filter(|p| !p.is_empty()) {
            return Ok(PathBuf::from(p));
        }
        let base = std::env::var_os("XDG_DATA_HOME")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .ok_or(StoreError::NoLocation)?;
        Ok(base.join("iolab").join("iolab.db"))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version on disk.
    pub fn version(&self) -> StoreResult<i64> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err("read schema version", e))
    }

    /// A failed SQL operation `op` on this database.
    pub(crate) fn err(&self, op: &str, source: rusqlite::Error) -> StoreError {
        StoreError::Sql {
            path: self.path.clone(),
            op: op.to_string(),
            source,
        }
    }

    /// Applies the migrations this database lacks, each atomically.
    fn migrate(&mut self) -> StoreResult<()> {
        loop {
            let path = self.path.clone();
            let bad = |what: &str, e: rusqlite::Error| StoreError::Open {
                path: path.clone(),
                problem: open_problem(what, &e),
            };
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(|e| bad("begin", e))?;
            let v: i64 = tx
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(|e| bad("read schema version", e))?;
            let pending = schema::pending(v).map_err(|e| StoreError::Open {
                path: path.clone(),
                problem: e.to_string(),
            })?;
            let Some(migration) = pending.first() else {
                self.version = v;
                return Ok(());
            };
            tx.execute_batch(migration)
                .and_then(|_| tx.execute_batch(&format!("PRAGMA user_version = {}", v + 1)))
                .and_then(|_| tx.commit())
                .map_err(|e| bad(&format!("migration to version {}", v + 1), e))?;
        }
    }
}

/// SQLite's message, with a hint when the file is not a database at all.
fn open_problem(what: &str, e: &rusqlite::Error) -> String {
    let hint = if e.to_string().contains("not a database") {
        " (the file exists but is not an iolab database)"
    } else {
        ""
    };
    format!("{what}: {e}{hint}")
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Seconds since the epoch, now.
pub(crate) fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Test hook: with `IOLAB_TEST_STORE_PAUSE=FILE`, create FILE inside the
/// insert transaction and wait there 30 s, so a test can kill the process
/// mid-write and check that the database survives.
pub(crate) fn test_pause() {
    if let Some(marker) = std::env::var_os("IOLAB_TEST_STORE_PAUSE") {
        let _ = std::fs::write(&marker, b"in transaction\n");
        std::thread::sleep(Duration::from_secs(30));
    }
}
