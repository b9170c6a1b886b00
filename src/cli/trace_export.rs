//! `iolab trace export TRACE --format iolog|job`.

use iolab::{Error, Result};
use std::path::PathBuf;

/// `iolab trace export ...`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The trace file.
    pub trace: PathBuf,
}

/// Runs `iolab trace export`.
pub fn execute(a: ExportArgs) -> Result<()> {
    Err(Error::usage(
        format!("{}", a.trace.display()),
        "not built yet",
    ))
}
