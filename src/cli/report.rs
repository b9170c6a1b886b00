//! `iolab report`: stored runs as one self-contained HTML page.

use super::db;
use iolab::render::report::{self, Body};
use iolab::store::kind;
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
    /// Results database.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Runs `iolab report`.
pub fn execute(a: ReportArgs) -> i32 {
    if a.output.exists() && !a.force {
        return super::fail(
            format!("{} exists; use --force to replace it", a.output.display()),
            2,
        );
    }
    let store = match db::open(a.db.as_deref()) {
        Ok(s) => s,
        Err(e) => return super::fail(e, 2),
    };
    let mut ids = Vec::new();
    for r in &a.runs {
        match r.parse::<i64>() {
            Ok(id) => ids.push(id),
            Err(_) => match store.ids_with_label(r) {
                Ok(v) if !v.is_empty() => ids.extend(v),
                Ok(_) => {
                    return super::fail(format!("'{r}' is neither a run id nor a stored label"), 2);
                }
                Err(e) => return super::fail(e, 1),
            },
        }
    }
    let mut runs = Vec::new();
    for id in ids {
        let run = match db::get(&store, id) {
            Ok(r) => r,
            Err(e) => return super::fail(e, 2),
        };
        let body = if run.kind == kind::TREE {
            run.tree_result().map(Body::Tree)
        } else {
            run.result().map(Body::Run)
        };
        match body {
            Ok(b) => runs.push((run, b)),
            Err(e) => return super::fail(e, 1),
        }
    }
    let page = match report::html(&runs, db::when) {
        Ok(p) => p,
        Err(e) => return super::fail(format!("report: {e}"), 1),
    };
    match super::write_out(&page, Some(&a.output)) {
        Ok(()) => {
            eprintln!(
                "iolab: report of {} run(s) written to {}",
                runs.len(),
                a.output.display()
            );
            0
        }
        Err(e) => super::fail(e, 1),
    }
}
