//! A sweep shown: one row per point with its key figures (and the spread
//! of the chosen figure over repetitions), and the figure against the
//! first swept key, one line per combination of the others.

use super::chart::{Chart, Series};
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
            row.push(fig(stats::stddev(&d.summary.samples(m.key))));
        }
        row.push(d.run.map(|i| i.to_string()).unwrap_or_default());
        t.push(row);
    }
    t
}

/// `m` against the first swept key; one line per combination of the others.
pub fn chart(s: &SweepResult, m: &MetricDef) -> Chart {
    let x = &s.vary[0];
    let numeric = x.values.iter().all(|v| v.parse::<f64>().is_ok());
    let mut lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
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
        let y = d.summary.samples(m.key);
        let y = if y.is_empty() {
            d.summary.get(m.key)
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
