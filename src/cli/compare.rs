//! `iolab compare A B`: stored runs, labels, or jobs run now (interleaved
//! A B A B so drift hits both sides alike), compared figure by figure with
//! the spread of each side and Welch's t-test.

use super::db;
use super::exec::{run_jobs, stop_on_signals};
use iolab::analysis::compare::{self, Row, Side};
use iolab::render::chart::Chart;
use iolab::render::table::TableFormat;
use iolab::job;
use iolab::store::Store;
use iolab::analysis::summary::Summary;
use std::path::{Path, PathBuf};

const AFTER_HELP: &str = "\
A and B are each: a run id (from `iolab history`), a label (all runs with it,
every repetition a sample), a fio job file, or a quoted set of fio options.
Job files and option sets are run now, --repeat times each, interleaved.

Examples:
  iolab compare 12 15
  iolab compare before after --format markdown
  iolab compare --repeat 5 A.fio B.fio --plot ab.svg
  iolab compare --repeat 5 '--name=a --filename=/tmp/f --size=256M --rw=read --bs=4k' \\
                           '--name=b --filename=/tmp/f --size=256M --rw=read --bs=1m'";

/// Options of `iolab compare`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct CompareArgs {
    /// Side A (baseline).
    #[arg(value_name = "A", allow_hyphen_values = true)]
    pub a: String,
    /// Side B.
    #[arg(value_name = "B", allow_hyphen_values = true)]
    pub b: String,
    /// Runs of each job side, interleaved A B A B.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub repeat: u32,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: TableFormat,
    /// Bar chart of B relative to A (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Where runs made now go; a --label L stores them as L:A and L:B.
    #[command(flatten)]
    pub store: super::db::StoreOpts,
}

/// What a side argument names.
enum Spec {
    Stored(Vec<i64>),
    Jobs(Vec<String>),
}

fn resolve(arg: &str, store: Option<&Store>) -> Result<Spec, String> {
    if let (Ok(id), Some(s)) = (arg.parse::<i64>(), store)
        && s.get(id).map_err(|e| e.to_string())?.is_some()
    {
        return Ok(Spec::Stored(vec![id]));
    }
    if Path::new(arg).is_file() {
        return Ok(Spec::Jobs(vec![arg.to_string()]));
    }
    if arg.trim_start().starts_with("--") {
        return Ok(Spec::Jobs(
            arg.split_whitespace().map(String::from).collect(),
        ));
    }
    if let Some(s) = store {
        let ids = s.ids_with_label(arg).map_err(|e| e.to_string())?;
        if !ids.is_empty() {
            return Ok(Spec::Stored(ids));
        }
    }
    Err(format!(
        "'{arg}' is not a stored run id, a label, a job file, or a quoted set of --options"
    ))
}

fn side_name(arg: &str) -> String {
    if arg.trim_start().starts_with("--") {
        arg.split_whitespace()
            .find_map(|a| a.strip_prefix("--name="))
            .unwrap_or("options")
            .to_string()
    } else {
        Path::new(arg)
            .file_name()
            .map_or_else(|| arg.to_string(), |n| n.to_string_lossy().into_owned())
    }
}

/// Runs `iolab compare`.
pub fn execute(a: CompareArgs) -> i32 {
    if a.repeat == 0 {
        return super::fail("--repeat 0: need at least one run per side", 2);
    }
    if let Some(p) = &a.plot {
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "svg" | "png") {
            return super::fail(
                format!("--plot {}: name must end in .svg or .png", p.display()),
                2,
            );
        }
    }
    // A database is needed to read stored sides and to store new runs.
    let mut store = match db::open(a.store.db.as_deref()) {
        Ok(s) => Some(s),
        Err(e) if a.store.no_store => {
            eprintln!("iolab: note: {e}: only job sides can be compared");
            None
        }
        Err(e) => return super::fail(e, 2),
    };
    let specs = match (resolve(&a.a, store.as_ref()), resolve(&a.b, store.as_ref())) {
        (Ok(x), Ok(y)) => [x, y],
        (Err(e), _) => return super::fail(format!("A: {e}"), 2),
        (_, Err(e)) => return super::fail(format!("B: {e}"), 2),
    };
    let mut sides = [
        Side {
            name: side_name(&a.a),
            ..Side::default()
        },
        Side {
            name: side_name(&a.b),
            ..Side::default()
        },
    ];
    // Stored sides first; check that job sides parse before running anything.
    let mut job_args: [Option<Vec<String>>; 2] = [None, None];
    for (i, sp) in specs.iter().enumerate() {
        match sp {
            Spec::Stored(ids) => {
                let st = store.as_ref().expect("stored side implies a database");
                for id in ids {
                    let r = match db::get(st, *id) {
                        Ok(r) => r,
                        Err(e) => return super::fail(e, 2),
                    };
                    sides[i].samples.extend(r.summary.reps.iter().cloned());
                    sides[i].runs.push(*id);
                }
                if let [id] = ids.as_slice() {
                    sides[i].name = format!("run {id}");
                }
            }
            Spec::Jobs(args) => {
                if let Err(e) = job::jobs_from_args(args) {
                    return super::fail(format!("{}: {e}", ["A", "B"][i]), 2);
                }
                job_args[i] = Some(args.clone());
            }
        }
    }
    let running = job_args.iter().any(Option::is_some);
    if running {
        let stop = match stop_on_signals() {
            Ok(s) => s,
            Err(e) => return super::fail(e, 1),
        };
        let prefix =
            a.store.label.clone().unwrap_or_else(|| {
                format!("compare-{}", chrono::Local::now().format("%Y%m%d-%H%M%S"))
            });
        for round in 0..a.repeat {
            for i in 0..2 {
                let Some(args) = &job_args[i] else { continue };
                let which = ["A", "B"][i];
                eprintln!(
                    "iolab: compare round {}/{}: {which} ({})",
                    round + 1,
                    a.repeat,
                    sides[i].name
                );
                let jobs = job::jobs_from_args(args).expect("checked above");
                let result = match run_jobs(jobs, &stop) {
                    Ok(r) => r,
                    Err((e, c)) => return super::fail(format!("{which}: {e}"), c),
                };
                sides[i].samples.extend(Summary::of_run(&result).reps);
                if let (Some(st), false) = (&mut store, a.store.no_store) {
                    let label = format!("{prefix}:{which}");
                    let cmd = format!("iolab compare ({which}) {}", args.join(" "));
                    match st.insert_run(&result, &cmd, Some(&label), None) {
                        Ok(id) => sides[i].runs.push(id),
                        Err(e) => eprintln!("iolab: warning: run not stored: {e}"),
                    }
                }
            }
        }
        if store.is_some() && !a.store.no_store {
            eprintln!("iolab: runs stored with labels {prefix}:A and {prefix}:B");
        }
    }
    let rows = compare::compare(&sides[0], &sides[1]);
    if rows.is_empty() {
        return super::fail("the two sides have no key figure in common", 1);
    }
    let out = render(&rows, &sides, a.format);
    print!("{out}");
    if let Some(p) = &a.plot {
        match chart(&rows, &sides).save(p) {
            Ok(()) => eprintln!("iolab: plot written to {}", p.display()),
            Err(e) => return super::fail(e, 1),
        }
    }
    0
}

fn render(rows: &[Row], sides: &[Side; 2], f: TableFormat) -> String {
    let [a, b] = sides;
    match f {
        TableFormat::Json => {
            let side = |s: &Side| serde_json::json!({"name": s.name, "runs": s.runs, "samples": s.samples.len()});
            let v = serde_json::json!({
                "a": side(a),
                "b": side(b),
                "test": "Welch's t-test, two-sided",
                "alpha": compare::ALPHA,
                "rows": rows,
            });
            serde_json::to_string_pretty(&v).expect("serialise") + "\n"
        }
        TableFormat::Csv => compare::table(rows, a, b).render(f),
        _ => {
            let runs = |s: &Side| {
                if s.runs.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", runs {}",
                        s.runs
                            .iter()
                            .map(|r| r.to_string())
                            .collect::<Vec<_>>()
                            .join(",")
                    )
                }
            };
            let head = format!(
                "A = {} ({} samples{})\nB = {} ({} samples{})\nchange = (B - A) / A; significance by Welch's t-test over the samples (p < {})\n\n",
                a.name,
                a.samples.len(),
                runs(a),
                b.name,
                b.samples.len(),
                runs(b),
                compare::ALPHA
            );
            head + &compare::table(rows, a, b).render(f)
        }
    }
}

/// B as a percentage of A per figure, with each side's spread.
fn chart(rows: &[Row], sides: &[Side; 2]) -> Chart {
    let rows: Vec<&Row> = rows.iter().filter(|r| r.a_mean != 0.0).collect();
    let rel = |m: f64, r: &Row| 100.0 * m / r.a_mean.abs();
    Chart::Bars {
        title: format!("{} relative to {} (A = 100)", sides[1].name, sides[0].name),
        x_label: "key figure".into(),
        y_label: "% of A".into(),
        categories: rows.iter().map(|r| r.label.to_string()).collect(),
        series: vec![
            (
                format!("A: {}", sides[0].name),
                rows.iter().map(|r| rel(r.a_mean, r)).collect(),
                Some(rows.iter().map(|r| rel(r.a_sd, r)).collect()),
            ),
            (
                format!("B: {}", sides[1].name),
                rows.iter().map(|r| rel(r.b_mean, r)).collect(),
                Some(rows.iter().map(|r| rel(r.b_sd, r)).collect()),
            ),
        ],
    }
}
