//! The injector plug-in kind: a layer that puts a gate under a mounted file
//! system. [`INJECTORS`] lists them (`block`: dm-delay's semantics under a
//! real file system; `fs`: a pass-through file system whose every
//! operation passes the gate). A new layer is one file and one line here;
//! what each layer is asked for is [`spec`], what it must do [`injector`].

pub mod block;
pub mod fs;
pub mod injector;
pub mod spec;

pub use injector::{Injector, Mounted};
pub use spec::Spec;

use crate::disk::error::DiskError;
use crate::registry::{Entry, entry};

/// Every layer, the default first.
pub static INJECTORS: &[Entry<dyn Injector>] = &[
    entry(
        "block",
        &[],
        "root, /dev/fuse, /dev/loop-control, mkfs.ext4 (or mkfs.xfs)",
        "a FUSE-served image under a loop device (direct I/O) under ext4/xfs: dm-delay's semantics",
        &block::Block,
    ),
    entry(
        "fs",
        &[],
        "root, /dev/fuse, --backing DIR2",
        "a FUSE pass-through over DIR2 whose every operation (stat, open, read, ...) passes the rules",
        &fs::Fs,
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
