//! Timing of metadata operations and the limits every phase obeys: one
//! histogram per operation type per thread (merged at the end), a time
//! limit, Ctrl-C, and ENOSPC recognised as "the file system is full";
//! the operations done so far, for live progress ([`ops_done`]).

use super::{Phase, Stopped};
use crate::counters::Snapshot;
use crate::metrics::{CpuUsage, LatencyHistogram, clock::now_ns};
use crate::sys::blockdev::Disk;
use crate::sys::stop::StopFlag;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Operations timed by every thread of the process, added in batches of
/// [`BATCH`] (one shared add per batch, none per operation).
static DONE: AtomicU64 = AtomicU64::new(0);
/// Operations a thread counts before it adds them to [`DONE`].
const BATCH: u64 = 64;

/// Operations timed so far by every tree command of the process (up to
/// [`BATCH`] less per thread still working), for live progress: its rate
/// is the operations per second.
pub fn ops_done() -> u64 {
    DONE.load(Ordering::Relaxed)
}

/// Operation types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Op {
    /// mkdir(2).
    Mkdir,
    /// open(2) with O_CREAT|O_EXCL.
    Create,
    /// open(2) of an existing file.
    Open,
    /// write(2).
    Write,
    /// read(2).
    Read,
    /// fsync(2).
    Fsync,
    /// close(2).
    Close,
    /// opendir + getdents until the end + closedir.
    Readdir,
    /// lstat(2).
    Stat,
    /// unlink(2).
    Unlink,
    /// rmdir(2).
    Rmdir,
    /// chmod(2).
    Chmod,
    /// lchown(2).
    Chown,
    /// utimensat(2).
    Utime,
    /// symlink(2).
    Symlink,
    /// readlink(2).
    Readlink,
}

const NAMES: [&str; 16] = [
    "mkdir", "create", "open", "write", "read", "fsync", "close", "readdir", "stat", "unlink",
    "rmdir", "chmod", "chown", "utime", "symlink", "readlink",
];

/// Per-thread latencies by operation type.
#[derive(Default)]
pub struct Timer {
    hists: [Option<LatencyHistogram>; 16],
    /// Operations not yet added to [`DONE`].
    unpublished: u64,
}

impl Timer {
    /// Runs `f` as one `op`, recording its latency (also when it fails).
    #[inline]
    pub fn time<T>(&mut self, op: Op, f: impl FnOnce() -> T) -> T {
        let t0 = now_ns();
        let r = f();
        let ns = now_ns() - t0;
        self.hists[op as usize]
            .get_or_insert_with(LatencyHistogram::new)
            .record(ns);
        self.unpublished += 1;
        if self.unpublished == BATCH {
            DONE.fetch_add(BATCH, Ordering::Relaxed);
            self.unpublished = 0;
        }
        r
    }

    /// Adds this thread's latencies to `into`.
    pub fn merge_into(self, into: &mut BTreeMap<String, LatencyHistogram>) {
        DONE.fetch_add(self.unpublished, Ordering::Relaxed);
        for (i, h) in self.hists.into_iter().enumerate() {
            if let Some(h) = h {
                into.entry(NAMES[i].to_string()).or_default().merge(&h);
            }
        }
    }
}

/// When to stop early.
#[derive(Clone, Copy)]
pub struct Limits<'a> {
    /// Monotonic deadline in ns.
    pub deadline_ns: Option<u64>,
    /// Ctrl-C.
    pub stop: &'a StopFlag,
}

impl Limits<'_> {
    /// Why to stop now, if at all.
    #[inline]
    pub fn check(&self) -> Option<Stopped> {
        if self.stop.is_set() {
            return Some(Stopped::Interrupted);
        }
        match self.deadline_ns {
            Some(d) if now_ns() >= d => Some(Stopped::TimeLimit),
            _ => None,
        }
    }
}

/// True for "no space left" and "quota exceeded".
pub fn is_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// A phase's counters, CPU and wall time around `work`, which fills in the
/// rest of the phase.
pub fn measured<E>(
    name: &str,
    disks: &[Disk],
    work: impl FnOnce(&mut Phase) -> Result<(), E>,
) -> Result<Phase, E> {
    let mut p = Phase {
        name: name.to_string(),
        ..Phase::default()
    };
    let before = Snapshot::take(disks);
    let cpu0 = CpuUsage::process_now();
    let t0 = now_ns();
    let r = work(&mut p);
    p.elapsed_ns = now_ns() - t0;
    p.cpu = CpuUsage::process_now().since(&cpu0);
    p.counters = before.delta(&Snapshot::take(disks));
    r.map(|_| p)
}
