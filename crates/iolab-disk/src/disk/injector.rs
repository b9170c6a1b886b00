//! The injector plug-in kind: a layer that puts a gate under a mounted file
//! system. [`INJECTORS`] lists them (`block`: dm-delay's semantics under a
//! real file system; `fs`: a pass-through file system whose every
//! operation passes the gate). A new layer is one file and one line here.

use super::error::DiskError;
use super::gate::Gate;
use crate::registry::{Entry, entry};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// A layer that can be built under a directory.
pub trait Injector: Sync {
    /// Checks, before anything is made, that this machine can build the
    /// layer for `spec` (device nodes, tools, paths).
    fn check(&self, spec: &Spec) -> Result<(), DiskError>;

    /// Builds the layer, its gate `gate`, and mounts a file system at
    /// `spec.dir`; `run` is the disk's private directory (state, FUSE
    /// mount point). On error, everything made so far is removed.
    fn mount(
        &self,
        spec: &Spec,
        gate: Arc<Gate>,
        run: &Path,
    ) -> Result<Box<dyn Mounted>, DiskError>;
}

/// A mounted layer, serving until [`Mounted::unmount`].
pub trait Mounted: Send {
    /// What was made, for `disk status`: (`loop`, `/dev/loop3`), ...
    fn parts(&self) -> Vec<(String, String)>;

    /// Bytes written and not yet flushed (None: the layer does not track them).
    fn unflushed(&self) -> Option<u64>;

    /// Power loss: drops every write not yet flushed and mounts the file
    /// system again; the bytes dropped.
    fn crash(&mut self) -> Result<u64, DiskError>;

    /// Unmounts and removes everything the layer made; true when DIR was
    /// still busy (a file open under it) after a few seconds and was
    /// detached lazily: its file system goes once the last file closes.
    fn unmount(self: Box<Self>) -> Result<bool, DiskError>;
}

/// Every layer, the default first.
pub static INJECTORS: &[Entry<dyn Injector>] = &[
    entry(
        "block",
        &[],
        "root, /dev/fuse, /dev/loop-control, mkfs.ext4 (or mkfs.xfs)",
        "a FUSE-served image under a loop device (direct I/O) under ext4/xfs: dm-delay's semantics",
        &super::block::Block,
    ),
    entry(
        "fs",
        &[],
        "root, /dev/fuse, --backing DIR2",
        "a FUSE pass-through over DIR2 whose every operation (stat, open, read, ...) passes the rules",
        &super::fs_layer::Fs,
    ),
];

/// The layer called `name` (`--layer`), or what there is.
pub fn find(name: &str) -> Result<&'static dyn Injector, DiskError> {
    crate::registry::find(INJECTORS, name)
        .map(|e| e.item)
        .ok_or_else(|| DiskError::Usage {
            what: format!("--layer {name}"),
            expected: crate::registry::unknown("layer", name, INJECTORS),
        })
}
