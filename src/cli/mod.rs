//! The command line: clap definitions, one file per subcommand. The only
//! place that prints.

pub mod cache;
pub mod compare;
pub mod db;
pub mod exec;
pub mod history;
pub mod import;
pub mod lab;
pub mod plot;
pub mod report;
pub mod run;
pub mod show;
pub mod sweep;
pub mod tree;

use clap::{Parser, Subcommand};
use std::io::Write;

/// iolab: a laboratory for I/O effects.
#[derive(Debug, Parser)]
#[command(name = "iolab", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The classic I/O experiments, one command each (`iolab lab list`).
    Lab(lab::LabArgs),
    /// Run fio-compatible jobs (job files and/or --name=... options), every op timed.
    Run(run::RunArgs),
    /// Run a job over the cross product of --vary values; table and plot.
    Sweep(sweep::SweepArgs),
    /// Compare two runs, labels, or job files run now (interleaved), with statistics.
    Compare(compare::CompareArgs),
    /// Metadata trees, fdtree-style: create, walk, read, copy (rsync -a), remove.
    Tree(tree::TreeArgs),
    /// Page cache, vmtouch-style: status, warm, evict, lock.
    Cache(cache::CacheArgs),
    /// List stored runs: id, when, label, job, key figures.
    History(history::HistoryArgs),
    /// Show one stored run in full (normal, json or json+).
    Show(show::ShowArgs),
    /// Export stored runs as JSON, CSV or Markdown.
    Export(show::ExportArgs),
    /// Store fio JSON results as runs, to compare them with iolab's.
    Import(import::ImportArgs),
    /// Draw one picture of a stored run (latency histogram, percentiles, time series).
    Plot(plot::PlotArgs),
    /// Write stored runs as one self-contained HTML page with plots.
    Report(report::ReportArgs),
    /// Delete stored runs.
    Rm(history::RmArgs),
}

/// Prints a one-line error and returns the exit code for bad input.
pub fn fail(msg: impl std::fmt::Display, code: i32) -> i32 {
    eprintln!("iolab: error: {msg}");
    code
}

/// Writes `text` to stdout, or to `out` (atomically: a temporary file renamed).
pub fn write_out(text: &str, out: Option<&std::path::Path>) -> Result<(), String> {
    match out {
        None => {
            let mut so = std::io::stdout().lock();
            so.write_all(text.as_bytes())
                .and_then(|_| so.flush())
                .map_err(|e| format!("cannot write to stdout: {e}"))
        }
        Some(path) => {
            let tmp = path.with_extension("iolab-tmp");
            std::fs::write(&tmp, text)
                .and_then(|_| std::fs::rename(&tmp, path))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))
        }
    }
}
