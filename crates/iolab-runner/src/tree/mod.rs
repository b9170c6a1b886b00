//! Metadata workloads on directory trees, fdtree/mdtest style: create a
//! tree of D directories per level, L levels, F files of S bytes per
//! directory; walk it, read it, copy it (rsync -a), remove it. Every
//! operation is timed into a histogram per operation type, each phase
//! carries the kernel's counters, and a phase stops cleanly at a time limit,
//! at ENOSPC, or on Ctrl-C, reporting what it achieved.

pub mod copy;
pub mod create;
pub mod mark;
pub mod ops;
pub mod options;
pub mod remove;
pub mod walk;

use crate::counters::CounterDelta;
use crate::metrics::figures::{Figures, Summary};
use crate::metrics::{CpuUsage, LatencyHistogram};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// fdtree's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Subdirectories of each directory above the last level.
    pub dirs: u64,
    /// Levels below the top directory.
    pub levels: u32,
    /// Files in every directory (the top one too).
    pub files: u64,
    /// Bytes per file.
    pub size: u64,
    /// Bytes per write.
    pub bs: u64,
}

impl Shape {
    /// Directories including the top one: 1 + D + D² + ... + D^L.
    pub fn total_dirs(&self) -> u64 {
        (0..=self.levels).map(|l| self.dirs.saturating_pow(l)).sum()
    }

    /// Files in the whole tree.
    pub fn total_files(&self) -> u64 {
        self.total_dirs().saturating_mul(self.files)
    }
}

/// Why a phase ended before its work was done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stopped {
    /// `--time-limit` reached.
    TimeLimit,
    /// The file system is full (ENOSPC or EDQUOT), at this path.
    NoSpace(String),
    /// Ctrl-C.
    Interrupted,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stopped::TimeLimit => write!(f, "time limit reached"),
            Stopped::NoSpace(p) => write!(f, "file system full (ENOSPC) at {p}"),
            Stopped::Interrupted => write!(f, "interrupted"),
        }
    }
}

/// One timed phase (directory create, file create, walk, copy, ...).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Phase {
    /// Phase name.
    pub name: String,
    /// Latency per operation type (mkdir, create, write, close, stat...).
    pub ops: BTreeMap<String, LatencyHistogram>,
    /// Directories the phase handled (made, read, removed).
    pub dirs: u64,
    /// Files the phase handled.
    pub files: u64,
    /// Inodes created.
    pub inodes_created: u64,
    /// Inodes removed.
    pub inodes_removed: u64,
    /// Bytes written or read.
    pub bytes: u64,
    /// Wall time.
    pub elapsed_ns: u64,
    /// CPU of the process over the phase.
    pub cpu: CpuUsage,
    /// Kernel counters over the phase.
    pub counters: CounterDelta,
    /// Set when the phase stopped early.
    pub stopped: Option<Stopped>,
}

impl Phase {
    /// Operations of all types.
    pub fn total_ops(&self) -> u64 {
        self.ops.values().map(LatencyHistogram::count).sum()
    }

    /// Every operation's latency in one histogram.
    pub fn all_ops(&self) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for v in self.ops.values() {
            h.merge(v);
        }
        h
    }
}

/// The result of one `iolab tree` command.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TreeResult {
    /// create, walk, read, copy or remove.
    pub command: String,
    /// The tree (the source for copy).
    pub dir: PathBuf,
    /// The destination of a copy.
    pub dest: Option<PathBuf>,
    /// The shape asked for (create).
    pub shape: Option<Shape>,
    /// Threads used.
    pub threads: u32,
    /// Phases in order.
    pub phases: Vec<Phase>,
    /// Wall-clock start, seconds since the epoch.
    pub started_unix: u64,
}

impl TreeResult {
    /// The first early stop, if any phase stopped early.
    pub fn stopped(&self) -> Option<&Stopped> {
        self.phases.iter().find_map(|p| p.stopped.as_ref())
    }

    /// Inodes this command touched: created, removed, or (walk, read) visited.
    pub fn inodes(&self) -> u64 {
        let changed: u64 = self
            .phases
            .iter()
            .map(|p| p.inodes_created + p.inodes_removed)
            .sum();
        if changed > 0 {
            changed
        } else {
            self.phases
                .iter()
                .map(|p| p.dirs + p.files)
                .max()
                .unwrap_or(0)
        }
    }
}

impl TreeResult {
    /// The key figures of a tree command (one sample: the whole command).
    pub fn summary(&self) -> Summary {
        let t = self;
        let mut f = Figures::new();
        let ns: u64 = t.phases.iter().map(|p| p.elapsed_ns).sum();
        let ops: u64 = t.phases.iter().map(Phase::total_ops).sum();
        let bytes: u64 = t.phases.iter().map(|p| p.bytes).sum();
        let secs = ns as f64 / 1e9;
        f.insert("time_s".into(), secs);
        f.insert("ops".into(), ops as f64);
        f.insert("bytes".into(), bytes as f64);
        if secs > 0.0 {
            f.insert("iops".into(), ops as f64 / secs);
            f.insert("bw_mib_s".into(), bytes as f64 / secs / (1024.0 * 1024.0));
            let cpu_us: u64 = t.phases.iter().map(|p| p.cpu.user_us + p.cpu.sys_us).sum();
            f.insert("cpu_pct".into(), cpu_us as f64 / 1e6 / secs * 100.0);
        }
        let mut all = LatencyHistogram::new();
        for p in &t.phases {
            all.merge(&p.all_ops());
        }
        if all.count() > 0 {
            f.insert("p50_us".into(), all.percentile(50.0) as f64 / 1000.0);
            f.insert("p99_us".into(), all.percentile(99.0) as f64 / 1000.0);
        }
        if t.phases.iter().any(|p| !p.counters.disks.is_empty()) {
            let sum = |g: fn(&crate::counters::diskstats::DiskDelta) -> u64| -> f64 {
                t.phases
                    .iter()
                    .flat_map(|p| p.counters.disks.iter())
                    .map(g)
                    .sum::<u64>() as f64
            };
            f.insert("dev_reads".into(), sum(|d| d.read_ios));
            f.insert("dev_writes".into(), sum(|d| d.write_ios));
        }
        f.insert("inodes".into(), t.inodes() as f64);
        Summary {
            total: f.clone(),
            reps: vec![f],
        }
    }
}
