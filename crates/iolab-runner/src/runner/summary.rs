//! The key figures of a run ([`crate::metrics::figures`]): per repetition
//! and for the whole run, all jobs and clones together.

use super::{RunResult, Totals};
use crate::counters::CounterDelta;
use crate::metrics::figures::{Figures, Summary};
use crate::metrics::names::DIRECTIONS;

impl RunResult {
    /// The run's key figures: all jobs and clones together.
    pub fn summary(&self) -> Summary {
        let mut reps = Vec::new();
        let mut total = Totals::default();
        let mut counters = CounterDelta::default();
        for (i, rep) in self.repetitions.iter().enumerate() {
            let t = self.rep_totals(i);
            reps.push(figures(&t, Some(&rep.counters)));
            total.add_sequential(&t);
            counters.add(&rep.counters);
        }
        let mut total_figures = figures(&total, Some(&counters));
        total_figures.extend(direction_figures(&total));
        Summary {
            total: total_figures,
            reps,
        }
    }
}

/// The figures of each direction that did I/O, under their exported
/// names ([`crate::metrics::names::PER_DIRECTION`]): whole numbers where
/// they are counts or nanoseconds, so they are stored exactly.
pub fn direction_figures(t: &Totals) -> Figures {
    let mut f = Figures::new();
    let secs = t.runtime_ns as f64 / 1e9;
    for (d, s) in DIRECTIONS.iter().zip([&t.read, &t.write, &t.trim]) {
        let ios = s.ios();
        if ios == 0 {
            continue;
        }
        let lat = s.clat_or_lat();
        let mut put = |suffix: &str, v: f64| {
            f.insert(format!("{d}_{suffix}"), v);
        };
        put("ios", ios as f64);
        put("bytes", s.bytes as f64);
        if secs > 0.0 {
            put("iops", ios as f64 / secs);
            put("bw_bytes_per_s", s.bytes as f64 / secs);
        }
        put("clat_mean_ns", lat.mean());
        put("clat_p50_ns", lat.percentile(50.0) as f64);
        put("clat_p99_ns", lat.percentile(99.0) as f64);
        put("clat_p99_9_ns", lat.percentile(99.9) as f64);
        put("clat_max_ns", lat.max() as f64);
    }
    f
}

/// Key figures of one set of totals.
pub fn figures(t: &Totals, counters: Option<&CounterDelta>) -> Figures {
    let mut f = Figures::new();
    let secs = t.runtime_ns as f64 / 1e9;
    let ops = t.read.ios() + t.write.ios();
    f.insert("time_s".into(), secs);
    f.insert("ops".into(), ops as f64);
    f.insert("bytes".into(), t.io_bytes() as f64);
    if secs > 0.0 {
        f.insert("iops".into(), ops as f64 / secs);
        f.insert(
            "bw_mib_s".into(),
            t.io_bytes() as f64 / secs / (1024.0 * 1024.0),
        );
    }
    let mut lat = t.read.clat_or_lat().clone();
    lat.merge(t.write.clat_or_lat());
    if lat.count() > 0 {
        f.insert("p50_us".into(), lat.percentile(50.0) as f64 / 1000.0);
        f.insert("p99_us".into(), lat.percentile(99.0) as f64 / 1000.0);
    }
    if t.thread_ns > 0 {
        f.insert("cpu_pct".into(), t.usr_cpu() + t.sys_cpu());
    }
    if let Some(c) = counters
        && !c.disks.is_empty()
    {
        let reads: u64 = c.disks.iter().map(|d| d.read_ios).sum();
        let writes: u64 = c.disks.iter().map(|d| d.write_ios).sum();
        f.insert("dev_reads".into(), reads as f64);
        f.insert("dev_writes".into(), writes as f64);
    }
    f
}
