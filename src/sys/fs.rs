//! Files iolab writes for the user (reports, exports, logs): written to a
//! new temporary file in the target's directory, then renamed into place,
//! so a reader never sees half a file and an interrupted write leaves the
//! old one.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` through a fresh temporary file in the same
/// directory, renamed over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let shown = || format!("cannot write {}", path.display());
    let mut tmp = tempfile::Builder::new()
        .prefix(".iolab-")
        .tempfile_in(dir)
        .map_err(|e| Error::io(shown(), e))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.flush())
        .map_err(|e| Error::io(shown(), e))?;
    tmp.persist(path).map_err(|e| Error::io(shown(), e.error))?;
    Ok(())
}
