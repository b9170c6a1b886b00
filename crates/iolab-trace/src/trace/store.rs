//! Traces stored like runs (kind `trace`): their key figures are the same
//! as a run's (time, ops, bytes, IOPS, latency percentiles, per direction),
//! so `history`, `compare` and `report` take them; the figures per call and
//! per file are the stored result, the events stay in the trace file.

use super::calls::Class;
use super::model::Trace;
use crate::metrics::figures::{Figures, Summary};
use crate::store::{NewRun, Status, Store, StoreResult, StoredRun};
use crate::sys::environment::Environment;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The kind of a stored trace.
pub const KIND: &str = crate::store::kind::TRACE;

/// What is stored of a trace: its figures and where its file is.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StoredTrace {
    /// The trace without its events.
    pub trace: Trace,
    /// The trace file (events), if one was written.
    pub file: Option<PathBuf>,
    /// The run id it is stored under (not stored itself).
    #[serde(skip)]
    pub run: Option<i64>,
}

/// A trace's key figures, under the names runs use.
pub fn summary(t: &Trace) -> Summary {
    let mut f = Figures::new();
    let secs = t.meta.duration_ns as f64 / 1e9;
    let calls: u64 = t.calls.values().map(|s| s.count).sum();
    let (r, w) = (t.of(Class::Read), t.of(Class::Write));
    f.insert("time_s".into(), secs);
    // ops, as IOPS: the reads and writes (a run's I/Os); calls: all.
    f.insert("ops".into(), (r.count + w.count) as f64);
    f.insert("calls".into(), calls as f64);
    f.insert("bytes".into(), (r.bytes + w.bytes) as f64);
    let mut all = r.lat.clone();
    all.merge(&w.lat);
    if secs > 0.0 {
        f.insert("iops".into(), (r.count + w.count) as f64 / secs);
        f.insert(
            "bw_mib_s".into(),
            (r.bytes + w.bytes) as f64 / secs / 1048576.0,
        );
    }
    if all.count() > 0 {
        f.insert("p50_us".into(), all.percentile(50.0) as f64 / 1000.0);
        f.insert("p99_us".into(), all.percentile(99.0) as f64 / 1000.0);
    }
    for (d, s) in [("read", &r), ("write", &w)] {
        if s.count == 0 {
            continue;
        }
        let mut put = |k: &str, v: f64| f.insert(format!("{d}_{k}"), v);
        put("ios", s.count as f64);
        put("bytes", s.bytes as f64);
        if secs > 0.0 {
            put("iops", s.count as f64 / secs);
            put("bw_bytes_per_s", s.bytes as f64 / secs);
        }
        put("clat_mean_ns", s.sum_ns as f64 / s.count as f64);
        put("clat_p50_ns", s.lat.percentile(50.0) as f64);
        put("clat_p99_ns", s.lat.percentile(99.0) as f64);
        put("clat_p99_9_ns", s.lat.percentile(99.9) as f64);
    }
    Summary {
        total: f.clone(),
        reps: vec![f],
    }
}

/// Stores a trace; returns the run id.
pub fn save(
    store: &mut Store,
    stored: &StoredTrace,
    command: &str,
    label: Option<&str>,
) -> StoreResult<i64> {
    let t = &stored.trace;
    let env = Environment::capture(&[], crate::disk::state::injected_at);
    let json = crate::store::encode(stored, "trace")?;
    let name = match t.meta.command.first() {
        Some(c) => format!("trace {c}"),
        None => format!("trace -p {}", t.meta.pid),
    };
    store.insert(&NewRun {
        kind: KIND,
        label,
        name,
        command: command.to_string(),
        env: &env,
        result_json: json,
        summary: &summary(t),
        sweep: None,
        source_json: None,
        hosts: &[],
        status: Status::Complete,
    })
}

/// The trace of a stored run of kind [`KIND`].
pub fn load(run: &StoredRun) -> StoreResult<StoredTrace> {
    let mut t: StoredTrace = run.decode(KIND, "trace")?;
    t.run = Some(run.id);
    Ok(t)
}
