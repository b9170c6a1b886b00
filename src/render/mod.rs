//! Turning results into text: one [`Exporter`] per output format, one
//! line per format in [`FORMATS`]. Exporters return strings; the CLI
//! decides where they go. A new format is a new file and one line.

pub mod cache;
pub mod chart;
pub mod compare;
pub mod csv;
pub mod fio_logs;
pub mod format;
pub mod html;
pub mod json;
pub mod lab;
pub mod log2;
pub mod markdown;
pub mod normal;
pub mod report;
pub mod run_charts;
pub mod stored;
pub mod sweep;
pub mod table;
pub mod tree;

use crate::error::{Error, Result};
use crate::registry::{self, Entry, entry};
use crate::runner::RunResult;
use table::Table;

/// One output format: a whole run, and a table (`history`, `sweep`,
/// `compare`, `export`) when the format has a tabular form.
pub trait Exporter: Sync {
    /// The whole run.
    fn run(&self, r: &RunResult) -> Result<String>;

    /// A table; `None` when the format has no tabular form.
    fn table(&self, _t: &Table) -> Option<String> {
        None
    }
}

/// Every output format, in `iolab list formats` order.
pub static FORMATS: &[Entry<dyn Exporter>] = &[
    entry(
        "normal",
        &["table", "text"],
        "",
        "fio-like text: figures per job, cache, counters, log2 histograms; aligned columns for tables",
        &normal::Normal,
    ),
    entry(
        "json",
        &[],
        "",
        "fio's JSON schema plus an `iolab` object per job; an array of objects for tables",
        &json::JSON,
    ),
    entry(
        "json+",
        &[],
        "",
        "json with every histogram's bins, as fio's json+",
        &json::JSON_PLUS,
    ),
    entry(
        "csv",
        &[],
        "",
        "one row of key figures per job (RFC 4180); tables as CSV",
        &csv::Csv,
    ),
    entry(
        "markdown",
        &["md"],
        "",
        "key figures per job as a GitHub Markdown table; tables too",
        &markdown::Markdown,
    ),
    entry(
        "html",
        &[],
        "",
        "one self-contained page: job, figures, latency and time-series plots",
        &report::Html,
    ),
    entry(
        "svg",
        &[],
        "",
        "the run's latency histogram (log2 buckets) as an SVG picture",
        &run_charts::Svg,
    ),
];

/// The format called `name` (or an alias), or an error listing them.
pub fn format(name: &str) -> Result<&'static Entry<dyn Exporter>> {
    registry::find(FORMATS, name).ok_or_else(|| {
        Error::usage(
            format!("format '{name}'"),
            registry::unknown("format", name, FORMATS),
        )
    })
}

/// A table in format `name`; the error says when that format has no tables.
pub fn table(t: &Table, name: &str) -> Result<String> {
    let f = format(name)?;
    f.item.table(t).ok_or_else(|| {
        let with: Vec<&str> = FORMATS
            .iter()
            .filter(|e| e.item.table(&Table::default()).is_some())
            .map(|e| e.name)
            .collect();
        Error::usage(
            format!("format '{name}'"),
            format!("has no table form; tables come as {}", with.join(", ")),
        )
    })
}
