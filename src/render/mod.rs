//! Turning a `RunResult` into text: one exporter per output format, behind
//! one trait. Exporters return strings; the CLI decides where they go.

pub mod cache;
pub mod chart;
pub mod compare;
pub mod fio_logs;
pub mod format;
pub mod html;
pub mod json;
pub mod lab;
pub mod log2;
pub mod normal;
pub mod report;
pub mod run_charts;
pub mod stored;
pub mod sweep;
pub mod table;
pub mod tree;

use crate::runner::RunResult;

/// One output format.
pub trait Exporter {
    /// Renders the whole result.
    fn render(&self, result: &RunResult) -> String;
}

/// The output formats of `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Readable summary with log2 histograms.
    Normal,
    /// fio's JSON schema plus an `iolab` object per job.
    Json,
    /// JSON with the histogram bins (fio's json+).
    #[value(name = "json+")]
    JsonPlus,
}

/// The exporter for `format`.
pub fn exporter(format: OutputFormat) -> Box<dyn Exporter> {
    match format {
        OutputFormat::Normal => Box::new(normal::Normal),
        OutputFormat::Json => Box::new(json::Json { bins: false }),
        OutputFormat::JsonPlus => Box::new(json::Json { bins: true }),
    }
}
