//! What a disk was asked for ([`Spec`]): the layer, its sizes and paths,
//! the rules and the seed, kept in the disk's state file.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What `iolab disk up` was asked for; kept in the disk's state file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Spec {
    /// Where the file system is mounted (absolute).
    pub dir: PathBuf,
    /// The injector (`block`, `fs`).
    pub layer: String,
    /// Block layer: the image size in bytes.
    pub size: u64,
    /// Block layer: the file system made on it (`ext4`, `xfs`).
    pub fs: String,
    /// Block layer: the image file (none: in memory).
    pub image: Option<PathBuf>,
    /// File layer: the directory served at `dir`.
    pub backing: Option<PathBuf>,
    /// Block layer: the loop device's readahead in KiB (None: whatever
    /// the kernel gives it: 128 or 2560 on Linux 6.18).
    #[serde(default)]
    pub read_ahead_kb: Option<u32>,
    /// Block layer: how the daemon takes FUSE requests: `auto` (io_uring
    /// when the fuse module's `enable_uring` is on, else /dev/fuse),
    /// `uring` or `dev` (empty in state files from before: `auto`).
    #[serde(default)]
    pub transport: String,
    /// Hold the machine's CPU wake-up latency at 0 while the disk is up
    /// (`/dev/cpu_dma_latency`): idle CPUs poll instead of halting, so a
    /// microsecond delay is not lengthened by waking a halted CPU. Given
    /// back when the daemon ends (the kernel drops the request with the
    /// descriptor).
    #[serde(default)]
    pub no_halt: bool,
    /// Mount options of the file system (`commit=60`).
    pub mount_options: String,
    /// The rules, as (flag, value): `("delay", "1ms")`.
    pub rules: Vec<(String, String)>,
    /// Seed of the random draws (delays, error shares).
    pub seed: u64,
    /// `up` made `dir` (so `down` removes it).
    pub made_dir: bool,
    /// The directories above `dir` that `up` made (`up a/b/c` in an empty
    /// place made `a` and `a/b`), outermost first: `down` removes them too,
    /// each only while empty.
    #[serde(default)]
    pub made_parents: Vec<PathBuf>,
}

impl Spec {
    /// Removes the directories `up` made (DIR, then its parents), each only
    /// when it is empty: nothing another program put there is touched.
    pub fn remove_made_dirs(&self) {
        if !self.made_dir {
            return;
        }
        if std::fs::remove_dir(&self.dir).is_err() {
            return;
        }
        for p in self.made_parents.iter().rev() {
            if std::fs::remove_dir(p).is_err() {
                return;
            }
        }
    }
}
