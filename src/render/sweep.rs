//! A sweep shown: one row per point with its key figures (and the spread
//! of the chosen figure over repetitions), and the figure against the
//! first swept key, one line per combination of the others.

use super::chart::{Chart, Scale, Series};
use super::table::{Table, fig};
use crate::analysis::stats;
use crate::analysis::sweep::SweepResult;
use crate::metrics::figures::MetricDef;
use std::collections::BTreeMap;

/// The table: swept keys, IOPS, MiB/s, p50, p99, CPU, the spread of `m`
/// when points were repeated, and the stored run.
pub fn table(s: &SweepResult, m: &MetricDef) -> Table {
    let mut headers: Vec<String> = s.vary.iter().map(|v| v.key.clone()).collect();
    headers.extend(["IOPS", "MiB/s", "p50 (us)", "p99 (us)", "CPU %"].map(String::from));
    let multi = s.done.iter().any(|d| d.summary.reps.len() > 1);
    if multi {
        headers.push(format!("{} ±sd", m.label));
    }
    headers.push("run".into());
    let mut t = Table::new(headers);
    for d in &s.done {
        let mut row: Vec<String> = s.vary.iter().map(|v| d.point[&v.key].clone()).collect();
        for k in ["iops", "bw_mib_s", "p50_us", "p99_us", "cpu_pct"] {
            row.push(d.summary.total.get(k).map(|v| fig(*v)).unwrap_or_default());
        }
        if multi {
            // One repetition has no known spread: "-", never 0.
            let samples = d.summary.samples(m.key);
            row.push(match samples.len() {
                0 | 1 => "-".into(),
                _ => fig(stats::stddev(&samples)),
            });
        }
        row.push(d.run.map(|i| i.to_string()).unwrap_or_default());
        t.push(row);
    }
    t
}

/// `m` against the first swept key; one line per combination of the
/// others. A point run more than once is the mean of its repetitions with
/// an error bar from their minimum to their maximum.
pub fn chart(s: &SweepResult, m: &MetricDef) -> Chart {
    let x = &s.vary[0];
    let numeric = x.values.iter().all(|v| v.parse::<f64>().is_ok());
    type Line = (Vec<(f64, f64)>, Vec<(f64, f64)>);
    let mut lines: BTreeMap<String, Line> = BTreeMap::new();
    let mut reps = 1;
    for d in &s.done {
        let rest: Vec<String> = s.vary[1..]
            .iter()
            .map(|v| format!("{}={}", v.key, d.point[&v.key]))
            .collect();
        let xv = if numeric {
            d.point[&x.key].parse().unwrap_or(0.0)
        } else {
            x.values
                .iter()
                .position(|v| *v == d.point[&x.key])
                .unwrap_or(0) as f64
        };
        let samples = d.summary.samples(m.key);
        reps = reps.max(samples.len());
        let (y, lo, hi) = if samples.is_empty() {
            let y = d.summary.get(m.key);
            (y, y, y)
        } else {
            let lo = samples.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (stats::mean(&samples), lo, hi)
        };
        let line = lines.entry(rest.join(" ")).or_default();
        line.0.push((xv, y));
        line.1.push((lo, hi));
    }
    let title = format!("{} vs {}", m.label, x.key);
    Chart::Lines {
        title: if reps > 1 {
            format!("{title} (mean of {reps} repetitions, bars from min to max)")
        } else {
            title
        },
        x_label: key_with_unit(&x.key),
        y_label: metric_with_unit(m),
        series: lines
            .into_iter()
            .map(|(name, (points, spread))| Series {
                name: if name.is_empty() {
                    m.label.into()
                } else {
                    name
                },
                points,
                spread: (reps > 1).then_some(spread),
            })
            .collect(),
        x_names: (!numeric).then(|| x.values.clone()),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
    }
}

/// The axis label of a swept job option, with its unit where iolab knows it.
fn key_with_unit(key: &str) -> String {
    let unit = match key {
        "bs" | "blocksize" | "size" | "filesize" | "io_size" => "bytes",
        "iodepth" => "I/Os in flight",
        "numjobs" => "jobs",
        "nrfiles" => "files",
        _ => return key.to_string(),
    };
    format!("{key} ({unit})")
}

/// The axis label of a key figure, with its unit.
fn metric_with_unit(m: &MetricDef) -> String {
    match m.key {
        "iops" => "IOPS (I/Os per second)".into(),
        "bw_mib_s" => "bandwidth (MiB/s)".into(),
        "ops" => "operations (count)".into(),
        "bytes" => "bytes (B)".into(),
        "cpu_pct" => "CPU (%)".into(),
        "dev_reads" | "dev_writes" | "inodes" => format!("{} (count)", m.label),
        _ => m.label.into(),
    }
}
