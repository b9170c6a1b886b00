//! `markdown`: a run's key figures per job as a GitHub Markdown table, and
//! tables as Markdown.

use super::Exporter;
use super::table::Table;
use crate::runner::RunResult;

/// The Markdown exporter.
pub struct Markdown;

impl Exporter for Markdown {
    fn run(&self, r: &RunResult, _: &super::Here) -> crate::Result<String> {
        Ok(super::csv::jobs_table(r).markdown())
    }

    fn table(&self, t: &Table) -> Option<String> {
        Some(t.markdown())
    }
}
