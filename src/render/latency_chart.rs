//! Latency pictures of histograms: the CCDF (fraction of I/Os slower than
//! x, both axes log), log-count power-of-two histograms, and latency at
//! fio's percentiles.

use super::axis::{Scale, micros};

/// A power-of-two bucket's lower bound (ns) in two or three digits:
/// 512ns, 1µs, 4.1µs, 16µs, 131µs, 1ms, 2.1ms.
fn bucket_name(ns: u64) -> String {
    let us = ns as f64 / 1000.0;
    let unit = if us >= 1e6 {
        1e6
    } else if us >= 1e3 {
        1e3
    } else {
        1.0
    };
    let v = us / unit;
    let v = if v < 10.0 {
        (v * 10.0).round() / 10.0
    } else {
        v.round()
    };
    micros(v * unit)
}
use super::chart::{Chart, Series};
use crate::metrics::LatencyHistogram;
use crate::metrics::histogram::FIO_PERCENTILES;

/// The fraction of operations slower than x, against x (µs), for each
/// histogram: one point per bucket, from its top value; both axes log, so
/// the tail (down to one operation in the count) stays visible.
pub fn ccdf(title: &str, hists: &[(&str, &LatencyHistogram)]) -> Chart {
    let series = hists
        .iter()
        .filter(|(_, h)| h.count() > 0)
        .map(|(name, h)| {
            // A step per bucket: flat from the previous bucket to this one's
            // lowest value, then down to what is slower than its top.
            let total: u64 = h.bins().iter().map(|b| b.1).sum();
            let frac = |seen: u64| (total - seen) as f64 / total as f64;
            let us = |ns: u64| ns.max(1) as f64 / 1000.0;
            let mut seen = 0u64;
            let mut points = Vec::new();
            for ((low, c), (top, _)) in h.bins_low().into_iter().zip(h.bins()) {
                points.push((us(low.max(h.min())), frac(seen)));
                seen += c;
                if seen < total {
                    points.push((us(top), frac(seen)));
                }
            }
            Series::new(*name, points)
        })
        .collect();
    Chart::Lines {
        title: title.into(),
        x_label: "latency, log scale (ns/µs/ms)".into(),
        y_label: "fraction of I/Os slower than x (log scale)".into(),
        series,
        x_names: None,
        x_scale: Scale::LogMicros,
        y_scale: Scale::Log,
    }
}

/// log2 latency histograms (dtrace's quantize) of several operations as
/// grouped bars on a log count axis, one group per power-of-two bucket.
pub fn log2_histogram(title: &str, hists: &[(&str, &LatencyHistogram)]) -> Chart {
    let mut lo = u64::MAX;
    let mut hi = 0;
    for (_, h) in hists {
        for (b, c) in h.log2_buckets() {
            if c > 0 {
                lo = lo.min(b);
                hi = hi.max(b);
            }
        }
    }
    let mut buckets = Vec::new();
    if hi > 0 {
        let mut b = lo.max(1);
        while b <= hi {
            buckets.push(b);
            b *= 2;
        }
    }
    let series = hists
        .iter()
        .map(|(name, h)| {
            let m: std::collections::BTreeMap<u64, u64> = h.log2_buckets().into_iter().collect();
            (
                name.to_string(),
                buckets
                    .iter()
                    .map(|b| m.get(b).copied().unwrap_or(0) as f64)
                    .collect(),
            )
        })
        .collect();
    Chart::Counts {
        title: title.into(),
        x_label: "latency bucket, lower bound (ns/µs/ms, powers of two)".into(),
        y_label: "operations (count, log scale)".into(),
        categories: buckets.iter().map(|b| bucket_name(*b)).collect(),
        series,
    }
}

/// Latency (log scale) against percentile (fio's percentile list).
pub fn percentile_curve(title: &str, hists: &[(&str, &LatencyHistogram)]) -> Chart {
    let pcts: Vec<f64> = FIO_PERCENTILES
        .iter()
        .copied()
        .filter(|p| *p >= 10.0)
        .collect();
    Chart::Lines {
        title: title.into(),
        x_label: "percentile (%)".into(),
        y_label: "latency, log scale (ns/µs/ms)".into(),
        series: hists
            .iter()
            .filter(|(_, h)| h.count() > 0)
            .map(|(name, h)| {
                Series::new(
                    *name,
                    pcts.iter()
                        .enumerate()
                        .map(|(i, p)| (i as f64, h.percentile(*p) as f64 / 1000.0))
                        .collect(),
                )
            })
            .collect(),
        x_names: Some(pcts.iter().map(|p| format!("{p}")).collect()),
        x_scale: Scale::Linear,
        y_scale: Scale::LogMicros,
    }
}
