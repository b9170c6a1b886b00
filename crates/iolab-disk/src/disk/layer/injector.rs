//! What every layer is: an [`Injector`] that checks and builds it, and the
//! [`Mounted`] layer it gives, serving until unmounted; [`need_device`],
//! the device nodes a layer needs.

use super::spec::Spec;
use crate::disk::error::DiskError;
use crate::disk::gate::Gate;
use std::path::Path;
use std::sync::Arc;

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

    /// How close to their deadlines delayed answers went out (None: the
    /// layer does not measure it).
    fn punctual(&self) -> Option<crate::disk::control::Punctual> {
        None
    }

    /// Requests failed because the layer's image handler panicked (None:
    /// the layer does not catch them).
    fn failures(&self) -> Option<crate::disk::fuse::Failures> {
        None
    }

    /// Power loss: drops every write not yet flushed and mounts the file
    /// system again; the bytes dropped.
    fn crash(&mut self) -> Result<u64, DiskError>;

    /// Unmounts and removes everything the layer made; true when DIR was
    /// still busy (a file open under it) after a few seconds and was
    /// detached lazily: its file system goes once the last file closes.
    fn unmount(self: Box<Self>) -> Result<bool, DiskError>;
}

/// Opens a device node the layer needs, or says which is missing.
pub fn need_device(path: &str, needed_for: &'static str) -> Result<(), DiskError> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map(drop)
        .map_err(|why| DiskError::NoDevice {
            path: path.into(),
            needed_for,
            why,
        })
}
