//! The pictures of one run, shared by `iolab report` and `iolab plot`:
//! log2 latency histogram, percentile curve, IOPS over time.

use crate::metrics::LatencyHistogram;
use crate::render::chart::{self, Chart, Series};
use crate::runner::{RunResult, Totals};

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
        y_label: "IOPS".into(),
        series,
        x_names: None,
        log_x: false,
        log_y: false,
    })
}
