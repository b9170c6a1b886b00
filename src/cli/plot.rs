//! `iolab plot`: one picture of a stored run, as SVG or PNG.

use super::db;
use iolab::render::run_charts;
use std::path::PathBuf;

/// What to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum What {
    /// Operations per power-of-two latency bucket, per operation type.
    Log2,
    /// Latency at fio's percentiles, per operation type.
    Percentiles,
    /// IOPS per interval over the run.
    Timeseries,
}

/// Options of `iolab plot`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab plot 12 --what log2 -o lat.png\n  iolab plot 12 --what percentiles -o p.svg\n  iolab plot 12 --what timeseries -o iops.png"
)]
pub struct PlotArgs {
    /// Run id.
    #[arg(value_name = "ID")]
    pub id: String,
    /// The picture.
    #[arg(long, value_enum, default_value = "log2")]
    pub what: What,
    /// Output file (.svg or .png).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Results database.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Runs `iolab plot`.
pub fn execute(a: PlotArgs) -> i32 {
    let ext = a.output.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !matches!(ext, "svg" | "png") {
        return super::fail(
            format!("-o {}: name must end in .svg or .png", a.output.display()),
            2,
        );
    }
    let id = match db::parse_id(&a.id) {
        Ok(i) => i,
        Err(e) => return super::fail(e, 2),
    };
    let run = match db::open(a.db.as_deref()).and_then(|s| db::get(&s, id)) {
        Ok(r) => r,
        Err(e) => return super::fail(e, 2),
    };
    if run.kind == iolab::store::kind::TREE {
        return plot_tree(&run, a.what, &a.output);
    }
    let result = match run.result() {
        Ok(r) => r,
        Err(e) => return super::fail(e, 1),
    };
    let t = run_charts::whole(&result);
    let name = format!("run {} ({})", run.id, run.name);
    let chart = match a.what {
        What::Log2 => run_charts::log2(&format!("{name}: latency, log2 buckets"), &t),
        What::Percentiles => run_charts::percentiles(&format!("{name}: latency percentiles"), &t),
        What::Timeseries => match run_charts::timeseries(&format!("{name}: IOPS over time"), &t) {
            Some(c) => c,
            None => {
                return super::fail(
                    format!(
                        "run {id} has fewer than two time intervals (it ran under one log_avg_msec)"
                    ),
                    2,
                );
            }
        },
    };
    match chart.save(&a.output) {
        Ok(()) => {
            eprintln!("iolab: wrote {}", a.output.display());
            0
        }
        Err(e) => super::fail(e, 1),
    }
}

/// A tree result: each operation type's latency over all phases.
fn plot_tree(run: &iolab::store::StoredRun, what: What, out: &std::path::Path) -> i32 {
    let t = match run.tree_result() {
        Ok(t) => t,
        Err(e) => return super::fail(e, 1),
    };
    let mut ops: std::collections::BTreeMap<String, iolab::metrics::LatencyHistogram> =
        Default::default();
    for p in &t.phases {
        for (k, h) in &p.ops {
            ops.entry(k.clone()).or_default().merge(h);
        }
    }
    let hists: Vec<(&str, &iolab::metrics::LatencyHistogram)> =
        ops.iter().map(|(k, h)| (k.as_str(), h)).collect();
    let name = format!("run {} ({})", run.id, run.name);
    let chart = match what {
        What::Log2 => {
            iolab::render::chart::log2_histogram(&format!("{name}: latency, log2 buckets"), &hists)
        }
        What::Percentiles => {
            iolab::render::chart::percentile_curve(&format!("{name}: latency percentiles"), &hists)
        }
        What::Timeseries => {
            return super::fail(
                format!("run {} is a tree result: it has no time series", run.id),
                2,
            );
        }
    };
    match chart.save(out) {
        Ok(()) => {
            eprintln!("iolab: wrote {}", out.display());
            0
        }
        Err(e) => super::fail(e, 1),
    }
}
