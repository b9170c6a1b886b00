//! Key figures: the numbers `history`, `sweep`, `compare` and `export`
//! show, the same for every kind of result (iolab run, imported fio
//! result, tree phases), per repetition and for the whole result. What
//! they are is defined here; each result computes its own
//! (`iolab::runner::RunResult::summary`, `iolab::tree::TreeResult::summary`).

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
        key: "cpu_user_s",
        label: "CPU user (s)",
        better: Better::Lower,
    },
    MetricDef {
        key: "cpu_sys_s",
        label: "CPU sys (s)",
        better: Better::Lower,
    },
    MetricDef {
        key: "storage_read_bytes",
        label: "read from storage",
        better: Better::Neutral,
    },
    MetricDef {
        key: "cache_hits",
        label: "cache hits",
        better: Better::Neutral,
    },
    MetricDef {
        key: "cache_misses",
        label: "cache misses",
        better: Better::Neutral,
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
