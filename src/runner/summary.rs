//! The key figures of a run ([`crate::metrics::figures`]): per repetition
//! and for the whole run, all jobs and clones together.

use super::{RunResult, Totals};
use crate::counters::CounterDelta;
use crate::metrics::figures::{Figures, Summary};

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
        Summary {
            total: figures(&total, Some(&counters)),
            reps,
        }
    }
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
