//! A fio JSON result (`--output-format=json` or `json+`) turned into a
//! [`RunResult`], so fio's runs can be stored, listed and compared with
//! iolab's. Each fio `jobs[]` entry becomes one job of one clone.
//!
//! Latency: with `json+` the `clat_ns.bins` are fio's histogram and are
//! taken as they are. With plain `json` only fio's percentile list exists:
//! the histogram is rebuilt with each percentile's share of the I/Os at its
//! value, so the percentiles iolab reports are fio's own (to fio's bin
//! precision), and count, mean, min and max are fio's exact figures.

use super::error::NotFio;
use super::{NewRun, Status, Store, StoreError, StoreResult, kind};
use crate::job::JobSpec;
use crate::metrics::{CpuUsage, LatencyHistogram};
use crate::runner::{CloneRun, OpStats, Repetition, RunResult, Totals};
use crate::sys::environment::Environment;
use serde_json::Value;

/// A field of fio's document that is missing or does not read.
#[derive(Debug, thiserror::Error)]
enum BadField {
    /// A required field is absent.
    #[error("no {0}")]
    Missing(&'static str),
    /// A histogram bin key that is not a latency.
    #[error("bad bin value '{0}'")]
    Bin(String),
}

/// What was imported, and what could not be.
#[derive(Debug)]
pub struct Imported {
    /// The result.
    pub result: RunResult,
    /// Notes for the user (ignored options, reconstructed histograms).
    pub notes: Vec<String>,
}

impl Store {
    /// Stores fio's JSON output `text` (notes fio printed before the
    /// document are skipped) as one run; `origin` names the file in
    /// messages. Returns the run id and notes for the user.
    pub fn import_fio(
        &mut self,
        text: &str,
        origin: &str,
        label: Option<&str>,
    ) -> StoreResult<(i64, Vec<String>)> {
        let start = text.find('{').unwrap_or(0);
        let doc: Value = serde_json::from_str(&text[start..])
            .map_err(|e| not_fio(origin, format!("not JSON: {e}")))?;
        let imp = from_fio_json(&doc, origin)?;
        let env = Environment {
            hostname: format!(
                "imported from fio {}",
                doc.get("fio version")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
            ),
            ..Environment::default()
        };
        let names: Vec<&str> = imp.result.jobs.iter().map(|j| j.name.as_str()).collect();
        let result_json = serde_json::to_string(&imp.result).map_err(|e| StoreError::Encode {
            what: "imported result",
            problem: e.to_string(),
        })?;
        let id = self.insert(&NewRun {
            kind: kind::FIO,
            label,
            name: names.join(","),
            command: format!("iolab import {origin}"),
            env: &env,
            result_json,
            summary: &imp.result.summary(),
            sweep: None,
            source_json: Some(&doc.to_string()),
            status: Status::Complete,
        })?;
        Ok((id, imp.notes))
    }
}

fn not_fio(origin: &str, problem: String) -> StoreError {
    StoreError::NotFio(NotFio {
        origin: origin.to_string(),
        problem,
    })
}

/// Converts fio's JSON output. `origin` names the file in messages.
pub fn from_fio_json(doc: &Value, origin: &str) -> StoreResult<Imported> {
    let bad = |problem: String| not_fio(origin, problem);
    let jobs = doc
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("not a fio JSON result (no \"jobs\" array)".into()))?;
    if jobs.is_empty() {
        return Err(bad("fio result has no jobs".into()));
    }
    let mut notes = Vec::new();
    let global = options_of(doc.get("global options"));
    let mut specs = Vec::new();
    let mut clones = Vec::new();
    let mut reconstructed = false;
    for (i, j) in jobs.iter().enumerate() {
        let name = j
            .get("jobname")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("jobs[{i}] has no \"jobname\"")))?;
        let mut opts = global.clone();
        opts.extend(options_of(j.get("job options")));
        let (mut spec, ignored) = JobSpec::from_foreign_options(name, &opts);
        spec.numjobs = 1;
        spec.group_reporting = false;
        if !ignored.is_empty() {
            notes.push(format!(
                "job '{name}': fio options kept as written only: {}",
                ignored.join(", ")
            ));
        }
        let runtime_ms = num(j, "job_runtime");
        let runtime_ns = (runtime_ms * 1e6) as u64;
        let mut t = Totals {
            runtime_ns,
            thread_ns: runtime_ns,
            cpu: CpuUsage {
                user_us: (num(j, "usr_cpu") / 100.0 * runtime_ms * 1000.0) as u64,
                sys_us: (num(j, "sys_cpu") / 100.0 * runtime_ms * 1000.0) as u64,
                ..CpuUsage::default()
            },
            ..Totals::default()
        };
        for (dir, stats) in [("read", &mut t.read), ("write", &mut t.write)] {
            if let Some(d) = j.get(dir) {
                let (s, rebuilt) = op_stats(d).map_err(|m| bad(format!("jobs[{i}].{dir}: {m}")))?;
                *stats = s;
                reconstructed |= rebuilt;
            }
        }
        if num(j, "error") != 0.0 {
            t.errors
                .push(format!("fio reported error {}", num(j, "error")));
        }
        specs.push(spec);
        clones.push(CloneRun {
            job: i,
            clone: 0,
            totals: t,
            interrupted: false,
        });
    }
    if reconstructed {
        notes.push(
            "latency histograms rebuilt from fio's percentile list (use fio --output-format=json+ for exact bins)"
                .into(),
        );
    }
    let started_unix = doc.get("timestamp").and_then(Value::as_u64).unwrap_or(0);
    let n = specs.len();
    Ok(Imported {
        result: RunResult {
            files: vec![vec![Vec::new()]; n],
            repetitions: vec![Repetition {
                index: 0,
                clones,
                cache_before: vec![Vec::new(); n],
                cache_after: vec![Vec::new(); n],
                counters: Default::default(),
            }],
            jobs: specs,
            interrupted: false,
            warnings: Vec::new(),
            started_unix,
        },
        notes,
    })
}

fn options_of(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), String::from),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn num(v: &Value, key: &str) -> f64 {
    match v.get(key) {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(Value::String(s)) => s.parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// One direction; the flag tells whether a histogram was rebuilt from percentiles.
fn op_stats(d: &Value) -> std::result::Result<(OpStats, bool), BadField> {
    let bytes = num(d, "io_bytes") as u64;
    let ios = num(d, "total_ios") as u64;
    if ios == 0 {
        return Ok((
            OpStats {
                bytes,
                ..OpStats::default()
            },
            false,
        ));
    }
    let clat = d.get("clat_ns").ok_or(BadField::Missing("clat_ns"))?;
    let (hist, rebuilt) = histogram(clat)?;
    let mut lat = hist.clone();
    if let Some(l) = d.get("lat_ns") {
        set_moments(&mut lat, l);
    }
    let mut slat = LatencyHistogram::new();
    if let Some(s) = d.get("slat_ns").filter(|s| num(s, "N") > 0.0) {
        slat = histogram(s).map(|h| h.0).unwrap_or_default();
    }
    Ok((
        OpStats {
            lat,
            clat: hist,
            slat,
            bytes,
        },
        rebuilt,
    ))
}

/// fio's latency object as a histogram: bins when present, else percentiles.
fn histogram(o: &Value) -> std::result::Result<(LatencyHistogram, bool), BadField> {
    let n = num(o, "N") as u64;
    let mut h = LatencyHistogram::new();
    let mut rebuilt = false;
    if let Some(bins) = o.get("bins").and_then(Value::as_object) {
        for (k, c) in bins {
            let v: u64 = k.parse().map_err(|_| BadField::Bin(k.clone()))?;
            h.record_n(v, c.as_u64().unwrap_or(0));
        }
    } else if let Some(p) = o.get("percentile").and_then(Value::as_object) {
        let mut pts: Vec<(f64, u64)> = p
            .iter()
            .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, v.as_u64()?)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut done = 0u64;
        for (pct, v) in &pts {
            let upto = ((pct / 100.0) * n as f64).ceil() as u64;
            if upto > done {
                h.record_n(*v, upto - done);
                done = upto;
            }
        }
        if n > done {
            h.record_n(num(o, "max") as u64, n - done);
        }
        rebuilt = true;
    } else if n > 0 {
        h.record_n(num(o, "mean") as u64, n);
        rebuilt = true;
    }
    set_moments(&mut h, o);
    Ok((h, rebuilt))
}

/// fio's exact count, mean, stddev, min and max.
fn set_moments(h: &mut LatencyHistogram, o: &Value) {
    let n = num(o, "N") as u64;
    if n == 0 {
        return;
    }
    let mean = num(o, "mean");
    let sd = num(o, "stddev");
    let sum = mean * n as f64;
    // stddev is the sample standard deviation (n - 1).
    let var_sum = sd * sd * (n.saturating_sub(1)) as f64;
    let sum_sq = var_sum + sum * sum / n as f64;
    h.set_exact(
        n,
        sum.round() as u128,
        sum_sq.round() as u128,
        num(o, "min") as u64,
        num(o, "max") as u64,
    );
}
