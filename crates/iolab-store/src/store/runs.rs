//! The runs table: storing a run or sweep, reading runs back by id, label
//! or filter, deleting them.

use super::{Status, Store, StoreError, StoreResult, now_unix, schema, test_pause};
use crate::metrics::figures::Summary;
use crate::runner::RunResult;
use crate::sys::environment::Environment;
use rusqlite::{OptionalExtension, params};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The kinds of stored results (the `kind` column of a run).
pub mod kind {
    /// `iolab run`.
    pub const RUN: &str = "run";
    /// A fio JSON result brought in by `iolab import`.
    pub const FIO: &str = "fio";
    /// `iolab tree` (a [`crate::tree::TreeResult`]).
    pub const TREE: &str = "tree";
    /// `iolab trace` (iolab_trace's `StoredTrace`).
    pub const TRACE: &str = "trace";
    /// `iolab exec` (iolab's `exec::ExecResult`).
    pub const EXEC: &str = "exec";
    /// `iolab calibrate` (iolab's `explain::ceilings::Ceilings`).
    pub const CALIBRATION: &str = "calibration";
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
    /// How it ended.
    pub status: Status,
    /// Its hosts (ranks), for a run over many hosts; empty otherwise.
    pub hosts: &'a [crate::dist::HostRun],
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
    /// How it ended (an interrupted run's figures cover only the part
    /// that ran).
    #[serde(default)]
    pub status: Status,
}

impl StoredRun {
    /// The result of a tree command.
    pub fn tree_result(&self) -> StoreResult<crate::tree::TreeResult> {
        self.decode_as("stored tree result")
    }

    /// The stored result of a run of kind `of` (an exec's, a trace's),
    /// decoded as `T`; an error naming both kinds for a run of another.
    /// The one decoder of the results other layers store here.
    pub fn decode<T: DeserializeOwned>(&self, of: &str, what: &'static str) -> StoreResult<T> {
        if self.kind != of {
            let a = if of.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            return Err(StoreError::Decode {
                id: self.id,
                what,
                problem: format!("run {} is a {}, not {a} {of}", self.id, self.kind),
            });
        }
        self.decode_as(what)
    }

    /// The stored result as `T`, whatever the kind (`what` names it in
    /// the error).
    pub fn decode_as<T: DeserializeOwned>(&self, what: &'static str) -> StoreResult<T> {
        serde_json::from_str(&self.result_json).map_err(|e| StoreError::Decode {
            id: self.id,
            what,
            problem: e.to_string(),
        })
    }

    /// The full result of a run or import.
    pub fn result(&self) -> StoreResult<RunResult> {
        if [kind::TREE, kind::TRACE, kind::EXEC].contains(&self.kind.as_str()) {
            return Err(StoreError::Decode {
                id: self.id,
                what: "I/O result",
                problem: format!(
                    "it is the result of `iolab {}`, not of a job: `iolab show {}` or `iolab report {}` shows it",
                    self.kind, self.id, self.id
                ),
            });
        }
        self.decode_as("stored result")
    }
}

/// `value` as the JSON a run stores as its result (`what` names it in the
/// error): the one encoder, beside [`StoredRun::decode`].
pub fn encode<T: Serialize>(value: &T, what: &'static str) -> StoreResult<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Encode {
        what,
        problem: e.to_string(),
    })
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

/// Where a command's results go: the database, the label and the command
/// line stored with each run.
pub struct Target<'a> {
    /// The database.
    pub store: &'a mut Store,
    /// `--label`.
    pub label: Option<&'a str>,
    /// The command line, as the user typed it.
    pub command: &'a str,
}

impl Store {
    /// Stores a run; returns its id.
    pub fn insert(&mut self, run: &NewRun) -> StoreResult<i64> {
        let env = serde_json::to_string(run.env).expect("environment serialises");
        let summary = serde_json::to_string(run.summary).expect("summary serialises");
        let point = run
            .sweep
            .map(|(_, p)| serde_json::to_string(p).expect("point serialises"));
        let path = self.path.clone();
        let e = |source| StoreError::Sql {
            path: path.clone(),
            op: "store run".into(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(e)?;
        tx.execute(
            "INSERT INTO runs (created_unix, label, kind, name, command, iolab_version,
                env_json, result_json, summary_json, sweep_id, point_json, source_json, status)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
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
                run.status.as_str(),
            ],
        )
        .map_err(e)?;
        let id = tx.last_insert_rowid();
        super::hosts::insert(&tx, id, run.hosts).map_err(e)?;
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
                &format!("SELECT {} FROM runs WHERE id = ?1", self.columns()),
                [id],
                row_to_run,
            )
            .optional()
            .map_err(|e| self.err(&format!("read run {id}"), e))?
            .transpose()
    }

    /// One run; the error names the id and the database when there is none.
    pub fn run(&self, id: i64) -> StoreResult<StoredRun> {
        self.get(id)?.ok_or_else(|| StoreError::NoRun {
            id,
            path: self.path.clone(),
        })
    }

    /// Runs matching `f`, newest first.
    pub fn list(&self, f: &Filter) -> StoreResult<Vec<StoredRun>> {
        let mut sql = format!("SELECT {} FROM runs WHERE 1=1", self.columns());
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
            sql.push_str(&format!(" AND {} = ?", self.col("sweep_id")));
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

    /// The runs `names` stand for, in order: a number is a run id (which
    /// must exist), anything else a label (all its runs, oldest first).
    pub fn resolve(&self, names: &[String]) -> StoreResult<Vec<i64>> {
        let mut ids = Vec::new();
        for n in names {
            if let Ok(id) = n.parse::<i64>() {
                self.run(id)?;
                ids.push(id);
                continue;
            }
            let with = self.ids_with_label(n)?;
            if with.is_empty() {
                return Err(StoreError::NoSuchName {
                    name: n.clone(),
                    path: self.path.clone(),
                });
            }
            ids.extend(with);
        }
        Ok(ids)
    }

    /// Deletes runs; returns how many existed.
    pub fn remove(&mut self, ids: &[i64]) -> StoreResult<usize> {
        let path = self.path.clone();
        let e = |source| StoreError::Sql {
            path: path.clone(),
            op: "remove".into(),
            source,
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

/// The columns a [`StoredRun`] is read from, in [`row_to_run`]'s order.
pub(crate) const COLUMNS: [&str; 14] = [
    "id",
    "created_unix",
    "label",
    "kind",
    "name",
    "command",
    "iolab_version",
    "env_json",
    "summary_json",
    "sweep_id",
    "point_json",
    "result_json",
    "source_json",
    "status",
];

impl Store {
    /// Column `name` of `runs`, or what stands for it when this
    /// database's schema is older than the column (a database opened only
    /// to read is not migrated; see [`schema::ADDED`]).
    fn col(&self, name: &'static str) -> &'static str {
        match schema::ADDED.iter().find(|a| a.column == name) {
            Some(a) if self.version < a.version => a.before,
            _ => name,
        }
    }

    /// The select list of [`COLUMNS`].
    fn columns(&self) -> String {
        COLUMNS.map(|c| self.col(c)).join(", ")
    }
}

fn row_to_run(r: &rusqlite::Row) -> rusqlite::Result<StoreResult<StoredRun>> {
    let id: i64 = r.get(0)?;
    let env: String = r.get(7)?;
    let summary: String = r.get(8)?;
    let point: Option<String> = r.get(10)?;
    let status: String = r.get(13)?;
    let bad = |what: &'static str, e: serde_json::Error| StoreError::Decode {
        id,
        what,
        problem: e.to_string(),
    };
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
    let Some(status) = Status::parse(&status) else {
        return Ok(Err(StoreError::Decode {
            id,
            what: "status",
            problem: format!("'{status}' is not one iolab stores"),
        }));
    };
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
        status,
    }))
}
