//! Opening the database: to store (checked to be iolab's and writable
//! before anything is written, then WAL mode and the migrations) or only to
//! read (nothing written, so a read-only copy works too).

use super::identity::{self, Found};
use super::{Store, StoreError, StoreResult, is_busy, open_problem, schema};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::time::Duration;

impl Store {
    /// Opens (creating when missing) the database at `path` to store
    /// results, and brings its schema up to date. `create_dir`: create the
    /// parent directory (for the default location; a path the user names
    /// must have one). A file that is not iolab's, or that cannot be
    /// written, is refused before anything is written to it.
    pub fn open(path: &Path, create_dir: bool) -> StoreResult<Store> {
        let bad = |problem: String| StoreError::Open {
            path: path.to_path_buf(),
            problem,
        };
        check_place(path, create_dir)?;
        if let Found::Foreign(why) = inspect(path)? {
            return Err(foreign(path, why));
        }
        writable(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| bad(format!("cannot open: {e}")))?;
        let ctx = |what: &str, e: rusqlite::Error| bad(open_problem(what, &e));
        conn.busy_timeout(Duration::from_secs(60))
            .map_err(|e| ctx("busy timeout", e))?;
        // A schema iolab never wrote is refused before the switch to WAL.
        let mut store = Store::with(conn, path)?;
        // Switching to WAL needs a moment without other writers; retry.
        let mut tries = 0;
        loop {
            let mode = "PRAGMA journal_mode=WAL";
            match store.conn.query_row(mode, [], |r| r.get::<_, String>(0)) {
                Ok(_) => break,
                Err(e) if tries < 200 && is_busy(&e) => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(25));
                }
                Err(e) => return Err(ctx("cannot use WAL mode", e)),
            }
        }
        store
            .conn
            .execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            .map_err(|e| ctx("settings", e))?;
        store.migrate()?;
        Ok(store)
    }

    /// Opens the database at `path` only to read it: nothing is created,
    /// migrated or written (an older schema is read as it is). Works on a
    /// read-only file in a read-only directory; a missing or empty file
    /// reads as a database without runs.
    pub fn open_read_only(path: &Path) -> StoreResult<Store> {
        let bad = |what: &str, e: rusqlite::Error| StoreError::Open {
            path: path.to_path_buf(),
            problem: open_problem(what, &e),
        };
        if path.is_dir() {
            return Err(is_a_directory(path));
        }
        match inspect(path)? {
            Found::Foreign(why) => return Err(foreign(path, why)),
            Found::Missing | Found::Empty => return Store::empty(path),
            Found::Iolab => {}
        }
        let conn = if writable(path).is_ok() {
            // Read-write but query-only: no write can happen, and the last
            // one to close still removes the -wal and -shm files.
            let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let c = Connection::open_with_flags(path, flags).map_err(|e| bad("cannot open", e))?;
            c.execute_batch("PRAGMA query_only = ON")
                .map_err(|e| bad("query-only mode", e))?;
            c
        } else {
            read_only(path).map_err(|e| bad("cannot read", e))?
        };
        conn.busy_timeout(Duration::from_secs(60))
            .map_err(|e| bad("busy timeout", e))?;
        Store::with(conn, path)
    }

    /// A database without runs, in memory, for reading a `path` that does
    /// not exist yet (or is empty): nothing is created there.
    fn empty(path: &Path) -> StoreResult<Store> {
        let conn = Connection::open_in_memory().map_err(|e| StoreError::Open {
            path: path.to_path_buf(),
            problem: open_problem("in memory", &e),
        })?;
        let mut store = Store::with(conn, path)?;
        store.migrate()?;
        Ok(store)
    }

    /// `conn` as the store of `path`, if its schema version is one iolab wrote.
    fn with(conn: Connection, path: &Path) -> StoreResult<Store> {
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            version: 0,
        };
        store.version = store.version().map_err(|e| match e {
            StoreError::Sql { source, .. } => StoreError::Open {
                path: path.to_path_buf(),
                problem: open_problem("read schema version", &source),
            },
            e => e,
        })?;
        schema::pending(store.version).map_err(|e| StoreError::Open {
            path: path.to_path_buf(),
            problem: e.to_string(),
        })?;
        Ok(store)
    }
}

/// A read-only connection that can read: SQLite needs the `-shm` file of
/// a WAL database, which it cannot create in a directory it may not write;
/// without a live `-wal` the file alone is the database, so it is then read
/// as immutable (no locks, no `-wal` or `-shm`).
fn read_only(path: &Path) -> rusqlite::Result<Connection> {
    let plain = identity::connect_read_only(path, false).and_then(|c| {
        c.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })?;
        Ok(c)
    });
    match plain {
        Err(_) if !identity::wal_in_use(path) => identity::connect_read_only(path, true),
        other => other,
    }
}

fn inspect(path: &Path) -> StoreResult<Found> {
    identity::inspect(path).map_err(|e| StoreError::Open {
        path: path.to_path_buf(),
        problem: format!("cannot read: {e}"),
    })
}

fn foreign(path: &Path, why: String) -> StoreError {
    StoreError::Foreign {
        path: path.to_path_buf(),
        why,
    }
}

fn is_a_directory(path: &Path) -> StoreError {
    StoreError::Open {
        path: path.to_path_buf(),
        problem: "is a directory (give a file path)".into(),
    }
}

/// `path` names a file in a directory that exists (created when asked).
fn check_place(path: &Path, create_dir: bool) -> StoreResult<()> {
    let bad = |problem: String| StoreError::Open {
        path: path.to_path_buf(),
        problem,
    };
    if path.is_dir() {
        return Err(is_a_directory(path));
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
    Ok(())
}

/// The database file (if it exists) and its directory (where SQLite keeps
/// the `-wal` and `-shm` files) can be written by this process; else
/// [`StoreError::ReadOnly`] saying which cannot.
fn writable(path: &Path) -> StoreResult<()> {
    let read_only = |why: String| StoreError::ReadOnly {
        path: path.to_path_buf(),
        why,
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file = path.exists().then_some((path, "file"));
    for (p, what) in file.into_iter().chain([(dir, "directory")]) {
        let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(p.as_os_str()))
            .map_err(|_| read_only(format!("the {what} name holds a NUL byte")))?;
        // SAFETY: a valid C string; access() only reads it.
        if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(read_only(format!(
                "cannot write the {what} {}: {e}",
                p.display()
            )));
        }
    }
    Ok(())
}
