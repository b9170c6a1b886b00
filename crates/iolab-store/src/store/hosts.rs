//! The `run_hosts` table (schema 6): a row per host (rank) of a run or tree
//! over many hosts, written with the run in its transaction.

use crate::dist::HostRun;
use crate::runner::{OpStats, Totals};
use rusqlite::{Transaction, params};

/// Writes a row per host of run `id`.
pub fn insert(tx: &Transaction, id: i64, hosts: &[HostRun]) -> rusqlite::Result<()> {
    let starts = crate::dist::merge::start_offsets(hosts);
    for (h, start) in hosts.iter().zip(starts) {
        let t = h.totals.as_ref();
        let dir = |pick: fn(&Totals) -> &OpStats| {
            t.map(|t| {
                let s = pick(t);
                let clat = s.clat_or_lat();
                (
                    s.ios() as i64,
                    s.bytes as i64,
                    t.iops(s),
                    (clat.count() > 0).then(|| clat.mean()),
                    (clat.count() > 0).then(|| clat.percentile(99.0) as i64),
                )
            })
        };
        let (r, w) = (dir(|t| &t.read), dir(|t| &t.write));
        let fig = |k: &str| h.figures.as_ref().and_then(|f| f.get(k).copied());
        tx.execute(
            "INSERT INTO run_hosts (run_id, rank, host, hostname, status, error,
                start_offset_ns, clock_offset_ns, runtime_ns, ops, iops, time_s,
                read_ios, read_bytes, read_iops, read_clat_mean_ns, read_clat_p99_ns,
                write_ios, write_bytes, write_iops, write_clat_mean_ns, write_clat_p99_ns,
                counters_json, env_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,
                ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)",
            params![
                id,
                h.rank,
                h.host,
                h.hostname,
                if h.failed.is_some() { "failed" } else { "ok" },
                h.failed,
                start.map(|s| s as i64),
                h.clock_offset_ns,
                t.map(|t| t.runtime_ns as i64),
                fig("ops").map(|v| v.round() as i64),
                fig("iops"),
                fig("time_s"),
                r.map(|r| r.0),
                r.map(|r| r.1),
                r.map(|r| r.2),
                r.and_then(|r| r.3),
                r.and_then(|r| r.4),
                w.map(|w| w.0),
                w.map(|w| w.1),
                w.map(|w| w.2),
                w.and_then(|w| w.3),
                w.and_then(|w| w.4),
                serde_json::to_string(&h.counters).expect("counters serialise"),
                h.env
                    .as_ref()
                    .map(|e| serde_json::to_string(e).expect("environment serialises")),
            ],
        )?;
    }
    Ok(())
}

/// A stored row of `run_hosts`, as `iolab show` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HostRow {
    /// Rank.
    pub rank: i64,
    /// The host as given (or its name under MPI).
    pub host: String,
    /// Its host name.
    pub hostname: String,
    /// `ok` or `failed`.
    pub status: String,
    /// Why it failed.
    pub error: Option<String>,
    /// Its start after the earliest host's (ns).
    pub start_offset_ns: Option<i64>,
    /// Its clock minus the coordinator's (ns).
    pub clock_offset_ns: i64,
    /// Its operations.
    pub ops: Option<i64>,
    /// Its operations per second.
    pub iops: Option<f64>,
    /// Its time (s).
    pub time_s: Option<f64>,
}

impl super::Store {
    /// The rows of run `id` in `run_hosts` (none for a run of one host, or
    /// a database older than schema 6).
    pub fn host_rows(&self, id: i64) -> super::StoreResult<Vec<HostRow>> {
        let e = |source| super::StoreError::Sql {
            path: self.path().to_path_buf(),
            op: "read run_hosts".into(),
            source,
        };
        let has: i64 = (self.conn)
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 'run_hosts'",
                [],
                |r| r.get(0),
            )
            .map_err(e)?;
        if has == 0 {
            return Ok(Vec::new());
        }
        let mut st = (self.conn)
            .prepare(
                "SELECT rank, host, hostname, status, error, start_offset_ns, clock_offset_ns,
                    ops, iops, time_s FROM run_hosts WHERE run_id = ?1 ORDER BY rank",
            )
            .map_err(e)?;
        let rows = st
            .query_map([id], |r| {
                Ok(HostRow {
                    rank: r.get(0)?,
                    host: r.get(1)?,
                    hostname: r.get(2)?,
                    status: r.get(3)?,
                    error: r.get(4)?,
                    start_offset_ns: r.get(5)?,
                    clock_offset_ns: r.get(6)?,
                    ops: r.get(7)?,
                    iops: r.get(8)?,
                    time_s: r.get(9)?,
                })
            })
            .map_err(e)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(e)
    }
}
