//! The pictures of one run, shared by `iolab report` and `iolab plot`:
//! latency CCDF, log2 latency histogram (log counts), percentile curve,
//! IOPS over time; and the footnote of a stored run's pictures.

use crate::error::{Error, Result};
use crate::metrics::LatencyHistogram;
use crate::render::chart::{self, Chart, Footnote, Scale, Series};
use crate::runner::{RunResult, Totals};
use crate::store::{StoredRun, kind};
use std::collections::BTreeMap;

/// The pictures `iolab plot` draws of a stored run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Picture {
    /// Fraction of operations slower than each latency (both axes log).
    Ccdf,
    /// Operations per power-of-two latency bucket, per operation type.
    Log2,
    /// Latency at fio's percentiles, per operation type.
    Percentiles,
    /// IOPS per interval over the run.
    Timeseries,
}

/// `what` of a stored run (an I/O run, an import or a tree).
pub fn for_stored(run: &StoredRun, what: Picture) -> Result<Chart> {
    let name = format!("run {} ({})", run.id, run.name);
    let none = |why: &str| Error::usage(format!("run {}", run.id), why.to_string());
    if run.kind == kind::TREE {
        let t = run.tree_result()?;
        let mut ops: BTreeMap<String, LatencyHistogram> = BTreeMap::new();
        for p in &t.phases {
            for (k, h) in &p.ops {
                ops.entry(k.clone()).or_default().merge(h);
            }
        }
        let hists: Vec<(&str, &LatencyHistogram)> =
            ops.iter().map(|(k, h)| (k.as_str(), h)).collect();
        return match what {
            Picture::Ccdf => Ok(chart::ccdf(&format!("{name}: latency CCDF"), &hists)),
            Picture::Log2 => Ok(chart::log2_histogram(
                &format!("{name}: latency, log2 buckets"),
                &hists,
            )),
            Picture::Percentiles => Ok(chart::percentile_curve(
                &format!("{name}: latency percentiles"),
                &hists,
            )),
            Picture::Timeseries => Err(none("is a tree result: it has no time series")),
        };
    }
    let t = whole(&run.result()?);
    match what {
        Picture::Ccdf => Ok(ccdf(&format!("{name}: latency CCDF"), &t)),
        Picture::Log2 => Ok(log2(&format!("{name}: latency, log2 buckets"), &t)),
        Picture::Percentiles => Ok(percentiles(&format!("{name}: latency percentiles"), &t)),
        Picture::Timeseries => {
            timeseries(&format!("{name}: IOPS over time"), &t).ok_or_else(|| {
                none("has fewer than two time intervals (it ran under one log_avg_msec)")
            })
        }
    }
}

/// The `svg` output format: the run's latency histogram (log2 buckets).
pub struct Svg;

impl super::Exporter for Svg {
    /// Footnoted with `here`'s host and time.
    fn run(&self, r: &RunResult, here: &super::Here) -> Result<String> {
        let names: Vec<&str> = r.jobs.iter().map(|j| j.name.as_str()).collect();
        log2(
            &format!("{}: latency, log2 buckets", names.join(", ")),
            &whole(r),
        )
        .svg(&here.footnote())
    }
}

/// All clones and repetitions of a run added up.
pub fn whole(r: &RunResult) -> Totals {
    r.combined()
}

/// The latency histograms worth drawing: read, write, fadvise, fsync.
pub fn latencies(t: &Totals) -> Vec<(&'static str, &LatencyHistogram)> {
    [
        ("read", t.read.clat_or_lat()),
        ("write", t.write.clat_or_lat()),
        ("fadvise", &t.advise),
        ("fsync", &t.fsync),
    ]
    .into_iter()
    .filter(|(_, h)| h.count() > 0)
    .collect()
}

/// The footnote of a stored run's pictures: the host it ran on, when it
/// was stored (`when` formats the time) and the iolab that made it.
pub fn footnote(run: &StoredRun, when: impl Fn(i64) -> String) -> Footnote {
    Footnote {
        host: run.env.hostname.clone(),
        date: when(run.created_unix),
        version: run.iolab_version.clone(),
    }
}

/// The fraction of operations slower than each latency.
pub fn ccdf(title: &str, t: &Totals) -> Chart {
    chart::ccdf(title, &latencies(t))
}

/// Operations per power-of-two latency bucket.
pub fn log2(title: &str, t: &Totals) -> Chart {
    chart::log2_histogram(title, &latencies(t))
}

/// Latency at fio's percentiles.
pub fn percentiles(title: &str, t: &Totals) -> Chart {
    chart::percentile_curve(title, &latencies(t))
}

/// IOPS per interval; `None` with fewer than two intervals.
pub fn timeseries(title: &str, t: &Totals) -> Option<Chart> {
    if t.series.len() < 2 {
        return None;
    }
    let mut series = Vec::new();
    for (d, name) in [(0, "read IOPS"), (1, "write IOPS")] {
        if t.series.iter().any(|iv| iv.dirs[d].ios > 0) {
            series.push(Series {
                name: name.into(),
                spread: None,
                points: t
                    .series
                    .iter()
                    .filter(|iv| iv.len_ms > 0)
                    .map(|iv| {
                        (
                            iv.end_ms as f64 / 1000.0,
                            iv.dirs[d].ios as f64 * 1000.0 / iv.len_ms as f64,
                        )
                    })
                    .collect(),
            });
        }
    }
    Some(Chart::Lines {
        title: title.into(),
        x_label: "time (s)".into(),
        y_label: "IOPS (I/Os per second)".into(),
        series,
        x_names: None,
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
    })
}
