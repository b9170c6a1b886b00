//! The results database: every run, imported fio result and sweep, kept in
//! one SQLite file (WAL mode, so readers never block the writer and a killed
//! writer loses only its own uncommitted run).
//!
//! Where: `--db PATH`, else `$IOLAB_DB`, else `$XDG_DATA_HOME/iolab/iolab.db`
//! (`~/.local/share/iolab/iolab.db`).

pub mod import;
pub mod record;
pub mod schema;

use crate::sys::environment::Environment;
use crate::runner::RunResult;
use crate::analysis::summary::Summary;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why the database could not be used; the message names the file.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

/// Result of a store operation.
pub type StoreResult<T> = std::result::Result<T, StoreError>;

/// What kind of measurement a run holds.
pub mod kind {
    /// `iolab run`.
    pub const RUN: &str = "run";
    /// A fio JSON result brought in by `iolab import`.
    pub const FIO: &str = "fio";
    /// `iolab tree` (a [`crate::tree::TreeResult`]).
    pub const TREE: &str = "tree";
}

/// A run to be stored.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    /// See [`kind`].
    pub kind: &'a str,
    /// User label (`--label`).
    pub label: Option<&'a str>,
    /// Job names, comma-separated.
    pub name: String,
    /// The command line that produced it.
    pub command: String,
    /// Where it ran.
    pub env: &'a Environment,
    /// The full result, serialised (a [`RunResult`] for runs and imports).
    pub result_json: String,
    /// Key figures.
    pub summary: &'a Summary,
    /// The sweep it is a point of, and the point's parameters.
    pub sweep: Option<(i64, &'a BTreeMap<String, String>)>,
    /// The original document of an import.
    pub source_json: Option<&'a str>,
}

/// A stored run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredRun {
    /// Run id.
    pub id: i64,
    /// When it was stored, seconds since the epoch.
    pub created_unix: i64,
    /// User label.
    pub label: Option<String>,
    /// See [`kind`].
    pub kind: String,
    /// Job names.
    pub name: String,
    /// Command line.
    pub command: String,
    /// iolab version that stored it.
    pub iolab_version: String,
    /// Where it ran.
    pub env: Environment,
    /// Key figures.
    pub summary: Summary,
    /// Sweep id, if a sweep point.
    pub sweep_id: Option<i64>,
    /// Sweep parameters of this point.
    pub point: Option<BTreeMap<String, String>>,
    /// The serialised result.
    #[serde(skip)]
    pub result_json: String,
    /// Original document of an import.
    #[serde(skip)]
    pub source_json: Option<String>,
}

impl StoredRun {
    /// The result of a tree command.
    pub fn tree_result(&self) -> StoreResult<crate::tree::TreeResult> {
        serde_json::from_str(&self.result_json).map_err(|e| {
            StoreError(format!(
                "run {}: stored tree result unreadable: {e}",
                self.id
            ))
        })
    }

    /// The full result of a run or import.
    pub fn result(&self) -> StoreResult<RunResult> {
        if self.kind == kind::TREE {
            return Err(StoreError(format!(
                "run {} is a tree result, not an I/O run",
                self.id
            )));
        }
        serde_json::from_str(&self.result_json)
            .map_err(|e| StoreError(format!("run {}: stored result unreadable: {e}", self.id)))
    }
}

/// Which runs `history` lists.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Exact label.
    pub label: Option<String>,
    /// Substring of the job name.
    pub job: Option<String>,
    /// Stored at or after (unix seconds).
    pub since: Option<i64>,
    /// Stored before (unix seconds).
    pub until: Option<i64>,
    /// Runs of this sweep.
    pub sweep: Option<i64>,
    /// At most this many, newest first.
    pub limit: Option<usize>,
}

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
            .ok_or_else(|| StoreError("no results database: set --db, IOLAB_DB or HOME".into()))?;
        Ok(base.join("iolab").join("iolab.db"))
    }

    /// Opens (creating when missing) the database at `path` and brings its
    /// schema up to date. `create_dir`: create the parent directory (for
    /// the default location; a path the user names must have one).
    pub fn open(path: &Path, create_dir: bool) -> StoreResult<Store> {
        let shown = path.display();
        if path.is_dir() {
            return Err(StoreError(format!(
                "results database {shown} is a directory (give a file path)"
            )));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.is_dir()
        {
            if create_dir {
                std::fs::create_dir_all(dir).map_err(|e| {
                    StoreError(format!("cannot create directory {}: {e}", dir.display()))
                })?;
            } else {
                return Err(StoreError(format!(
                    "results database {shown}: directory {} does not exist",
                    dir.display()
                )));
            }
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| StoreError(format!("cannot open results database {shown}: {e}")))?;
        let ctx = |what: &str, e: rusqlite::Error| {
            let hint = if e.to_string().contains("not a database") {
                " (the file exists but is not an iolab database)"
            } else {
                ""
            };
            StoreError(format!("results database {shown}: {what}: {e}{hint}"))
        };
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

    fn err(&self, what: &str, e: rusqlite::Error) -> StoreError {
        StoreError(format!(
            "results database {}: {what}: {e}",
            self.path.display()
        ))
    }

    /// Applies the migrations this database lacks, each atomically.
    fn migrate(&mut self) -> StoreResult<()> {
        loop {
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(|e| {
                    StoreError(format!(
                        "results database {}: {e}{}",
                        self.path.display(),
                        if e.to_string().contains("not a database") {
                            " (the file exists but is not an iolab database)"
                        } else {
                            ""
                        }
                    ))
                })?;
            let v: i64 = tx
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(|e| StoreError(format!("{}: {e}", self.path.display())))?;
            if v > schema::VERSION {
                return Err(StoreError(format!(
                    "results database {} has schema version {v}, newer than this iolab's {}; use a newer iolab",
                    self.path.display(),
                    schema::VERSION
                )));
            }
            if v == schema::VERSION {
                return Ok(());
            }
            tx.execute_batch(schema::MIGRATIONS[v as usize])
                .and_then(|_| tx.execute_batch(&format!("PRAGMA user_version = {}", v + 1)))
                .and_then(|_| tx.commit())
                .map_err(|e| {
                    StoreError(format!(
                        "results database {}: migration to version {}: {e}",
                        self.path.display(),
                        v + 1
                    ))
                })?;
        }
    }

    /// Stores a run; returns its id.
    pub fn insert(&mut self, run: &NewRun) -> StoreResult<i64> {
        let env = serde_json::to_string(run.env).expect("environment serialises");
        let summary = serde_json::to_string(run.summary).expect("summary serialises");
        let point = run
            .sweep
            .map(|(_, p)| serde_json::to_string(p).expect("point serialises"));
        let path = self.path.clone();
        let e = |e: rusqlite::Error| {
            StoreError(format!(
                "results database {}: store run: {e}",
                path.display()
            ))
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(e)?;
        tx.execute(
            "INSERT INTO runs (created_unix, label, kind, name, command, iolab_version,
                env_json, result_json, summary_json, sweep_id, point_json, source_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                now_unix(),
                run.label,
                run.kind,
                run.name,
                run.command,
                env!("CARGO_PKG_VERSION"),
                env,
                run.result_json,
                summary,
                run.sweep.map(|s| s.0),
                point,
                run.source_json,
            ],
        )
        .map_err(e)?;
        let id = tx.last_insert_rowid();
        test_pause();
        tx.commit().map_err(e)?;
        Ok(id)
    }

    /// Starts a sweep; returns its id.
    pub fn new_sweep(
        &mut self,
        label: Option<&str>,
        command: &str,
        vary: &serde_json::Value,
    ) -> StoreResult<i64> {
        self.conn
            .execute(
                "INSERT INTO sweeps (created_unix, label, command, vary_json) VALUES (?1, ?2, ?3, ?4)",
                params![now_unix(), label, command, vary.to_string()],
            )
            .map_err(|e| self.err("store sweep", e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// One run, or `None` when no run has that id.
    pub fn get(&self, id: i64) -> StoreResult<Option<StoredRun>> {
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM runs WHERE id = ?1"),
                [id],
                row_to_run,
            )
            .optional()
            .map_err(|e| self.err(&format!("read run {id}"), e))?
            .transpose()
    }

    /// Runs matching `f`, newest first.
    pub fn list(&self, f: &Filter) -> StoreResult<Vec<StoredRun>> {
        let mut sql = format!("SELECT {COLUMNS} FROM runs WHERE 1=1");
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        if let Some(l) = &f.label {
            sql.push_str(" AND label = ?");
            args.push(l.clone().into());
        }
        if let Some(j) = &f.job {
            sql.push_str(" AND instr(name, ?) > 0");
            args.push(j.clone().into());
        }
        if let Some(s) = f.since {
            sql.push_str(" AND created_unix >= ?");
            args.push(s.into());
        }
        if let Some(u) = f.until {
            sql.push_str(" AND created_unix < ?");
            args.push(u.into());
        }
        if let Some(s) = f.sweep {
            sql.push_str(" AND sweep_id = ?");
            args.push(s.into());
        }
        sql.push_str(" ORDER BY id DESC");
        if let Some(n) = f.limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        let mut stmt = self
            .conn
            .prepare(&sql)
            .map_err(|e| self.err("list runs", e))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args), row_to_run)
            .map_err(|e| self.err("list runs", e))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(r.map_err(|e| self.err("list runs", e))??);
        }
        Ok(out)
    }

    /// Ids of the runs with `label`, oldest first.
    pub fn ids_with_label(&self, label: &str) -> StoreResult<Vec<i64>> {
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM runs WHERE label = ?1 ORDER BY id")
            .map_err(|e| self.err("find label", e))?;
        let ids = stmt
            .query_map([label], |r| r.get(0))
            .and_then(|rows| rows.collect::<Result<Vec<i64>, _>>())
            .map_err(|e| self.err("find label", e))?;
        Ok(ids)
    }

    /// Deletes runs; returns how many existed.
    pub fn remove(&mut self, ids: &[i64]) -> StoreResult<usize> {
        let path = self.path.clone();
        let e = |e: rusqlite::Error| {
            StoreError(format!("results database {}: remove: {e}", path.display()))
        };
        let tx = self.conn.transaction().map_err(e)?;
        let mut n = 0;
        for id in ids {
            n += tx
                .execute("DELETE FROM runs WHERE id = ?1", [id])
                .map_err(e)?;
        }
        tx.commit().map_err(e)?;
        Ok(n)
    }

    /// `PRAGMA integrity_check`: "ok" when the file is sound.
    pub fn integrity(&self) -> StoreResult<String> {
        self.conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(|e| self.err("integrity check", e))
    }
}

const COLUMNS: &str = "id, created_unix, label, kind, name, command, iolab_version, env_json, \
                       summary_json, sweep_id, point_json, result_json, source_json";

fn row_to_run(r: &rusqlite::Row) -> rusqlite::Result<StoreResult<StoredRun>> {
    let id: i64 = r.get(0)?;
    let env: String = r.get(7)?;
    let summary: String = r.get(8)?;
    let point: Option<String> = r.get(10)?;
    let bad = |what: &str, e: serde_json::Error| StoreError(format!("run {id}: {what}: {e}"));
    let parsed = (|| {
        Ok::<_, StoreError>((
            serde_json::from_str(&env).map_err(|e| bad("environment", e))?,
            serde_json::from_str(&summary).map_err(|e| bad("summary", e))?,
            point
                .map(|p| serde_json::from_str(&p))
                .transpose()
                .map_err(|e| bad("sweep point", e))?,
        ))
    })();
    let (env, summary, point) = match parsed {
        Ok(v) => v,
        Err(e) => return Ok(Err(e)),
    };
    Ok(Ok(StoredRun {
        id,
        created_unix: r.get(1)?,
        label: r.get(2)?,
        kind: r.get(3)?,
        name: r.get(4)?,
        command: r.get(5)?,
        iolab_version: r.get(6)?,
        env,
        summary,
        sweep_id: r.get(9)?,
        point,
        result_json: r.get(11)?,
        source_json: r.get(12)?,
    }))
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Test hook: with `IOLAB_TEST_STORE_PAUSE=FILE`, create FILE inside the
/// insert transaction and wait there 30 s, so a test can kill the process
/// mid-write and check that the database survives.
fn test_pause() {
    if let Some(marker) = std::env::var_os("IOLAB_TEST_STORE_PAUSE") {
        let _ = std::fs::write(&marker, b"in transaction\n");
        std::thread::sleep(Duration::from_secs(30));
    }
}
