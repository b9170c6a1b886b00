//! `iolab report`: stored runs as one self-contained HTML page.

use super::db;
use iolab::render::report::{Body, html};
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
    let store = a.db.open_read_only()?;
    let mut runs = Vec::new();
    for id in store.resolve(&a.runs)? {
        let run = store.run(id)?;
        let body = Body::of(&run)?;
        runs.push((run, body));
    }
    let page = html(&runs, &super::here(&[]))?;
    iolab::sys::fs::write_atomic(&a.output, page.as_bytes())?;
    eprintln!(
        "iolab: report of {} run(s) written to {}",
        runs.len(),
        a.output.display()
    );
    Ok(())
}
