//! `iolab import`: fio JSON results stored as runs.

use super::db;
use iolab::sys::environment::Environment;
use iolab::store::import::from_fio_json;
use iolab::store::{NewRun, kind};
use iolab::analysis::summary::Summary;
use std::path::PathBuf;

/// Options of `iolab import`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  fio job.fio --output-format=json+ > fio.json && iolab import fio.json --label fio\n  iolab compare fio iolab   # by label"
)]
pub struct ImportArgs {
    /// fio result files (fio --output-format=json or json+).
    #[arg(required = true, value_name = "FIO.json")]
    pub files: Vec<PathBuf>,
    /// Label for the imported runs.
    #[arg(long)]
    pub label: Option<String>,
    /// Results database.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Runs `iolab import`.
pub fn import(a: ImportArgs) -> i32 {
    let mut store = match db::open(a.db.as_deref()) {
        Ok(s) => s,
        Err(e) => return super::fail(e, 2),
    };
    for f in &a.files {
        let shown = f.display().to_string();
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => return super::fail(format!("cannot read {shown}: {e}"), 2),
        };
        // fio may print notes before the JSON document.
        let start = text.find('{').unwrap_or(0);
        let doc: serde_json::Value = match serde_json::from_str(&text[start..]) {
            Ok(d) => d,
            Err(e) => return super::fail(format!("{shown}: not JSON: {e}"), 2),
        };
        let imp = match from_fio_json(&doc, &shown) {
            Ok(i) => i,
            Err(e) => return super::fail(e, 2),
        };
        for n in &imp.notes {
            eprintln!("iolab: note: {shown}: {n}");
        }
        let summary = Summary::of_run(&imp.result);
        let env = Environment {
            hostname: format!(
                "imported from fio {}",
                doc.get("fio version")
                    .and_then(|v| v.as_str())
                    .unwrap_or("?")
            ),
            ..Environment::default()
        };
        let names: Vec<&str> = imp.result.jobs.iter().map(|j| j.name.as_str()).collect();
        let source = doc.to_string();
        let run = NewRun {
            kind: kind::FIO,
            label: a.label.as_deref(),
            name: names.join(","),
            command: format!("iolab import {shown}"),
            env: &env,
            result_json: serde_json::to_string(&imp.result).expect("serialise"),
            summary: &summary,
            sweep: None,
            source_json: Some(&source),
        };
        match store.insert(&run) {
            Ok(id) => eprintln!("iolab: imported {shown} as run {id}"),
            Err(e) => return super::fail(e, 1),
        }
    }
    0
}
