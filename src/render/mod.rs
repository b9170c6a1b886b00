//! Turning results into text: one [`Exporter`] per output format, one
//! line per format in [`FORMATS`]. A new format is a new file and one
//! line.
//!
//! Render is pure: values in, text or bytes out. Exporters return
//! strings, pictures the bytes of their file ([`chart::Chart::image`]),
//! fio's logs go into a writer the caller opens; the caller (cli/, lab/)
//! decides where they go and writes them. Nothing here reads a clock, the
//! host, the time zone, a file system or the store, or calls the system:
//! where and when output is made comes in as a [`Here`] the caller
//! captured.

pub mod axis;
pub mod cache;
pub mod chart;
mod chart_draw;
pub mod compare;
pub mod compare_plot;
pub mod csv;
pub mod disk;
pub mod exec;
pub mod fio_iolog;
pub mod fio_log_samples;
pub mod fio_logs;
pub mod fio_text;
pub mod here;
pub mod history;
pub mod hosts;
pub mod html;
pub mod image;
pub mod json;
mod json_dir;
mod latency_chart;
pub mod log2;
pub mod markdown;
pub mod normal;
pub mod records;
pub mod replay;
pub mod report;
pub mod run_charts;
pub mod steady;
pub mod stored;
pub mod style;
pub mod sweep;
pub mod table;
pub mod terse;
pub mod trace;
pub mod trace_pattern;
pub mod tree;

use crate::analysis::compare::Comparison;
use crate::error::{Error, Result};
use crate::registry::{self, Entry, entry};
use crate::runner::RunResult;
use crate::store::{StoredRun, kind};
use crate::tree::TreeResult;
pub use here::Here;
use records::Records;
use table::Table;

/// One output format. Every format shows a run; the other forms have
/// defaults built on [`Exporter::run`] and [`Exporter::table`], and `None`
/// means "this format has no form for it" (the caller's error then names
/// the formats that do).
pub trait Exporter: Sync {
    /// The whole run (`iolab run`), shown `here`.
    fn run(&self, r: &RunResult, here: &Here) -> Result<String>;

    /// Whether the run form shows the file systems and disks of the
    /// run's files, so the caller captures them into [`Here::env`].
    fn shows_files(&self) -> bool {
        false
    }

    /// A table (`history`, `sweep`, `export`).
    fn table(&self, _t: &Table) -> Option<String> {
        None
    }

    /// Stored runs as typed records (`history`, and `export` in the
    /// formats for machines): only the formats that keep every digit
    /// have this form.
    fn records(&self, _r: &Records) -> Option<String> {
        None
    }

    /// A tree result (`iolab tree`).
    fn tree(&self, _t: &TreeResult) -> Option<String> {
        None
    }

    /// A trace (`iolab trace`).
    fn trace(&self, _t: &crate::trace::store::StoredTrace) -> Option<String> {
        None
    }

    /// An exec's runs (`iolab exec`).
    fn exec(&self, _e: &crate::exec::ExecResult) -> Option<String> {
        None
    }

    /// An A/B comparison: a header naming the sides above its table, the
    /// verdict and the environment diff under it.
    fn comparison(&self, c: &Comparison) -> Option<String> {
        let t = self.table(&compare::table(c))?;
        let calls = self.table(&compare::calls_table(c))?;
        Some(compare::header(c) + &t + &compare::footer(c, &calls))
    }

    /// One stored run (`iolab show`): shown as when it was made, times
    /// as `here`'s clock writes them.
    fn stored(&self, r: &StoredRun, here: &Here) -> Result<Option<String>> {
        if r.kind == kind::TREE {
            Ok(self.tree(&r.tree_result()?))
        } else if r.kind == kind::TRACE {
            Ok(self.trace(&crate::trace::store::load(r)?))
        } else if r.kind == kind::EXEC {
            Ok(self.exec(&crate::exec::store::load(r)?))
        } else if r.kind == kind::CALIBRATION {
            // Ceilings, not a run: normal and JSON show them.
            Ok(None)
        } else {
            self.run(&r.result()?, here).map(Some)
        }
    }

    /// Several stored runs (`iolab export`): one row of key figures each,
    /// times as `here`'s clock writes them.
    fn stored_runs(&self, runs: &[StoredRun], here: &Here) -> Result<Option<String>> {
        Ok(self.table(&stored::summary_table(runs, here.when)))
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
        "terse",
        &["minimal"],
        "",
        "fio's terse line (version 3) per job: `;`-separated, fio's field order",
        &terse::Terse,
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
pub fn find(name: &str) -> Result<&'static Entry<dyn Exporter>> {
    registry::find(FORMATS, name).ok_or_else(|| {
        Error::usage(
            format!("format '{name}'"),
            registry::unknown("format", name, FORMATS),
        )
    })
}

/// `what` in format `name` as `show` makes it; when that format has no
/// form for it, the error names the formats that have.
fn shown(
    name: &str,
    what: &str,
    show: impl Fn(&dyn Exporter) -> Result<Option<String>>,
) -> Result<String> {
    let f = find(name)?;
    if let Some(text) = show(f.item)? {
        return Ok(text);
    }
    let with: Vec<&str> = FORMATS
        .iter()
        .filter(|e| matches!(show(e.item), Ok(Some(_))))
        .map(|e| e.name)
        .collect();
    Err(Error::usage(
        format!("format '{}'", f.name),
        format!("has no form for {what}; it comes as {}", with.join(", ")),
    ))
}

/// A run in format `name`, shown `here`.
pub fn run(r: &RunResult, name: &str, here: &Here) -> Result<String> {
    find(name)?.item.run(r, here)
}

/// Whether format `name` shows the file systems of a run's files (the
/// caller then captures them into [`Here::env`]).
pub fn shows_files(name: &str) -> Result<bool> {
    Ok(find(name)?.item.shows_files())
}

/// A trace in format `name`.
pub fn trace(t: &crate::trace::store::StoredTrace, name: &str) -> Result<String> {
    shown(name, "a trace", |e| Ok(e.trace(t)))
}

/// Refuses, before a trace is made, a format `name` that has no form for
/// traces (the error names those that have).
pub fn trace_check(name: &str) -> Result<()> {
    trace(&crate::trace::store::StoredTrace::default(), name).map(|_| ())
}

/// An exec in format `name`.
pub fn exec(e: &crate::exec::ExecResult, name: &str) -> Result<String> {
    shown(name, "an exec", |x| Ok(x.exec(e)))
}

/// The formats that have a form for execs (`iolab exec -f`).
pub fn exec_formats() -> impl Iterator<Item = &'static Entry<dyn Exporter>> {
    let empty = crate::exec::ExecResult::default();
    FORMATS
        .iter()
        .filter(move |e| e.item.exec(&empty).is_some())
}

/// The formats that have a form for traces (`iolab trace -f`).
pub fn trace_formats() -> impl Iterator<Item = &'static Entry<dyn Exporter>> {
    let empty = crate::trace::store::StoredTrace::default();
    FORMATS
        .iter()
        .filter(move |e| e.item.trace(&empty).is_some())
}

/// A table in format `name`.
pub fn table(t: &Table, name: &str) -> Result<String> {
    shown(name, "tables", |e| Ok(e.table(t)))
}

/// A table in format `name`, its heading painted with `paint` in the
/// terminal's format (normal).
pub fn table_painted(t: &Table, name: &str, paint: style::Paint) -> Result<String> {
    if find(name)?.name == "normal" {
        return Ok(t.text_painted(paint));
    }
    table(t, name)
}

/// A tree result in format `name`.
pub fn tree(t: &TreeResult, name: &str) -> Result<String> {
    shown(name, "a tree result", |e| Ok(e.tree(t)))
}

/// An A/B comparison in format `name`.
pub fn comparison(c: &Comparison, name: &str) -> Result<String> {
    shown(name, "a comparison", |e| Ok(e.comparison(c)))
}

/// A stored run in format `name`, shown `here`.
pub fn stored(r: &StoredRun, name: &str, here: &Here) -> Result<String> {
    shown(name, &format!("a {} result", r.kind), |e| e.stored(r, here))
}

/// Stored runs as records in format `name`, or `None` when that format
/// has no such form (the caller shows them as a table instead).
pub fn records(r: &Records, name: &str) -> Result<Option<String>> {
    Ok(find(name)?.item.records(r))
}

/// Several stored runs in format `name`, shown `here`.
pub fn stored_runs(runs: &[StoredRun], name: &str, here: &Here) -> Result<String> {
    shown(name, "several runs", |e| e.stored_runs(runs, here))
}
