//! `iolab show` and `iolab export`: stored runs rendered again.

use super::{db, write_out};
use iolab::render;
use iolab::store::StoredRun;
use iolab::{Error, Result};
use std::path::PathBuf;

/// Options of `iolab show`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab show 12\n  iolab show 12 --output-format json > run12.json\n  iolab show 7 --source     # the original fio document of an import"
)]
pub struct ShowArgs {
    /// Run id.
    #[arg(value_name = "ID")]
    pub id: String,
    /// Output format (`iolab list formats`); normal adds the stored environment.
    #[arg(short = 'f', long, default_value = "normal", value_parser = super::formats(),
          value_name = "FORMAT")]
    pub output_format: String,
    /// For an imported run: print the original document instead.
    #[arg(long)]
    pub source: bool,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

/// The runs `ids` name, each of which must exist.
fn load(dba: &db::DbArg, ids: &[String]) -> Result<Vec<StoredRun>> {
    let store = dba.open_read_only()?;
    ids.iter()
        .map(|s| Ok(store.run(db::parse_id(s)?)?))
        .collect()
}

/// Runs `iolab show`.
pub fn show(a: ShowArgs) -> Result<()> {
    let r = load(&a.db, std::slice::from_ref(&a.id))?.remove(0);
    if a.source {
        let src = r.source_json.as_deref().ok_or_else(|| {
            let why = if r.kind == iolab::store::kind::FIO {
                format!(
                    "was imported from a document over the {} iolab keeps; it was not stored",
                    iolab::metrics::format::bytes_iec(iolab::store::import::MAX_SOURCE as f64)
                )
            } else {
                "was not imported: it has no source document".to_string()
            };
            Error::usage(format!("run {}", r.id), why)
        })?;
        return write_out(&format!("{src}\n"), None);
    }
    let format = a.output_format.as_str();
    let here = super::here_showing(&[format], || render::here::stored_files(&r))?;
    let mut text = render::stored(&r, format, &here)?;
    if a.output_format == "normal" {
        let rows = a.db.open_read_only()?.host_rows(r.id)?;
        if !rows.is_empty() {
            text.push_str(&render::hosts::stored(&rows));
        }
    }
    write_out(&text, None)
}

/// Options of `iolab export`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab export -f csv > runs.csv      # every stored run\n  iolab export 3 4 5 -f markdown\n  iolab export 12 --output-format json -o run12.json\n\nCSV has one row per run: ids and counts as integers, figures with every\ndigit, named as in docs/schema.md (read_iops, read_clat_p99_ns, ...)."
)]
pub struct ExportArgs {
    /// Run ids (none: every stored run, newest first).
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// json or json+: every run in full (fio schema, environment, summary,
    /// named figures); csv: one row of named figures per run, every digit;
    /// markdown: a readable table.
    #[arg(short = 'f', long = "output-format", alias = "format", default_value = "json",
          value_parser = super::formats(), value_name = "FORMAT")]
    pub format: String,
    /// At most N runs (the first N ids given, or the newest N).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Write to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

/// Runs `iolab export`.
pub fn export(a: ExportArgs) -> Result<()> {
    let limit = a.limit.filter(|n| *n > 0);
    let runs = if a.ids.is_empty() {
        a.db.open_read_only()?.list(&iolab::store::Filter {
            limit,
            ..Default::default()
        })?
    } else {
        let ids = &a.ids[..limit.map_or(a.ids.len(), |n| n.min(a.ids.len()))];
        load(&a.db, ids)?
    };
    let text = render::stored_runs(&runs, &a.format, &super::here(&[]))?;
    write_out(&text, a.output.as_deref())
}
