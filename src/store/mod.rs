//! The results database: every run, imported fio result and sweep, kept in
//! one SQLite file (WAL mode, so readers never block the writer and a killed
//! writer loses only its own uncommitted run).
//!
//! Where: `--db PATH`, else `$IOLAB_DB`, else `$XDG_DATA_HOME/iolab/iolab.db`
//! (`~/.local/share/iolab/iolab.db`).

mod error;
pub mod import;
pub mod record;
mod runs;
pub mod schema;

pub use error::StoreError;
pub use runs::{Filter, NewRun, StoredRun, Target, kind};

use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Result of a store operation.
pub type StoreResult<T> = std::result::Result<T, StoreError>;

/// An open results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
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

    /// Opens (creating when missing) the database at `path` and brings its
    /// schema up to date. `create_dir`: create the parent directory (for
    /// the default location; a path the user names must have one).
    pub fn open(path: &Path, create_dir: bool) -> StoreResult<Store> {
        let bad = |problem: String| StoreError::Open {
            path: path.to_path_buf(),
            problem,
        };
        if path.is_dir() {
            return Err(bad("is a directory (give a file path)".into()));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.is_dir()
        {
            if create_dir {
                std::fs::create_dir_all(dir)
                    .map_err(|e| bad(format!("cannot create directory {}: {e}", dir.display())))?;
            } else {
                return Err(bad(format!("directory {} does not exist", dir.display())));
            }
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| bad(format!("cannot open: {e}")))?;
        let ctx = |what: &str, e: rusqlite::Error| bad(open_problem(what, &e));
        conn.busy_timeout(Duration::from_secs(60))
            .map_err(|e| ctx("busy timeout", e))?;
        // Switching to WAL needs a moment without other writers; retry.
        let mut tries = 0;
        loop {
            match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)) {
                Ok(_) => break,
                Err(e) if tries < 200 && is_busy(&e) => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(25));
                }
                Err(e) => return Err(ctx("cannot use WAL mode", e)),
            }
        }
        conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            .map_err(|e| ctx("settings", e))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.migrate()?;
        Ok(store)
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
            let pending = schema::pending(v).map_err(|problem| StoreError::Open {
                path: path.clone(),
                problem,
            })?;
            let Some(migration) = pending.first() else {
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
