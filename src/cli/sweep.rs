//! `iolab sweep`: one job run over the cross product of `--vary` values,
//! every point stored, a table like seed 002's and a plot.

use super::exec::{run_jobs, stop_on_signals};
use iolab::render::chart::{Chart, Series};
use iolab::render::table::{Table, TableFormat, fig};
use iolab::job::{self, JobSpec, options};
use iolab::analysis::stats;
use iolab::analysis::summary::{Summary, metric};
use iolab::analysis::sweep::{Vary, parse_vary, points};
use std::collections::BTreeMap;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
JOB is a fio job file and/or fio options (--name=... --rw=...), as for `iolab run`.
KEY is any job option (applied to every job), or a variable the job file uses
as ${KEY}. VALUES: 1..8 | 1..16:2 (step) | 1..64:x2 (doubling) | 4k,16k,64k.

Examples:
  iolab sweep --vary numjobs=1..8 --name=small --filename=/tmp/irmin.dat \\
      --size=3500000B --bsrange=50-300 --rw=randread --number_ios=200000 --thread
  iolab sweep job.fio --vary threads=1..16:x2 --vary bs=4k,64k --repeat 3 --plot bw.svg
  iolab sweep job.fio --vary iodepth=1..32:x2 --metric p99_us --plot p99.png

Metrics: time_s ops bytes iops bw_mib_s p50_us p99_us cpu_pct dev_reads dev_writes";

/// Options of `iolab sweep` (everything else is the job).
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct SweepArgs {
    /// KEY=VALUES to vary; repeat for a cross product (first varies slowest).
    #[arg(long, required = true, value_name = "KEY=VALUES")]
    pub vary: Vec<String>,
    /// Repetitions per point (the job's repeat=); spread shown and plotted.
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,
    /// Key figure for the plot and the spread column.
    #[arg(long, default_value = "iops", value_name = "METRIC")]
    pub metric: String,
    /// Draw the metric against the first swept key (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Table format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: TableFormat,
    /// Where the results go.
    #[command(flatten)]
    pub store: super::db::StoreOpts,
    /// Job files and fio job options.
    #[arg(value_name = "JOB", allow_hyphen_values = true)]
    pub jobs: Vec<String>,
}

/// iolab's own options of `sweep` (the rest is the job).
pub const OWN_VALUED: &[&str] = &[
    "--vary", "--repeat", "--metric", "--plot", "--label", "--format", "--db",
];
/// iolab's own flags of `sweep`.
pub const OWN_FLAGS: &[&str] = &["--no-store", "--help", "-h"];

/// Swept key: a job option or a `${variable}`.
fn check_keys(vary: &[Vary], job_args: &[String]) -> Result<(), String> {
    let mut text = job_args.join("\n");
    for a in job_args.iter().filter(|a| !a.starts_with('-')) {
        text.push_str(&std::fs::read_to_string(a).unwrap_or_default());
    }
    for v in vary {
        if options::lookup(&v.key).is_none() && !text.contains(&format!("${{{}}}", v.key)) {
            return Err(format!(
                "--vary {}: {} and the job does not use ${{{}}}",
                v.key,
                options::unknown_message(&v.key),
                v.key
            ));
        }
    }
    Ok(())
}

/// The jobs of one point.
fn point_jobs(
    job_args: &[String],
    point: &BTreeMap<String, String>,
    repeat: Option<u32>,
) -> Result<Vec<JobSpec>, String> {
    let args: Vec<String> = job_args
        .iter()
        .map(|a| {
            point
                .iter()
                .fold(a.clone(), |s, (k, v)| s.replace(&format!("${{{k}}}"), v))
        })
        .collect();
    let mut jobs = job::ini::with_vars(point, || job::jobs_from_args(&args))?;
    for job in &mut jobs {
        for (k, v) in point {
            if let Some(def) = options::lookup(k) {
                *job = job.with_option(def.name, v)?;
            }
        }
        if let Some(n) = repeat {
            *job = job.with_option("repeat", &n.to_string())?;
        }
    }
    Ok(jobs)
}

/// Runs `iolab sweep`.
pub fn execute(a: SweepArgs, job_args: &[String]) -> i32 {
    let mut job_args = job_args.to_vec();
    job_args.extend(a.jobs.iter().cloned());
    let prep = || -> Result<_, String> {
        let vary: Vec<Vary> = a
            .vary
            .iter()
            .map(|v| parse_vary(v))
            .collect::<Result<_, _>>()?;
        check_keys(&vary, &job_args)?;
        if metric(&a.metric).is_none() {
            return Err(format!(
                "--metric '{}': not a key figure (time_s, ops, bytes, iops, bw_mib_s, p50_us, p99_us, cpu_pct, dev_reads, dev_writes)",
                a.metric
            ));
        }
        if let Some(p) = &a.plot {
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            if !matches!(ext, "svg" | "png") {
                return Err(format!(
                    "--plot {}: name must end in .svg or .png",
                    p.display()
                ));
            }
        }
        let pts = points(&vary)?;
        // Every point is checked before anything runs.
        let jobs = pts
            .iter()
            .map(|p| {
                point_jobs(&job_args, p, a.repeat)
                    .map_err(|e| format!("sweep point {}: {e}", show_point(p)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((vary, pts, jobs))
    };
    let (vary, pts, jobs) = match prep() {
        Ok(v) => v,
        Err(e) => return super::fail(e, 2),
    };
    let mut store = match a.store.open() {
        Ok(s) => s,
        Err(e) => return super::fail(e, 2),
    };
    let stop = match stop_on_signals() {
        Ok(s) => s,
        Err(e) => return super::fail(e, 1),
    };
    let command = format!(
        "iolab sweep {}",
        std::env::args().skip(2).collect::<Vec<_>>().join(" ")
    );
    let sweep_id = match &mut store {
        Some(s) => {
            let v = serde_json::json!(
                vary.iter()
                    .map(|v| (v.key.clone(), v.values.clone()))
                    .collect::<BTreeMap<_, _>>()
            );
            match s.new_sweep(a.store.label(), &command, &v) {
                Ok(id) => Some(id),
                Err(e) => return super::fail(e, 1),
            }
        }
        None => None,
    };
    let mut done: Vec<(BTreeMap<String, String>, Summary, Option<i64>)> = Vec::new();
    let mut code = 0;
    for (i, (p, jobs)) in pts.iter().zip(jobs).enumerate() {
        eprintln!(
            "iolab: sweep point {}/{}: {}",
            i + 1,
            pts.len(),
            show_point(p)
        );
        let result = match run_jobs(jobs, &stop) {
            Ok(r) => r,
            Err((e, c)) => {
                eprintln!("iolab: error: sweep point {}: {e}", show_point(p));
                code = c;
                break;
            }
        };
        let summary = Summary::of_run(&result);
        let id = match (&mut store, sweep_id) {
            (Some(s), Some(sid)) => {
                match s.insert_run(&result, &command, a.store.label(), Some((sid, p))) {
                    Ok(id) => Some(id),
                    Err(e) => {
                        eprintln!("iolab: warning: point not stored: {e}");
                        None
                    }
                }
            }
            _ => None,
        };
        done.push((p.clone(), summary, id));
    }
    if done.is_empty() {
        return if code == 0 { 0 } else { code };
    }
    print!("{}", table(&vary, &done, &a.metric).render(a.format));
    if let Some(sid) = sweep_id {
        eprintln!(
            "iolab: stored sweep {sid} ({} points): iolab history --sweep {sid}",
            done.len()
        );
    }
    if let Some(path) = &a.plot {
        match chart(&vary, &done, &a.metric).save(path) {
            Ok(()) => eprintln!("iolab: plot written to {}", path.display()),
            Err(e) => return super::fail(e, 1),
        }
    }
    if code == 130 {
        eprintln!("iolab: interrupted: table shows the points that finished");
    }
    code
}

fn show_point(p: &BTreeMap<String, String>) -> String {
    p.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

type Done = (BTreeMap<String, String>, Summary, Option<i64>);

fn table(vary: &[Vary], done: &[Done], metric_key: &str) -> Table {
    let mut headers: Vec<String> = vary.iter().map(|v| v.key.clone()).collect();
    headers.extend(["IOPS", "MiB/s", "p50 (us)", "p99 (us)", "CPU %"].map(String::from));
    let multi = done.iter().any(|d| d.1.reps.len() > 1);
    let m = metric(metric_key).expect("checked");
    if multi {
        headers.push(format!("{} ±sd", m.label));
    }
    headers.push("run".into());
    let mut t = Table::new(headers);
    for (p, s, id) in done {
        let mut row: Vec<String> = vary.iter().map(|v| p[&v.key].clone()).collect();
        for k in ["iops", "bw_mib_s", "p50_us", "p99_us", "cpu_pct"] {
            row.push(s.total.get(k).map(|v| fig(*v)).unwrap_or_default());
        }
        if multi {
            row.push(fig(stats::stddev(&s.samples(m.key))));
        }
        row.push(id.map(|i| i.to_string()).unwrap_or_default());
        t.push(row);
    }
    t
}

/// Metric against the first key; one line per combination of the others.
fn chart(vary: &[Vary], done: &[Done], metric_key: &str) -> Chart {
    let m = metric(metric_key).expect("checked");
    let x = &vary[0];
    let numeric = x.values.iter().all(|v| v.parse::<f64>().is_ok());
    let mut lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (p, s, _) in done {
        let rest: Vec<String> = vary[1..]
            .iter()
            .map(|v| format!("{}={}", v.key, p[&v.key]))
            .collect();
        let xv = if numeric {
            p[&x.key].parse().unwrap_or(0.0)
        } else {
            x.values.iter().position(|v| *v == p[&x.key]).unwrap_or(0) as f64
        };
        let y = s
            .reps
            .iter()
            .filter_map(|f| f.get(m.key))
            .copied()
            .collect::<Vec<_>>();
        let y = if y.is_empty() {
            s.get(m.key)
        } else {
            stats::mean(&y)
        };
        lines.entry(rest.join(" ")).or_default().push((xv, y));
    }
    Chart::Lines {
        title: format!("{} vs {}", m.label, x.key),
        x_label: x.key.clone(),
        y_label: m.label.into(),
        series: lines
            .into_iter()
            .map(|(name, points)| Series {
                name: if name.is_empty() {
                    m.label.into()
                } else {
                    name
                },
                points,
            })
            .collect(),
        x_names: (!numeric).then(|| x.values.clone()),
        log_x: false,
        log_y: false,
    }
}
