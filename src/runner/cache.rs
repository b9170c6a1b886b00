//! Putting a file's pages into the state a repetition asks for (cold, warm,
//! keep) and measuring that state.

use crate::metrics::CacheState;
use crate::sys::cachestat::cache_state;
use crate::job::CachePolicy;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Cache state of one file's region at one moment.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileCache {
    /// The file.
    pub path: PathBuf,
    /// Its state, or `None` if it could not be measured.
    pub state: Option<CacheState>,
}

/// Measures the cache state of `[off, off+len)` of `path`.
pub fn measure(path: &Path, off: u64, len: u64) -> FileCache {
    let state = File::open(path)
        .ok()
        .and_then(|f| cache_state(f.as_fd(), off, len).ok());
    FileCache {
        path: path.to_path_buf(),
        state,
    }
}

/// Drops every clean page cache page of the system (needs root).
fn drop_all_caches() -> std::io::Result<()> {
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3")
}

/// Applies `policy` to the region of `path`; returns warnings for the user.
pub fn apply(
    policy: CachePolicy,
    path: &Path,
    off: u64,
    len: u64,
    drop_caches: bool,
) -> Vec<String> {
    let mut warnings = Vec::new();
    match policy {
        CachePolicy::Keep => {}
        CachePolicy::Warm => {
            if let Err(e) = warm(path, off, len) {
                warnings.push(format!("cache=warm: cannot read {}: {e}", path.display()));
            }
        }
        CachePolicy::Cold => {
            if let Err(e) = evict(path) {
                warnings.push(format!("cache=cold: cannot evict {}: {e}", path.display()));
            }
            if drop_caches {
                // SAFETY: geteuid has no preconditions.
                if unsafe { libc::geteuid() } != 0 {
                    warnings
                        .push("--drop-caches needs root; only the job's files were evicted".into());
                } else if let Err(e) = drop_all_caches() {
                    warnings.push(format!(
                        "--drop-caches: cannot write /proc/sys/vm/drop_caches: {e}"
                    ));
                }
            }
            let m = measure(path, off, len);
            match m.state {
                Some(s) if s.cached > 0 => warnings.push(format!(
                    "cache=cold: {} of {} pages of {} are still cached after eviction (mapped, locked or dirty elsewhere?)",
                    s.cached,
                    s.pages,
                    path.display()
                )),
                Some(_) => {}
                None => warnings.push(format!(
                    "cache=cold: cannot verify the eviction of {} (neither cachestat nor mincore worked)",
                    path.display()
                )),
            }
        }
    }
    warnings
}

/// Writes back and evicts every page of the file (POSIX_FADV_DONTNEED).
pub fn evict(path: &Path) -> std::io::Result<()> {
    let f = File::open(path)?;
    // Dirty pages cannot be dropped: write them back first.
    f.sync_data().or_else(|e| {
        if e.raw_os_error() == Some(libc::EINVAL) {
            Ok(())
        } else {
            Err(e)
        }
    })?;
    // SAFETY: advice on an open descriptor; no memory is passed.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Reads the region so it is in the page cache.
pub fn warm(path: &Path, off: u64, len: u64) -> std::io::Result<()> {
    let f = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut pos = off;
    let end = off + len;
    while pos < end {
        let n = ((end - pos) as usize).min(buf.len());
        let got = f.read_at(&mut buf[..n], pos)?;
        if got == 0 {
            break;
        }
        pos += got as u64;
    }
    Ok(())
}
