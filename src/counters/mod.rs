//! What the kernel counted while a run went on, each figure with its source:
//! the block devices behind the files (`/proc/diskstats`, shown as iostat's
//! columns and fio's `disk_util`), the process's logical vs physical I/O
//! (`/proc/self/io`), `getrusage`, `/proc/vmstat`, and the ZFS ARC when
//! present. Reading never prints; a source that is missing is simply absent.

pub mod arcstats;
pub mod blockdev;
pub mod diskstats;
pub mod procfs;

pub use blockdev::Disk;
pub use diskstats::{DiskDelta, DiskStat};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// All counters at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Monotonic time in ns.
    pub at_ns: u64,
    /// Disks behind the files and their counters.
    pub disks: Vec<(Disk, Option<DiskStat>)>,
    /// `/proc/self/io`.
    pub proc_io: BTreeMap<String, u64>,
    /// `getrusage(RUSAGE_SELF)`.
    pub rusage: BTreeMap<String, u64>,
    /// Selected `/proc/vmstat` counters.
    pub vmstat: BTreeMap<String, u64>,
    /// ZFS ARC counters, when `/proc/spl/kstat/zfs/arcstats` exists.
    pub arc: Option<BTreeMap<String, u64>>,
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
            proc_io: procfs::proc_self_io().unwrap_or_default(),
            rusage: procfs::rusage_self(),
            vmstat: procfs::vmstat().unwrap_or_default(),
            arc: arcstats::read(std::path::Path::new(arcstats::ARCSTATS)).ok(),
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
        CounterDelta {
            elapsed_ns,
            disks,
            proc_io: sub_maps(&self.proc_io, &later.proc_io),
            rusage: sub_maps(&self.rusage, &later.rusage),
            vmstat: sub_maps(&self.vmstat, &later.vmstat),
            arc: match (&self.arc, &later.arc) {
                (Some(a), Some(b)) => Some(arcstats::delta(a, b)),
                _ => None,
            },
        }
    }
}

fn sub_maps(a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    b.iter()
        .filter_map(|(k, v)| Some((k.clone(), v.saturating_sub(*a.get(k)?))))
        .collect()
}

fn add_maps(a: &mut BTreeMap<String, u64>, b: &BTreeMap<String, u64>) {
    for (k, v) in b {
        *a.entry(k.clone()).or_insert(0) += v;
    }
}

/// Counter changes over an interval (one repetition, or several added up).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CounterDelta {
    /// Length of the interval in ns.
    pub elapsed_ns: u64,
    /// Per disk: diskstats deltas and iostat's columns.
    pub disks: Vec<DiskDelta>,
    /// `/proc/self/io` deltas (rchar: bytes asked for; read_bytes: bytes
    /// read from storage).
    pub proc_io: BTreeMap<String, u64>,
    /// `getrusage(RUSAGE_SELF)` deltas.
    pub rusage: BTreeMap<String, u64>,
    /// `/proc/vmstat` deltas.
    pub vmstat: BTreeMap<String, u64>,
    /// ZFS ARC deltas and hit ratio.
    pub arc: Option<arcstats::ArcDelta>,
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
        add_maps(&mut self.proc_io, &o.proc_io);
        add_maps(&mut self.rusage, &o.rusage);
        add_maps(&mut self.vmstat, &o.vmstat);
        match (&mut self.arc, &o.arc) {
            (Some(a), Some(b)) => a.add(b),
            (None, Some(b)) => self.arc = Some(b.clone()),
            _ => {}
        }
    }

    /// Physical bytes read by this process (`/proc/self/io` read_bytes).
    pub fn physical_read_bytes(&self) -> u64 {
        self.proc_io.get("read_bytes").copied().unwrap_or(0)
    }

    /// Logical bytes read (`/proc/self/io` rchar).
    pub fn logical_read_bytes(&self) -> u64 {
        self.proc_io.get("rchar").copied().unwrap_or(0)
    }
}

/// The disks behind `files`, each once.
pub fn disks_of(files: &[PathBuf]) -> Vec<Disk> {
    let mut out: Vec<Disk> = Vec::new();
    for f in files {
        for d in blockdev::disks_behind(f) {
            if !out.iter().any(|x| x.name == d.name) {
                out.push(d);
            }
        }
    }
    out
}
