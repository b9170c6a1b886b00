//! Key figures of a run: the numbers `history`, `sweep`, `compare` and
//! `export` show, computed the same way for every kind of run (iolab run,
//! imported fio result, tree phases), per repetition and for the whole run.

use crate::counters::CounterDelta;
use crate::runner::{RunResult, Totals};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which direction of change is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// More is better (IOPS, bandwidth).
    Higher,
    /// Less is better (time, latency, CPU).
    Lower,
    /// Neither: a count of work done (ops, bytes, reads, writes).
    Neutral,
}

/// One key figure.
#[derive(Debug, Clone, Copy)]
pub struct MetricDef {
    /// Key in [`Figures`].
    pub key: &'static str,
    /// Column heading.
    pub label: &'static str,
    /// Which way is better.
    pub better: Better,
}

/// Every key figure, in display order.
pub const METRICS: &[MetricDef] = &[
    MetricDef {
        key: "time_s",
        label: "time (s)",
        better: Better::Lower,
    },
    MetricDef {
        key: "ops",
        label: "ops",
        better: Better::Neutral,
    },
    MetricDef {
        key: "bytes",
        label: "bytes",
        better: Better::Neutral,
    },
    MetricDef {
        key: "iops",
        label: "IOPS",
        better: Better::Higher,
    },
    MetricDef {
        key: "bw_mib_s",
        label: "MiB/s",
        better: Better::Higher,
    },
    MetricDef {
        key: "p50_us",
        label: "p50 (us)",
        better: Better::Lower,
    },
    MetricDef {
        key: "p99_us",
        label: "p99 (us)",
        better: Better::Lower,
    },
    MetricDef {
        key: "cpu_pct",
        label: "CPU %",
        better: Better::Lower,
    },
    MetricDef {
        key: "dev_reads",
        label: "reads",
        better: Better::Neutral,
    },
    MetricDef {
        key: "dev_writes",
        label: "writes",
        better: Better::Neutral,
    },
    MetricDef {
        key: "inodes",
        label: "inodes",
        better: Better::Neutral,
    },
];

/// The definition of `key`, if it is a key figure.
pub fn metric(key: &str) -> Option<&'static MetricDef> {
    METRICS.iter().find(|m| m.key == key)
}

/// The key figure `key`, or an error for `option` listing them all.
pub fn metric_named(option: &str, key: &str) -> crate::Result<&'static MetricDef> {
    metric(key).ok_or_else(|| {
        let all: Vec<&str> = METRICS.iter().map(|m| m.key).collect();
        crate::Error::usage(
            format!("{option} '{key}'"),
            format!("not a key figure ({})", all.join(", ")),
        )
    })
}

/// Key figures by name. Absent keys were not measured (e.g. `inodes` for
/// an `iolab run`, device reads for a file on tmpfs).
pub type Figures = BTreeMap<String, f64>;

/// The key figures of a run and of each of its repetitions.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// The whole run.
    pub total: Figures,
    /// One entry per repetition (the samples statistics are made over).
    pub reps: Vec<Figures>,
}

impl Summary {
    /// Summarises a run: all jobs and clones together.
    pub fn of_run(r: &RunResult) -> Summary {
        let mut reps = Vec::new();
        let mut total = Totals::default();
        let mut counters = CounterDelta::default();
        for (i, rep) in r.repetitions.iter().enumerate() {
            let t = r.rep_totals(i);
            reps.push(figures(&t, Some(&rep.counters)));
            total.add_sequential(&t);
            counters.add(&rep.counters);
        }
        Summary {
            total: figures(&total, Some(&counters)),
            reps,
        }
    }

    /// A figure of the whole run (0 when absent).
    pub fn get(&self, key: &str) -> f64 {
        self.total.get(key).copied().unwrap_or(0.0)
    }

    /// The samples of `key`: one per repetition that measured it.
    pub fn samples(&self, key: &str) -> Vec<f64> {
        self.reps
            .iter()
            .filter_map(|f| f.get(key).copied())
            .collect()
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
