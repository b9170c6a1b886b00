//! `iolab import`: fio JSON results stored as runs.

use super::db;
use iolab::{Error, Result};
use std::path::PathBuf;

/// Options of `iolab import`.
#[derive(Debug, clap::Args)]
#[command(after_help = help())]
pub struct ImportArgs {
    /// fio result files (fio --output-format=json or json+).
    #[arg(required = true, value_name = "FIO.json")]
    pub files: Vec<PathBuf>,
    /// Label for the imported runs.
    #[arg(long)]
    pub label: Option<String>,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

fn help() -> String {
    format!(
        "Examples:\n  fio job.fio --output-format=json+ > fio.json && iolab import fio.json --label fio\n  \
         iolab compare fio iolab   # by label\n\n\
         The document is read as it streams in, keeping only what iolab uses. \
         Limits (fio's own results stay far inside them): {}.",
        iolab::store::import::limits()
    )
}

/// Runs `iolab import`.
pub fn import(a: ImportArgs) -> Result<()> {
    let mut store = a.db.open()?;
    for f in &a.files {
        let shown = f.display().to_string();
        let doc = std::fs::File::open(f)
            .map_err(|e| Error::usage(format!("cannot read {shown}"), e.to_string()))?;
        let (id, notes) = store.import_fio(doc, &shown, a.label.as_deref())?;
        for n in notes {
            eprintln!("iolab: note: {shown}: {n}");
        }
        eprintln!("iolab: imported {shown} as run {id}");
    }
    Ok(())
}
