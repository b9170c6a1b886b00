//! `iolab replay TRACE`: a trace's calls issued again, per thread.

use iolab::{Error, Result};
use std::path::PathBuf;

/// `iolab replay ...`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The trace file (recorded with --events, or imported).
    pub trace: PathBuf,
}

/// Runs `iolab replay`.
pub fn execute(a: ReplayArgs) -> Result<()> {
    Err(Error::usage(
        format!("{}", a.trace.display()),
        "not built yet",
    ))
}
