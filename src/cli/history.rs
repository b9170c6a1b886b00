//! `iolab history` and `iolab rm`: list and delete stored runs.

use super::db;
use iolab::render::stored::summary_table;
use iolab::render::table::TableFormat;
use iolab::store::Filter;
use std::path::PathBuf;

const HISTORY_HELP: &str = "\
Examples:
  iolab history
  iolab history --label before --since 7d
  iolab history --job prefetch --since 2026-11-01 --until '2026-11-22 12:00'
  iolab history --format csv > runs.csv";

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
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: TableFormat,
    /// Results database (default: $IOLAB_DB, else ~/.local/share/iolab/iolab.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Runs `iolab history`.
pub fn history(a: HistoryArgs) -> i32 {
    let f = || -> Result<Filter, String> {
        Ok(Filter {
            label: a.label.clone(),
            job: a.job.clone(),
            since: a
                .since
                .as_deref()
                .map(|s| db::parse_when("--since", s))
                .transpose()?,
            until: a
                .until
                .as_deref()
                .map(|s| db::parse_when("--until", s))
                .transpose()?,
            sweep: a.sweep,
            limit: (a.limit > 0).then_some(a.limit),
        })
    };
    let filter = match f() {
        Ok(f) => f,
        Err(e) => return super::fail(e, 2),
    };
    let store = match db::open(a.db.as_deref()) {
        Ok(s) => s,
        Err(e) => return super::fail(e, 2),
    };
    let runs = match store.list(&filter) {
        Ok(r) => r,
        Err(e) => return super::fail(e, 1),
    };
    if runs.is_empty() && a.format == TableFormat::Table {
        eprintln!(
            "iolab: no stored runs match (database {})",
            store.path().display()
        );
        return 0;
    }
    print!("{}", summary_table(&runs, db::when).render(a.format));
    0
}

/// Options of `iolab rm`.
#[derive(Debug, clap::Args)]
pub struct RmArgs {
    /// Run ids to delete.
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<String>,
    /// Results database.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Runs `iolab rm`: every id must exist, or nothing is deleted.
pub fn rm(a: RmArgs) -> i32 {
    let ids: Vec<i64> = match a.ids.iter().map(|s| db::parse_id(s)).collect() {
        Ok(v) => v,
        Err(e) => return super::fail(e, 2),
    };
    let mut store = match db::open(a.db.as_deref()) {
        Ok(s) => s,
        Err(e) => return super::fail(e, 2),
    };
    for id in &ids {
        if let Err(e) = db::get(&store, *id) {
            return super::fail(format!("{e}; nothing deleted"), 2);
        }
    }
    match store.remove(&ids) {
        Ok(n) => {
            eprintln!("iolab: deleted {n} run(s)");
            0
        }
        Err(e) => super::fail(e, 1),
    }
}
