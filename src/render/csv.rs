//! `csv`: one row of named figures per reported job (RFC 4180 quoting,
//! every digit, [`crate::metrics::names`]), one per stored run, and
//! tables as CSV. [`jobs_table`] is the readable table of the same jobs
//! (Markdown, HTML).

use super::Exporter;
use super::table::Table;
use crate::analysis::compare::Comparison;
use crate::metrics::figures::METRICS;
use crate::runner::RunResult;
use crate::runner::summary::figures;

/// The CSV exporter.
pub struct Csv;

impl Exporter for Csv {
    fn run(&self, r: &RunResult, _: &super::Here) -> crate::Result<String> {
        Ok(super::records::Records::of_jobs(r).csv())
    }

    fn table(&self, t: &Table) -> Option<String> {
        Some(t.csv())
    }

    fn records(&self, r: &super::records::Records) -> Option<String> {
        Some(r.csv())
    }

    /// One record per run, every digit kept.
    fn stored_runs(
        &self,
        runs: &[crate::store::StoredRun],
        _: &super::Here,
    ) -> crate::Result<Option<String>> {
        Ok(Some(super::records::Records::of_runs(runs)?.csv()))
    }

    /// The table alone: CSV has no place for the header.
    fn comparison(&self, c: &Comparison) -> Option<String> {
        Some(super::compare::table(c).csv())
    }
}

/// One row per reported job: what it was, and every key figure measured,
/// each with all its digits.
pub fn jobs_table(r: &RunResult) -> Table {
    let entries = r.entries();
    let rows: Vec<_> = entries.iter().map(|e| figures(&e.total, None)).collect();
    let metrics: Vec<_> = METRICS
        .iter()
        .filter(|m| rows.iter().any(|f| f.contains_key(m.key)))
        .collect();
    let mut headers: Vec<String> = ["job", "clones", "rw", "bs", "ioengine", "iodepth"]
        .map(String::from)
        .to_vec();
    headers.extend(metrics.iter().map(|m| m.key.to_string()));
    let mut t = Table::new(headers);
    for (e, f) in entries.iter().zip(&rows) {
        let job = &r.jobs[e.job];
        let bs = if job.bs_min == job.bs_max {
            job.bs_min.to_string()
        } else {
            format!("{}-{}", job.bs_min, job.bs_max)
        };
        let mut row = vec![
            job.name.clone(),
            e.clones.len().to_string(),
            job.rw_name().to_string(),
            bs,
            job.engine.clone(),
            job.iodepth.to_string(),
        ];
        row.extend(
            metrics
                .iter()
                .map(|m| f.get(m.key).map(|v| v.to_string()).unwrap_or_default()),
        );
        t.push(row);
    }
    t
}
