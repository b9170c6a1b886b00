//! What the kernel counted while a run went on, each figure with its
//! source: the block devices behind the files ([`diskstats`], shown as
//! iostat's columns and fio's `disk_util`) and the counter sources of
//! [`COUNTERS`] (the process's I/O, getrusage, /proc/vmstat, the ZFS ARC).
//! Reading never prints; a source this machine lacks is simply absent. A
//! new source is one file here and one line in [`COUNTERS`].

pub mod arcstats;
pub mod diskstats;
pub mod injected;
pub mod procfs;

pub use crate::sys::blockdev::Disk;
pub use diskstats::{DiskDelta, DiskStat};

use crate::registry::{self, Entry, entry};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Counter values by name.
pub type Values = BTreeMap<String, u64>;

/// A source of counters, read before and after each repetition.
pub trait Counter: Sync {
    /// What the text report calls it (`process I/O`, `vm`).
    fn label(&self) -> &'static str;

    /// Where the figures come from, shown beside them (`/proc/self/io`).
    fn source(&self) -> &'static str;

    /// Every counter now; `None` when this machine has no such source.
    fn read(&self) -> Option<Values>;

    /// Keys that are levels (a cache size): over an interval the later
    /// value is kept, not the difference.
    fn levels(&self) -> &'static [&'static str] {
        &[]
    }

    /// Figures worked out of the counters of an interval (a hit ratio).
    fn derived(&self, _d: &Values) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// One line for the text report; `None` when the report shows the
    /// figures elsewhere (getrusage's CPU times are in the `cpu` line).
    fn line(&self, d: &Values) -> Option<String> {
        let kv: Vec<String> = d.iter().map(|(k, v)| format!("{k}={v}")).collect();
        Some(kv.join(", "))
    }
}

/// Every counter source, in the order reports show them.
pub static COUNTERS: &[Entry<dyn Counter>] = &[
    entry(
        "process_io",
        &[],
        "",
        "bytes this process asked for (rchar) vs read from storage (read_bytes)",
        &procfs::ProcessIo,
    ),
    entry(
        "rusage",
        &[],
        "",
        "getrusage of the process: CPU, faults, context switches, blocks",
        &procfs::Rusage,
    ),
    entry(
        "vmstat",
        &[],
        "",
        "page-ins, major faults, refaults and reclaim of /proc/vmstat",
        &procfs::Vmstat,
    ),
    entry(
        "zfs_arc",
        &[],
        "ZFS loaded (/proc/spl/kstat/zfs/arcstats)",
        "ZFS ARC hits, misses and hit ratio",
        &arcstats::Arc,
    ),
    entry(
        "injected",
        &[],
        "an iolab disk up (iolab disk up DIR)",
        "operations, delay injected and errors of the iolab disks, per kind of operation",
        &injected::Injected,
    ),
];

/// What every run measures beside the sources above (for `iolab list`).
pub static BUILT_IN: &[Entry<str>] = &[
    entry(
        "diskstats",
        &[],
        "a block device under the files",
        "the disks under the files (/proc/diskstats): iostat's columns, fio's disk_util",
        "",
    ),
    entry(
        "cachestat",
        &[],
        "Linux 6.5+ (else mincore: resident pages only)",
        "page-cache state of the job's files before and after each repetition",
        "",
    ),
];

/// All counters at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Monotonic time in ns.
    pub at_ns: u64,
    /// Disks behind the files and their counters.
    pub disks: Vec<(Disk, Option<DiskStat>)>,
    /// Each source this machine has, by its registry name.
    pub sources: Vec<(&'static str, Values)>,
}

impl Snapshot {
    /// Reads every source now, for the disks in `disks`.
    pub fn take(disks: &[Disk]) -> Snapshot {
        let stats = diskstats::read_all().unwrap_or_default();
        Snapshot {
            at_ns: crate::metrics::clock::now_ns(),
            disks: disks
                .iter()
                .map(|d| (d.clone(), stats.get(&d.name).copied()))
                .collect(),
            sources: COUNTERS
                .iter()
                .filter_map(|e| Some((e.name, e.item.read()?)))
                .collect(),
        }
    }

    /// What happened from `self` to `later`.
    pub fn delta(&self, later: &Snapshot) -> CounterDelta {
        let elapsed_ns = later.at_ns.saturating_sub(self.at_ns);
        let disks = self
            .disks
            .iter()
            .zip(&later.disks)
            .filter_map(|((d, a), (_, b))| {
                Some(DiskDelta::new(d.clone(), &(*a)?, &(*b)?, elapsed_ns))
            })
            .collect();
        let sources = self
            .sources
            .iter()
            .filter_map(|(name, a)| {
                let (_, b) = later.sources.iter().find(|(n, _)| n == name)?;
                let levels = levels(name);
                let d = b
                    .iter()
                    .filter_map(|(k, v)| {
                        let v = if levels.contains(&k.as_str()) {
                            *v
                        } else {
                            v.saturating_sub(*a.get(k)?)
                        };
                        Some((k.clone(), v))
                    })
                    .collect();
                Some((name.to_string(), d))
            })
            .collect();
        CounterDelta {
            elapsed_ns,
            disks,
            sources,
        }
    }
}

/// The level keys of source `name`.
fn levels(name: &str) -> &'static [&'static str] {
    registry::find(COUNTERS, name).map_or(&[], |e| e.item.levels())
}

/// Counter changes over an interval (one repetition, or several added up).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(from = "compat::Wire")]
pub struct CounterDelta {
    /// Length of the interval in ns.
    pub elapsed_ns: u64,
    /// Per disk: diskstats deltas and iostat's columns.
    pub disks: Vec<DiskDelta>,
    /// Each source's counters over the interval, by registry name.
    pub sources: BTreeMap<String, Values>,
}

impl CounterDelta {
    /// Adds a later interval.
    pub fn add(&mut self, o: &CounterDelta) {
        self.elapsed_ns += o.elapsed_ns;
        for d in &o.disks {
            match self.disks.iter_mut().find(|x| x.disk.name == d.disk.name) {
                Some(x) => x.add(d),
                None => self.disks.push(d.clone()),
            }
        }
        for d in &mut self.disks {
            d.elapsed_ns = self.elapsed_ns;
        }
        for (name, vals) in &o.sources {
            let levels = levels(name);
            let mine = self.sources.entry(name.clone()).or_default();
            for (k, v) in vals {
                let e = mine.entry(k.clone()).or_insert(0);
                *e = if levels.contains(&k.as_str()) {
                    *v
                } else {
                    *e + v
                };
            }
        }
    }

    /// Counter `key` of source `source` (0 when absent).
    pub fn get(&self, source: &str, key: &str) -> u64 {
        self.sources
            .get(source)
            .and_then(|s| s.get(key))
            .copied()
            .unwrap_or(0)
    }

    /// Physical bytes read by this process (`/proc/self/io` read_bytes).
    pub fn physical_read_bytes(&self) -> u64 {
        self.get("process_io", "read_bytes")
    }

    /// Logical bytes read (`/proc/self/io` rchar).
    pub fn logical_read_bytes(&self) -> u64 {
        self.get("process_io", "rchar")
    }
}

/// The disks behind `files`, each once.
pub fn disks_of(files: &[PathBuf]) -> Vec<Disk> {
    let mut out: Vec<Disk> = Vec::new();
    for f in files {
        for d in crate::sys::blockdev::disks_behind(f) {
            if !out.iter().any(|x| x.name == d.name) {
                out.push(d);
            }
        }
    }
    out
}

/// Results stored before the counter registry kept each source in its own
/// field (`proc_io`, `rusage`, `vmstat`, `arc`): they read back as sources.
mod compat {
    use super::{CounterDelta, DiskDelta, Values};
    use serde::Deserialize;
    use std::collections::BTreeMap;

    /// The ZFS ARC as it was stored.
    #[derive(Deserialize)]
    pub struct OldArc {
        hits: u64,
        misses: u64,
        #[serde(default)]
        counters: Values,
    }

    /// Either form.
    #[derive(Deserialize)]
    pub struct Wire {
        #[serde(default)]
        elapsed_ns: u64,
        #[serde(default)]
        disks: Vec<DiskDelta>,
        #[serde(default)]
        sources: BTreeMap<String, Values>,
        #[serde(default)]
        proc_io: Values,
        #[serde(default)]
        rusage: Values,
        #[serde(default)]
        vmstat: Values,
        #[serde(default)]
        arc: Option<OldArc>,
    }

    impl From<Wire> for CounterDelta {
        fn from(w: Wire) -> CounterDelta {
            let mut sources = w.sources;
            for (name, v) in [
                ("process_io", w.proc_io),
                ("rusage", w.rusage),
                ("vmstat", w.vmstat),
            ] {
                if !v.is_empty() {
                    sources.insert(name.into(), v);
                }
            }
            if let Some(mut a) = w.arc {
                a.counters.insert("hits".into(), a.hits);
                a.counters.insert("misses".into(), a.misses);
                sources.insert("zfs_arc".into(), a.counters);
            }
            CounterDelta {
                elapsed_ns: w.elapsed_ns,
                disks: w.disks,
                sources,
            }
        }
    }
}
