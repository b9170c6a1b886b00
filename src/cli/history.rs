//! `iolab history` and `iolab rm`: list and delete stored runs.

use super::db;
use iolab::metrics::format::local_time;
use iolab::render::stored::summary_table;
use iolab::store::Filter;
use iolab::{Error, Result};

const HISTORY_HELP: &str = "\
Examples:
  iolab history
  iolab history --label before --since 7d
  iolab history --job prefetch --since 2026-11-01 --until '2026-11-22 12:00'
  iolab history -f csv > runs.csv";

/// Options of `iolab history`.
#[derive(Debug, clap::Args)]
#[command(after_help = HISTORY_HELP)]
pub struct HistoryArgs {
    /// Only runs with this label.
    #[arg(long)]
    pub label: Option<String>,
    /// Only runs whose job name contains this.
    #[arg(long)]
    pub job: Option<String>,
    /// Only runs stored since: a date (2026-11-22, '2026-11-22 14:30') or an age (2h, 7d).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only runs stored before this date or age.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Only the points of this sweep.
    #[arg(long, value_name = "ID")]
    pub sweep: Option<i64>,
    /// Show at most N runs, newest first (0: all).
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub limit: usize,
    /// Output format (`iolab list formats`).
    #[arg(short = 'f', long = "output-format", alias = "format", default_value = "normal",
          value_parser = super::formats(), value_name = "FORMAT")]
    pub format: String,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

/// Runs `iolab history`.
pub fn history(a: HistoryArgs) -> Result<()> {
    let when = |opt, v: &Option<String>| v.as_deref().map(|s| db::parse_when(opt, s)).transpose();
    let filter = Filter {
        label: a.label.clone(),
        job: a.job.clone(),
        since: when("--since", &a.since)?,
        until: when("--until", &a.until)?,
        sweep: a.sweep,
        limit: (a.limit > 0).then_some(a.limit),
    };
    let store = a.db.open_read_only()?;
    let runs = store.list(&filter)?;
    if runs.is_empty() && iolab::render::find(&a.format)?.name == "normal" {
        eprintln!(
            "iolab: no stored runs match (database {})",
            store.path().display()
        );
        return Ok(());
    }
    let table = iolab::render::table(&summary_table(&runs, local_time), &a.format)?;
    super::write_out(&table, None)
}

/// Options of `iolab rm`.
#[derive(Debug, clap::Args)]
pub struct RmArgs {
    /// Run ids to delete.
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<String>,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

/// Runs `iolab rm`: every id must exist, or nothing is deleted.
pub fn rm(a: RmArgs) -> Result<()> {
    let ids: Vec<i64> = a
        .ids
        .iter()
        .map(|s| db::parse_id(s))
        .collect::<Result<_>>()?;
    let mut store = a.db.open()?;
    for id in &ids {
        store
            .run(*id)
            .map_err(|e| Error::usage(e.to_string(), "nothing deleted"))?;
    }
    let n = store.remove(&ids)?;
    eprintln!("iolab: deleted {n} run(s)");
    Ok(())
}
