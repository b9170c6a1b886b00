//! Traces compared call by call: for each system call either side made,
//! its count and latency percentiles in A and in B (`fsync` 120 → 12,
//! p99 4.1 ms → 0.9 ms), beside the comparison's key figures. The
//! figures are those of the traces pooled on each side (counts their mean
//! per trace, latencies from their merged histograms); no test is made
//! on them.

use crate::trace::Trace;
use crate::trace::hist::LogHist;
use serde::Serialize;
use std::collections::BTreeMap;

/// One call on one side.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CallSide {
    /// Calls per trace (the mean over the side's traces).
    pub count: f64,
    /// Failed calls per trace.
    pub errors: f64,
    /// Median latency, nanoseconds.
    pub p50_ns: u64,
    /// 99th percentile latency, nanoseconds.
    pub p99_ns: u64,
    /// Time spent in the call per trace, nanoseconds.
    pub total_ns: f64,
}

/// One call, A beside B.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRow {
    /// The call (`fsync`).
    pub call: String,
    /// In A.
    pub a: CallSide,
    /// In B.
    pub b: CallSide,
    /// (B - A) / A of the count, in percent (None when A made none).
    pub count_change_pct: Option<f64>,
}

/// The calls of `a`'s and `b`'s traces side by side, the most frequent
/// (in either side) first; empty unless both sides have traces.
pub fn rows(a: &[Trace], b: &[Trace]) -> Vec<CallRow> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let (sa, sb) = (side(a), side(b));
    let names: std::collections::BTreeSet<&String> = sa.keys().chain(sb.keys()).collect();
    let mut rows: Vec<CallRow> = names
        .into_iter()
        .map(|n| {
            let (a, b) = (
                sa.get(n).cloned().unwrap_or_default(),
                sb.get(n).cloned().unwrap_or_default(),
            );
            CallRow {
                call: n.clone(),
                count_change_pct: (a.count > 0.0).then(|| (b.count - a.count) / a.count * 100.0),
                a,
                b,
            }
        })
        .collect();
    rows.sort_by(|x, y| {
        let m = |r: &CallRow| r.a.count.max(r.b.count);
        m(y).total_cmp(&m(x)).then(x.call.cmp(&y.call))
    });
    rows
}

/// Each call of `traces`, pooled.
fn side(traces: &[Trace]) -> BTreeMap<String, CallSide> {
    let n = traces.len() as f64;
    let mut pooled: BTreeMap<String, (CallSide, LogHist)> = BTreeMap::new();
    for t in traces {
        for (name, st) in &t.calls {
            let (s, h) = pooled.entry(name.clone()).or_default();
            s.count += st.count as f64 / n;
            s.errors += st.errors as f64 / n;
            s.total_ns += st.sum_ns as f64 / n;
            h.merge(&st.lat);
        }
    }
    (pooled.into_iter())
        .map(|(name, (mut s, h))| {
            (s.p50_ns, s.p99_ns) = (h.percentile(50.0), h.percentile(99.0));
            (name, s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::model::Stats;

    fn trace(calls: &[(&str, u64, u64)]) -> Trace {
        let mut t = Trace::default();
        for &(name, n, lat) in calls {
            let mut s = Stats::default();
            for _ in 0..n {
                s.add(lat, 0, false);
            }
            t.calls.insert(name.into(), s);
        }
        t
    }

    #[test]
    fn calls_of_either_side_with_counts_and_latencies() {
        let a = [trace(&[("fsync", 120, 4_000_000), ("pread64", 10, 5_000)])];
        let b = [trace(&[("fsync", 12, 900_000), ("openat", 3, 2_000)])];
        let r = rows(&a, &b);
        let names: Vec<&str> = r.iter().map(|r| r.call.as_str()).collect();
        assert_eq!(names, ["fsync", "pread64", "openat"]);
        assert_eq!((r[0].a.count, r[0].b.count), (120.0, 12.0));
        assert_eq!(r[0].count_change_pct, Some(-90.0));
        assert_eq!((r[0].a.p50_ns, r[0].b.p99_ns), (4_000_000, 900_000));
        assert_eq!((r[2].a.count, r[2].count_change_pct), (0.0, None));
        assert!(rows(&a, &[]).is_empty());
    }
}
