//! `iolab report`: stored runs as one self-contained HTML page.

use super::db;
use iolab::metrics::format::local_time;
use iolab::render::report::for_runs;
use iolab::{Error, Result};
use std::path::PathBuf;

/// Options of `iolab report`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab report 12 -o run12.html\n  iolab report before after 17 -o ab.html --force"
)]
pub struct ReportArgs {
    /// Run ids or labels (a label brings all its runs).
    #[arg(required = true, value_name = "ID")]
    pub runs: Vec<String>,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE", default_value = "iolab-report.html")]
    pub output: PathBuf,
    /// Replace FILE if it exists.
    #[arg(long)]
    pub force: bool,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

/// Runs `iolab report`.
pub fn execute(a: ReportArgs) -> Result<()> {
    if a.output.exists() && !a.force {
        return Err(Error::usage(
            a.output.display().to_string(),
            "exists; use --force to replace it",
        ));
    }
    let (page, n) = for_runs(&a.db.open_read_only()?, &a.runs, local_time)?;
    iolab::sys::fs::write_atomic(&a.output, page.as_bytes())?;
    eprintln!(
        "iolab: report of {n} run(s) written to {}",
        a.output.display()
    );
    Ok(())
}
