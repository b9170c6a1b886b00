//! Shared by the commands that use the results database: opening it, naming
//! runs (id or label), and reading dates.

use chrono::{Local, NaiveDate, NaiveDateTime, TimeZone};
use iolab::store::{Store, StoredRun};
use std::path::{Path, PathBuf};

/// Opens the database from `--db`, `$IOLAB_DB` or the default location
/// (whose directory is created; a named path's directory must exist).
pub fn open(db: Option<&Path>) -> Result<Store, String> {
    let named = db.is_some() || std::env::var_os("IOLAB_DB").is_some_and(|v| !v.is_empty());
    let path = Store::default_path(db).map_err(|e| e.to_string())?;
    Store::open(&path, !named).map_err(|e| e.to_string())
}

/// Where results go, for the commands that store them.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreOpts {
    /// Label stored with the results (for `history --label`, `compare LABEL`).
    #[arg(long, global = true)]
    pub label: Option<String>,
    /// Do not store the results.
    #[arg(long, global = true)]
    pub no_store: bool,
    /// Results database (default: $IOLAB_DB, else ~/.local/share/iolab/iolab.db).
    #[arg(long, value_name = "PATH", global = true)]
    pub db: Option<PathBuf>,
}

impl StoreOpts {
    /// The database to store into, or `None` with `--no-store`.
    pub fn open(&self) -> Result<Option<Store>, String> {
        open_unless(self.no_store, self.db.as_deref())
    }

    /// The label, if given.
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }
}

/// The database to store into, or `None` with `--no-store`; the error
/// suggests `--no-store`.
pub fn open_unless(no_store: bool, db: Option<&Path>) -> Result<Option<Store>, String> {
    if no_store {
        return Ok(None);
    }
    open(db)
        .map(Some)
        .map_err(|e| format!("{e} (or use --no-store)"))
}

/// A run by id; the error says which id is missing.
pub fn get(store: &Store, id: i64) -> Result<StoredRun, String> {
    store
        .get(id)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no run {id} in {}", store.path().display()))
}

/// Parses a run id argument.
pub fn parse_id(s: &str) -> Result<i64, String> {
    s.parse::<i64>()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| format!("'{s}' is not a run id (a positive number from `iolab history`)"))
}

/// `2026-11-22`, `2026-11-22 14:30[:00]` (local time), or an age: `90m`,
/// `2h`, `7d` ago. Returns unix seconds.
pub fn parse_when(opt: &str, s: &str) -> Result<i64, String> {
    let s = s.trim();
    if let Some((n, unit)) = s
        .find(|c: char| !c.is_ascii_digit())
        .filter(|&i| i > 0)
        .map(|i| s.split_at(i))
        && let Ok(n) = n.parse::<i64>()
    {
        let secs = match unit {
            "s" => 1,
            "m" | "min" => 60,
            "h" => 3600,
            "d" => 86400,
            "w" => 7 * 86400,
            _ => 0,
        };
        if secs > 0 {
            return Ok(Local::now().timestamp() - n * secs);
        }
    }
    let local = |dt: NaiveDateTime| {
        Local
            .from_local_datetime(&dt)
            .earliest()
            .map(|d| d.timestamp())
    };
    for f in [
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(s, f)
            && let Some(t) = local(dt)
        {
            return Ok(t);
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d")
        && let Some(t) = d.and_hms_opt(0, 0, 0).and_then(local)
    {
        return Ok(t);
    }
    Err(format!(
        "{opt} '{s}': expected a date (2026-11-22, '2026-11-22 14:30') or an age (90m, 2h, 7d)"
    ))
}

/// Unix seconds as local `YYYY-MM-DD HH:MM`.
pub fn when(unix: i64) -> String {
    Local.timestamp_opt(unix, 0).single().map_or_else(
        || unix.to_string(),
        |d| d.format("%Y-%m-%d %H:%M").to_string(),
    )
}
