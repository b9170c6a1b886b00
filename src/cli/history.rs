//! `iolab history` and `iolab rm`: list and delete stored runs.

use super::db;
use iolab::metrics::format::local_time;
use iolab::render::records::Records;
use iolab::render::stored::summary_table;
use iolab::store::Filter;
use iolab::{Error, Result};

const HISTORY_HELP: &str = "\
Examples:
  iolab history
  iolab history --label before --since 7d
  iolab history --job prefetch --since 2026-11-01 --until '2026-11-22 12:00'
  iolab history -f csv > runs.csv     # every run, every digit
  iolab history --limit 0             # the whole table, not the newest 50

CSV and JSON carry every matching run (--limit N to cap) with the named
figures of docs/schema.md; the table shows the newest 50 by default.";

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
    /// At most N runs, newest first (0: all). Default: 50 in the table,
    /// every run in the other formats.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Output format (`iolab list formats`).
    #[arg(short = 'f', long = "output-format", alias = "format", default_value = "normal",
          value_parser = super::formats(), value_name = "FORMAT")]
    pub format: String,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

/// How many runs the terminal table shows unless `--limit` says.
const TABLE_ROWS: usize = 50;

/// Runs `iolab history`.
pub fn history(a: HistoryArgs) -> Result<()> {
    let when = |opt, v: &Option<String>| v.as_deref().map(|s| db::parse_when(opt, s)).transpose();
    let normal = iolab::render::find(&a.format)?.name == "normal";
    // The table's default cap; one more run is read to tell that there are more.
    let cap = a.limit.unwrap_or(if normal { TABLE_ROWS } else { 0 });
    let filter = Filter {
        label: a.label.clone(),
        job: a.job.clone(),
        since: when("--since", &a.since)?,
        until: when("--until", &a.until)?,
        sweep: a.sweep,
        limit: (cap > 0).then_some(cap + 1),
    };
    let store = a.db.open_read_only()?;
    let mut runs = store.list(&filter)?;
    let more = cap > 0 && runs.len() > cap;
    runs.truncate(if cap > 0 { cap } else { runs.len() });
    if runs.is_empty() && normal {
        eprintln!(
            "iolab: no stored runs match (database {})",
            store.path().display()
        );
        return Ok(());
    }
    let records = Records::of_runs(&runs)?;
    let text = if let Some(text) = iolab::render::records(&records, &a.format)? {
        text
    } else if normal {
        let mut t = iolab::render::history::table(
            &records,
            &short_time,
            super::table_width(),
            super::paint(),
        );
        if more && a.limit.is_none() {
            t.push_str(&format!(
                "(the newest {cap}; --limit 0 shows every run, --format csv exports them)\n"
            ));
        }
        t
    } else {
        iolab::render::table(&summary_table(&runs, local_time), &a.format)?
    };
    super::write_out(&text, None)
}

/// A time the short way, by this machine's clock and time zone:
/// `11-24 17:04` this year, `2025-11-24` before.
fn short_time(unix: i64) -> String {
    use chrono::{Datelike, Local, TimeZone};
    let Some(t) = Local.timestamp_opt(unix, 0).single() else {
        return unix.to_string();
    };
    if t.year() == Local::now().year() {
        t.format("%m-%d %H:%M").to_string()
    } else {
        t.format("%Y-%m-%d").to_string()
    }
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
