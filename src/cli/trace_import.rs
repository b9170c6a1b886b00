//! `iolab trace import FILE`: strace output as a trace.

use iolab::{Error, Result};
use std::path::PathBuf;

/// `iolab trace import ...`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// strace output (`strace -f -ttt -T -y -o FILE`).
    pub file: PathBuf,
}

/// Runs `iolab trace import`.
pub fn execute(a: ImportArgs) -> Result<()> {
    Err(Error::usage(
        format!("{}", a.file.display()),
        "not built yet",
    ))
}
