//! `iolab show` and `iolab export`: stored runs rendered again.

use super::{db, write_out};
use iolab::render::cache::pretty;
use iolab::render::format::local_time;
use iolab::render::json::stored_run;
use iolab::render::stored::{header, summary_table};
use iolab::render::table::TableFormat;
use iolab::render::{OutputFormat, exporter};
use iolab::store::{StoredRun, kind};
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
    /// normal (as `iolab run` printed it, with the stored environment), json or json+.
    #[arg(long, value_enum, default_value = "normal")]
    pub output_format: OutputFormat,
    /// For an imported run: print the original document instead.
    #[arg(long)]
    pub source: bool,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

/// The runs `ids` name, each of which must exist.
fn load(dba: &db::DbArg, ids: &[String]) -> Result<Vec<StoredRun>> {
    let store = dba.open()?;
    ids.iter()
        .map(|s| Ok(store.run(db::parse_id(s)?)?))
        .collect()
}

/// Runs `iolab show`.
pub fn show(a: ShowArgs) -> Result<()> {
    let r = load(&a.db, std::slice::from_ref(&a.id))?.remove(0);
    if a.source {
        let src = r.source_json.as_deref().ok_or_else(|| {
            Error::usage(
                format!("run {}", r.id),
                "was not imported: it has no source document",
            )
        })?;
        return write_out(&format!("{src}\n"), None);
    }
    let text = match a.output_format {
        OutputFormat::Normal => {
            let body = if r.kind == kind::TREE {
                iolab::render::tree::text(&r.tree_result()?)
            } else {
                exporter(OutputFormat::Normal).render(&r.result()?)
            };
            format!("{}\n{body}", header(&r, &local_time(r.created_unix)))
        }
        f => pretty(&stored_run(&r, f == OutputFormat::JsonPlus)?),
    };
    write_out(&text, None)
}

/// Formats of `iolab export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Every run in full (fio schema + environment + summary), as a JSON array.
    Json,
    /// One row of key figures per run.
    Csv,
    /// One row of key figures per run, as a Markdown table.
    Markdown,
}

/// Options of `iolab export`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab export 3 4 5 --format markdown\n  iolab export 12 --format json --output run12.json"
)]
pub struct ExportArgs {
    /// Run ids.
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    pub format: ExportFormat,
    /// Write to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

/// Runs `iolab export`.
pub fn export(a: ExportArgs) -> Result<()> {
    let runs = load(&a.db, &a.ids)?;
    let text = match a.format {
        ExportFormat::Json => {
            let all = runs
                .iter()
                .map(|r| stored_run(r, false))
                .collect::<Result<Vec<_>>>()?;
            pretty(&serde_json::Value::Array(all))
        }
        ExportFormat::Csv => summary_table(&runs, local_time).render(TableFormat::Csv),
        ExportFormat::Markdown => summary_table(&runs, local_time).render(TableFormat::Markdown),
    };
    write_out(&text, a.output.as_deref())
}
