//! `iolab show` and `iolab export`: stored runs rendered again.

use super::db;
use iolab::render::stored::{header, summary_table};
use iolab::render::table::TableFormat;
use iolab::render::{OutputFormat, exporter};
use iolab::store::{Store, StoredRun, kind};
use serde_json::{Value, json};
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
    /// Results database.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

fn load(
    dbp: Option<&std::path::Path>,
    ids: &[String],
) -> Result<(Store, Vec<StoredRun>), (String, i32)> {
    let store = db::open(dbp).map_err(|e| (e, 2))?;
    let mut runs = Vec::new();
    for s in ids {
        let id = db::parse_id(s).map_err(|e| (e, 2))?;
        runs.push(db::get(&store, id).map_err(|e| (e, 2))?);
    }
    Ok((store, runs))
}

/// The stored run as fio-schema JSON plus an `iolab_run` object.
pub fn run_json(r: &StoredRun, bins: bool) -> Result<Value, String> {
    if r.kind == kind::TREE {
        let t = r.tree_result().map_err(|e| e.to_string())?;
        let mut v = iolab::render::tree::json(&t, bins);
        v["iolab_run"] = meta(r);
        return Ok(v);
    }
    let result = r.result().map_err(|e| e.to_string())?;
    let text = exporter(if bins {
        OutputFormat::JsonPlus
    } else {
        OutputFormat::Json
    })
    .render(&result);
    let mut v: Value = serde_json::from_str(&text).map_err(|e| format!("run {}: {e}", r.id))?;
    if let Value::Object(o) = &mut v {
        o.insert("iolab_run".into(), meta(r));
    }
    Ok(v)
}

fn meta(r: &StoredRun) -> Value {
    json!({
        "id": r.id,
        "stored": db::when(r.created_unix),
        "created_unix": r.created_unix,
        "label": r.label,
        "kind": r.kind,
        "name": r.name,
        "command": r.command,
        "iolab_version": r.iolab_version,
        "sweep_id": r.sweep_id,
        "point": r.point,
        "environment": r.env,
        "summary": r.summary,
    })
}

/// Runs `iolab show`.
pub fn show(a: ShowArgs) -> i32 {
    let (_store, runs) = match load(a.db.as_deref(), std::slice::from_ref(&a.id)) {
        Ok(v) => v,
        Err((e, c)) => return super::fail(e, c),
    };
    let r = &runs[0];
    if a.source {
        return match &r.source_json {
            Some(s) => {
                println!("{s}");
                0
            }
            None => super::fail(
                format!("run {} was not imported: it has no source document", r.id),
                2,
            ),
        };
    }
    let out = match a.output_format {
        OutputFormat::Normal if r.kind == kind::TREE => r
            .tree_result()
            .map(|t| {
                format!(
                    "{}\n{}",
                    header(r, &db::when(r.created_unix)),
                    iolab::render::tree::text(&t)
                )
            })
            .map_err(|e| e.to_string()),
        OutputFormat::Normal => r
            .result()
            .map(|res| {
                format!(
                    "{}\n{}",
                    header(r, &db::when(r.created_unix)),
                    exporter(OutputFormat::Normal).render(&res)
                )
            })
            .map_err(|e| e.to_string()),
        f => run_json(r, f == OutputFormat::JsonPlus)
            .map(|v| serde_json::to_string_pretty(&v).expect("serialise") + "\n"),
    };
    match out {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(e) => super::fail(e, 1),
    }
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
    /// Results database.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Runs `iolab export`.
pub fn export(a: ExportArgs) -> i32 {
    let (_store, runs) = match load(a.db.as_deref(), &a.ids) {
        Ok(v) => v,
        Err((e, c)) => return super::fail(e, c),
    };
    let text = match a.format {
        ExportFormat::Json => {
            let all: Result<Vec<Value>, String> = runs.iter().map(|r| run_json(r, false)).collect();
            match all {
                Ok(v) => serde_json::to_string_pretty(&v).expect("serialise") + "\n",
                Err(e) => return super::fail(e, 1),
            }
        }
        ExportFormat::Csv => summary_table(&runs, db::when).render(TableFormat::Csv),
        ExportFormat::Markdown => summary_table(&runs, db::when).render(TableFormat::Markdown),
    };
    match super::write_out(&text, a.output.as_deref()) {
        Ok(()) => 0,
        Err(e) => super::fail(e, 1),
    }
}
