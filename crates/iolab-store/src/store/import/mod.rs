//! A fio JSON result (`--output-format=json` or `json+`) turned into a
//! [`RunResult`], so fio's runs can be stored, listed and compared with
//! iolab's. Each fio `jobs[]` entry becomes one job of one clone.
//!
//! Latency: with `json+` the `clat_ns.bins` are fio's histogram and are
//! taken as they are. With plain `json` only fio's percentile list exists:
//! the histogram is rebuilt with each percentile's share of the I/Os at its
//! value, so the percentiles iolab reports are fio's own (to fio's bin
//! precision), and count, mean, min and max are fio's exact figures.
//!
//! Memory: the document is parsed as it is read, keeping only the fields
//! iolab uses (`fio.rs`), so what an import holds is bounded by the limits
//! below, not by the file. The original document is stored for `iolab show
//! --source` when it is at most [`MAX_SOURCE`]. A document past a limit is
//! refused with the limit it passed (exit 2).

mod fio;
mod guard;

use super::error::NotFio;
use super::{NewRun, Status, Store, StoreError, StoreResult, kind};
use crate::job::JobSpec;
use crate::metrics::format::bytes_iec;
use crate::metrics::{CpuUsage, LatencyHistogram};
use crate::runner::{CloneRun, OpStats, Repetition, RunResult, Totals};
use crate::sys::environment::Environment;
use std::io::{BufReader, Read};

/// The longest document iolab imports: 1 GiB (fio's json+ result of 4096
/// jobs is about 400 MB).
pub const MAX_DOCUMENT: u64 = 1 << 30;
/// The most bytes of notes fio may print before its JSON: 64 KiB.
pub const MAX_PREAMBLE: u64 = 64 << 10;
/// The deepest nesting of arrays and objects: 64 (fio's results nest 5;
/// serde_json's own limit of 128 stays on).
pub const MAX_DEPTH: usize = 64;
/// The longest string, key or value: 1 MiB (fio's option lines are at
/// most 4096 bytes).
pub const MAX_STRING: usize = 1 << 20;
/// The most jobs: 4096, fio's own limit (`REAL_MAX_JOBS`).
pub const MAX_JOBS: usize = 4096;
/// The most options in one options object: 1024 (fio has about 500).
pub const MAX_OPTIONS: usize = 1024;
/// The most text in one options object, names and values: 1 MiB.
pub const MAX_OPTIONS_TEXT: usize = 1 << 20;
/// The most bins in one latency histogram: 65536 (fio writes at most 1856).
pub const MAX_BINS: usize = 1 << 16;
/// The most percentiles in one latency object: 1024 (fio writes at most 20).
pub const MAX_PERCENTILES: usize = 1024;
/// The most all the jobs may hold together (names, options, histograms):
/// 32 MiB.
pub const MAX_KEPT: usize = 32 << 20;
/// The longest document stored as it is for `iolab show --source`: 8 MiB.
pub const MAX_SOURCE: usize = 8 << 20;

/// The limits above in a sentence, for `iolab import --help`.
pub fn limits() -> String {
    let iec = |n: usize| bytes_iec(n as f64);
    format!(
        "{} per document, {MAX_JOBS} jobs, nesting {MAX_DEPTH} deep, strings of {}, \
         {} kept of names, options and histograms in all; the original document \
         is kept for `iolab show --source` up to {}",
        bytes_iec(MAX_DOCUMENT as f64),
        iec(MAX_STRING),
        iec(MAX_KEPT),
        iec(MAX_SOURCE)
    )
}

/// A field of fio's document that is missing or does not read.
#[derive(Debug, thiserror::Error)]
enum BadField {
    /// A required field is absent.
    #[error("no {0}")]
    Missing(&'static str),
}

/// What was imported, and what could not be.
#[derive(Debug)]
pub struct Imported {
    /// The result.
    pub result: RunResult,
    /// Notes for the user (ignored options, reconstructed histograms).
    pub notes: Vec<String>,
    /// fio's version, as the document says.
    pub fio_version: Option<String>,
    /// The document as it was read (from its first `{`), when it was at
    /// most [`MAX_SOURCE`].
    pub source: Option<String>,
}

impl Store {
    /// Stores the fio JSON result read from `doc` (notes fio printed before
    /// it are skipped) as one run; `origin` names the file in messages.
    /// Returns the run id and notes for the user.
    pub fn import_fio(
        &mut self,
        doc: impl Read,
        origin: &str,
        label: Option<&str>,
    ) -> StoreResult<(i64, Vec<String>)> {
        let imp = read_fio(doc, origin)?;
        let env = Environment {
            hostname: format!(
                "imported from fio {}",
                imp.fio_version.as_deref().unwrap_or("?")
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
            source_json: imp.source.as_deref(),
            hosts: &[],
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

/// Reads fio's JSON output from `r` (notes before it are skipped) within
/// the limits above. `origin` names the file in messages.
pub fn read_fio(r: impl Read, origin: &str) -> StoreResult<Imported> {
    let mut scan = guard::Scan::new();
    let guarded = BufReader::with_capacity(64 << 10, guard::Guard::new(r, &mut scan));
    let mut de = serde_json::Deserializer::from_reader(guarded);
    let parsed = serde::Deserialize::deserialize(&mut de).and_then(|d| de.end().map(|()| d));
    drop(de);
    let g = &mut scan;
    let doc: fio::Doc = parsed.map_err(|e| {
        let problem = match (g.exceeded(), e.classify()) {
            (Some(limit), _) => limit.to_string(),
            (None, _) if !g.started() => "no JSON document in it".into(),
            (None, serde_json::error::Category::Io) => format!("cannot read: {e}"),
            (None, serde_json::error::Category::Data) => format!("not a fio JSON result: {e}"),
            (None, _) => format!("not JSON: {e}"),
        };
        not_fio(origin, problem)
    })?;
    let mut imp = from_fio(doc, origin)?;
    match g.take_source().map(String::from_utf8) {
        Some(Ok(text)) => imp.source = Some(text.trim_end().to_string()),
        Some(Err(_)) => return Err(not_fio(origin, "not UTF-8 text".into())),
        None => imp.notes.push(format!(
            "the original document ({}) is over the {} iolab keeps for show --source",
            bytes_iec(g.len() as f64),
            bytes_iec(MAX_SOURCE as f64)
        )),
    }
    Ok(imp)
}

/// Converts fio's document. `origin` names the file in messages.
fn from_fio(doc: fio::Doc, origin: &str) -> StoreResult<Imported> {
    let bad = |problem: String| not_fio(origin, problem);
    let jobs = doc
        .jobs
        .ok_or_else(|| bad("not a fio JSON result (no \"jobs\" array)".into()))?
        .0;
    if jobs.is_empty() {
        return Err(bad("fio result has no jobs".into()));
    }
    let mut notes = Vec::new();
    let mut specs = Vec::new();
    let mut clones = Vec::new();
    let mut reconstructed = false;
    for (i, j) in jobs.into_iter().enumerate() {
        let name = j
            .jobname
            .0
            .ok_or_else(|| bad(format!("jobs[{i}] has no \"jobname\"")))?;
        let mut opts = doc.global.0.clone();
        opts.extend(j.options.0);
        let (mut spec, ignored) = JobSpec::from_foreign_options(&name, &opts);
        spec.numjobs = 1;
        spec.group_reporting = false;
        if !ignored.is_empty() {
            notes.push(format!(
                "job '{name}': fio options kept as written only: {}",
                ignored.join(", ")
            ));
        }
        let runtime_ms = j.job_runtime.0;
        let runtime_ns = (runtime_ms * 1e6) as u64;
        let mut t = Totals {
            runtime_ns,
            thread_ns: runtime_ns,
            cpu: CpuUsage {
                user_us: (j.usr_cpu.0 / 100.0 * runtime_ms * 1000.0) as u64,
                sys_us: (j.sys_cpu.0 / 100.0 * runtime_ms * 1000.0) as u64,
                ..CpuUsage::default()
            },
            ..Totals::default()
        };
        for (dir, d, stats) in [
            ("read", j.read, &mut t.read),
            ("write", j.write, &mut t.write),
        ] {
            if let Some(d) = d {
                let (s, rebuilt) = op_stats(d).map_err(|m| bad(format!("jobs[{i}].{dir}: {m}")))?;
                *stats = s;
                reconstructed |= rebuilt;
            }
        }
        if j.error.0 != 0.0 {
            t.errors.push(format!("fio reported error {}", j.error.0));
        }
        specs.push(spec);
        clones.push(CloneRun {
            job: i,
            clone: 0,
            totals: t,
            interrupted: false,
            steady: None,
        });
    }
    if reconstructed {
        notes.push(
            "latency histograms rebuilt from fio's percentile list (use fio --output-format=json+ for exact bins)"
                .into(),
        );
    }
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
            pid: 0,
            warnings: Vec::new(),
            started_unix: doc.timestamp.u64(),
        },
        notes,
        fio_version: doc.version.0,
        source: None,
    })
}

/// One direction; the flag tells whether a histogram was rebuilt from percentiles.
fn op_stats(d: fio::Dir) -> std::result::Result<(OpStats, bool), BadField> {
    let bytes = d.io_bytes.u64();
    let busy_ns = d.runtime.as_ref().map(|r| r.u64() * 1_000_000);
    if d.total_ios.u64() == 0 {
        return Ok((
            OpStats {
                bytes,
                busy_ns,
                ..OpStats::default()
            },
            false,
        ));
    }
    let clat = d.clat_ns.ok_or(BadField::Missing("clat_ns"))?;
    let (hist, rebuilt) = histogram(&clat);
    let mut lat = hist.clone();
    if let Some(l) = &d.lat_ns {
        set_moments(&mut lat, l);
    }
    let slat = d
        .slat_ns
        .filter(|s| s.N.0 > 0.0)
        .map(|s| histogram(&s).0)
        .unwrap_or_default();
    Ok((
        OpStats {
            lat,
            clat: hist,
            slat,
            bytes,
            busy_ns,
            prios: Vec::new(),
        },
        rebuilt,
    ))
}

/// fio's latency object as a histogram: bins when present, else percentiles.
fn histogram(o: &fio::Lat) -> (LatencyHistogram, bool) {
    let n = o.N.u64();
    let mut h = LatencyHistogram::new();
    let mut rebuilt = false;
    if !o.bins.0.is_empty() {
        for &(v, c) in &o.bins.0 {
            h.record_n(v, c);
        }
    } else if !o.percentile.0.is_empty() {
        let mut pts = o.percentile.0.clone();
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
            h.record_n(o.max.u64(), n - done);
        }
        rebuilt = true;
    } else if n > 0 {
        h.record_n(o.mean.u64(), n);
        rebuilt = true;
    }
    set_moments(&mut h, o);
    (h, rebuilt)
}

/// fio's exact count, mean, stddev, min and max.
fn set_moments(h: &mut LatencyHistogram, o: &fio::Lat) {
    let n = o.N.u64();
    if n == 0 {
        return;
    }
    let mean = o.mean.0;
    let sd = o.stddev.0;
    let sum = mean * n as f64;
    // stddev is the sample standard deviation (n - 1).
    let var_sum = sd * sd * (n.saturating_sub(1)) as f64;
    let sum_sq = var_sum + sum * sum / n as f64;
    h.set_exact(
        n,
        sum.round() as u128,
        sum_sq.round() as u128,
        o.min.u64(),
        o.max.u64(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(doc: &str) -> Result<Imported, String> {
        read_fio(doc.as_bytes(), "t.json").map_err(|e| e.to_string())
    }

    /// A document of one job whose `read` object is `read`.
    fn one_job(options: &str, read: &str) -> String {
        format!(r#"{{"jobs": [{{"jobname": "j", "job options": {{{options}}}, "read": {read}}}]}}"#)
    }

    #[test]
    fn numbers_may_be_text_and_unread_fields_are_skipped() {
        let doc = one_job(
            r#""bs": "8k", "iodepth": 4, "x": {"deep": [[1]]}"#,
            r#"{"total_ios": "2", "io_bytes": 8192, "junk": [{"a": "b"}],
               "clat_ns": {"N": 2, "min": 5, "max": 7, "mean": 6.0, "stddev": "1.4",
                           "bins": {"5": 1, "7": 1}}}"#,
        );
        let imp = read(&format!("fio-3.33 says hello\n{doc}\n")).unwrap();
        let spec = &imp.result.jobs[0];
        assert_eq!((spec.bs_min, spec.iodepth), (8192, 4));
        let t = &imp.result.repetitions[0].clones[0].totals.read;
        assert_eq!((t.clat.count(), t.clat.min(), t.clat.max()), (2, 5, 7));
        assert_eq!(t.bytes, 8192);
        assert_eq!(imp.source.as_deref(), Some(doc.as_str()), "kept as read");
    }

    #[test]
    fn what_a_job_keeps_is_capped() {
        let many =
            |n: usize, f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join(", ");
        let opts = many(MAX_OPTIONS + 1, &|i| format!(r#""o{i}": "v""#));
        let err = read(&one_job(&opts, "{}")).unwrap_err();
        assert!(
            err.contains(&format!("more than {MAX_OPTIONS} options")),
            "{err}"
        );

        let bins = many(MAX_BINS + 1, &|i| format!(r#""{i}": 1"#));
        let err = read(&one_job(
            "",
            &format!(r#"{{"clat_ns": {{"bins": {{{bins}}}}}}}"#),
        ))
        .unwrap_err();
        assert!(
            err.contains(&format!("more than {MAX_BINS} histogram bins")),
            "{err}"
        );
        let err = read(&one_job("", r#"{"clat_ns": {"bins": {"x": 1}}}"#)).unwrap_err();
        assert!(err.contains("bad key 'x' in histogram bins"), "{err}");

        // Many jobs, each within its own limits, that together hold too much.
        let text = "v".repeat(MAX_OPTIONS_TEXT / 2);
        let job = format!(r#"{{"jobname": "j", "job options": {{"a": "{text}"}}}}"#);
        let n = MAX_KEPT / text.len() + 1;
        let doc = format!(r#"{{"jobs": [{}]}}"#, vec![job; n].join(", "));
        let err = read(&doc).unwrap_err();
        assert!(err.contains("its jobs hold more than 32.0MiB"), "{err}");
    }
}
