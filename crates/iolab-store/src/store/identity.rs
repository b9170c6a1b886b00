//! Whose database a file is, found without changing anything, before
//! iolab writes to it (the switch to WAL included): the SQLite header is
//! read as plain bytes, and only an SQLite file that names no application
//! is opened, read-only, to look for iolab's tables. A file that is not
//! iolab's is then refused and stays byte for byte as it was, with no
//! `-wal` or `-shm` beside it.

use super::runs::COLUMNS;
use super::schema;
use rusqlite::{Connection, OpenFlags};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What the database path holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing yet: the database is created there.
    Missing,
    /// A zero-length file, or an SQLite database with no tables and no
    /// schema version: nothing to lose, it is initialised.
    Empty,
    /// iolab's: stamped with [`schema::APPLICATION_ID`], or from before
    /// the stamp (schema 1 or 2) with iolab's `runs` table.
    Iolab,
    /// Something else; why it is not iolab's.
    Foreign(String),
}

/// The first 16 bytes of every SQLite database.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Looks at `path` without writing anything there.
pub(crate) fn inspect(path: &Path) -> std::io::Result<Found> {
    let meta = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Missing),
        m => m?,
    };
    if !meta.is_file() {
        return Ok(Found::Foreign("not a regular file".into()));
    }
    let mut head = Vec::with_capacity(100);
    std::fs::File::open(path)?
        .take(100)
        .read_to_end(&mut head)?;
    if head.is_empty() {
        return Ok(Found::Empty);
    }
    if head.len() < 100 || !head.starts_with(MAGIC) {
        return Ok(Found::Foreign("not an SQLite database".into()));
    }
    let app = i32::from_be_bytes([head[68], head[69], head[70], head[71]]);
    if app == schema::APPLICATION_ID {
        return Ok(Found::Iolab);
    }
    if app != 0 {
        return Ok(Found::Foreign(foreign_app(app)));
    }
    // Bytes 18 and 19 are 2 in WAL mode.
    Ok(probe(path, head[18] == 2))
}

fn foreign_app(app: i32) -> String {
    format!("another program's SQLite database: application_id {app:#010x}")
}

/// An SQLite file whose header names no application: iolab's from before
/// the stamp, an empty one, or another program's. Its header may be older
/// than its `-wal`, so the answer comes from SQLite, opened read-only.
fn probe(path: &Path, wal_mode: bool) -> Found {
    // Without a live -wal the file alone is the database, and reading it
    // as immutable creates no -wal or -shm; with one, SQLite must read it.
    let conn = match connect_read_only(path, wal_mode && !wal_in_use(path)) {
        Ok(c) => c,
        Err(e) => return Found::Foreign(format!("cannot be read as a database: {e}")),
    };
    let facts = || -> rusqlite::Result<(i32, i64, i64, Vec<String>)> {
        let app = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
        let version = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let objects = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
        let mut stmt = conn.prepare("SELECT name FROM pragma_table_info('runs')")?;
        let cols = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok((app, version, objects, cols))
    };
    match facts() {
        Err(e) => Found::Foreign(format!("cannot be read as a database: {e}")),
        Ok((app, ..)) if app == schema::APPLICATION_ID => Found::Iolab,
        Ok((app, ..)) if app != 0 => Found::Foreign(foreign_app(app)),
        Ok((_, 0, 0, _)) => Found::Empty,
        Ok((_, v, _, cols)) if (1..schema::STAMPED).contains(&v) && has_runs_v1(&cols) => {
            Found::Iolab
        }
        Ok(_) => Found::Foreign("an SQLite database without iolab's tables".into()),
    }
}

/// `cols` (of a `runs` table) hold every column of iolab's schema 1.
fn has_runs_v1(cols: &[String]) -> bool {
    COLUMNS
        .iter()
        .filter(|c| !schema::ADDED.iter().any(|a| a.column == **c))
        .all(|c| cols.iter().any(|k| k == c))
}

/// The `-wal` file beside `path`.
pub(crate) fn wal_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push("-wal");
    PathBuf::from(p)
}

/// True when a non-empty `-wal` beside `path` may hold committed pages
/// the database file does not have yet.
pub(crate) fn wal_in_use(path: &Path) -> bool {
    std::fs::metadata(wal_path(path)).is_ok_and(|m| m.len() > 0)
}

/// Opens `path` read-only. `immutable`: also without locks, `-wal` or
/// `-shm` (SQLite's `immutable=1`), which is right only for a file no one
/// writes and whose `-wal`, if any, is empty.
pub(crate) fn connect_read_only(path: &Path, immutable: bool) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let uri = format!(
        "{}?mode=ro{}",
        file_uri(path),
        if immutable { "&immutable=1" } else { "" }
    );
    Connection::open_with_flags(uri, flags)
}

/// `path` as an SQLite `file:` URI: every byte outside the unreserved
/// characters and `/` percent-encoded (so `?`, `#` and `%` in names work).
fn file_uri(path: &Path) -> String {
    let mut s = String::from(if path.is_absolute() {
        "file://"
    } else {
        "file:"
    });
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_escape_what_sqlite_would_parse() {
        assert_eq!(file_uri(Path::new("/a/b c?.db")), "file:///a/b%20c%3F.db");
        assert_eq!(file_uri(Path::new("r#1%.db")), "file:r%231%25.db");
    }

    #[test]
    fn files_are_told_apart_by_their_header() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x");
        assert_eq!(inspect(&p).unwrap(), Found::Missing);
        std::fs::write(&p, b"").unwrap();
        assert_eq!(inspect(&p).unwrap(), Found::Empty);
        std::fs::write(&p, vec![b'x'; 4096]).unwrap();
        assert!(matches!(inspect(&p).unwrap(), Found::Foreign(w) if w.contains("not an SQLite")));
        std::fs::remove_file(&p).unwrap();
        let c = Connection::open(&p).unwrap();
        c.execute_batch("PRAGMA application_id = 7; CREATE TABLE t (x);")
            .unwrap();
        drop(c);
        assert!(matches!(inspect(&p).unwrap(), Found::Foreign(w) if w.contains("0x00000007")));
        let c = Connection::open(&p).unwrap();
        c.execute_batch("PRAGMA application_id = 0;").unwrap();
        drop(c);
        assert!(matches!(inspect(&p).unwrap(), Found::Foreign(w) if w.contains("without iolab's")));
    }
}
