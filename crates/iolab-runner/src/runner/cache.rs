//! Putting a job's files into the page-cache state a repetition asks for
//! (cold, warm, keep) and measuring that state, with the page-cache calls
//! of [`crate::sys::pagecache`].

use crate::job::CachePolicy;
use crate::metrics::CacheState;
use crate::sys::pagecache;
use serde::{Deserialize, Serialize};
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
    FileCache {
        path: path.to_path_buf(),
        state: pagecache::state(path, off, len).ok(),
    }
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
    // A region not sized yet (a `fill_device` file, sized when its job
    // starts) is the file as it is now.
    let len = match len {
        0 => std::fs::metadata(path).map_or(0, |m| m.len().saturating_sub(off)),
        n => n,
    };
    match policy {
        CachePolicy::Keep => {}
        CachePolicy::Warm => {
            let mut buf = vec![0u8; 1 << 20];
            if let Err(e) = pagecache::warm(path, off, len, &mut buf) {
                warnings.push(format!("cache=warm: cannot read {}: {e}", path.display()));
            }
        }
        CachePolicy::Cold => {
            if let Err(e) = pagecache::evict(path) {
                warnings.push(format!("cache=cold: cannot evict {}: {e}", path.display()));
            }
            if drop_caches {
                if !crate::sys::machine::is_root() {
                    warnings
                        .push("--drop-caches needs root; only the job's files were evicted".into());
                } else if let Err(e) = pagecache::drop_all() {
                    warnings.push(format!(
                        "--drop-caches: cannot write /proc/sys/vm/drop_caches: {e}"
                    ));
                }
            }
            match measure(path, off, len).state {
                Some(s) if s.cached > 0 => warnings.push(format!(
                    "cache=cold: {} of {} pages of {} are still cached after eviction ({})",
                    s.cached,
                    s.pages,
                    path.display(),
                    match crate::sys::fs::memory_only(path) {
                        Some(fs) => format!("{fs} keeps its files in memory"),
                        None => "mapped, locked or dirty elsewhere?".into(),
                    }
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
