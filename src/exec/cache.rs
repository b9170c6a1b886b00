//! The named files' page cache around a run: set to the asked state
//! before it (evicted for `cold`, read in for `warm`), measured before and
//! after it with cachestat (mincore where cachestat is missing), and the
//! run's hits and misses worked out of the two.

use super::error::Result;
use crate::job::CachePolicy;
use crate::sys::pagecache;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The named files' cache over one run, in pages.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CacheDelta {
    /// Regular files under the named paths.
    pub files: usize,
    /// Their pages.
    pub pages: u64,
    /// Pages in the cache as the run started (after the cache was set).
    pub before: u64,
    /// Pages in the cache as it ended.
    pub after: u64,
    /// Pages that came into the cache during the run: read from storage
    /// (misses), by the program or by readahead for it.
    pub misses: u64,
    /// Pages the program read that were already cached: its reads
    /// (`rchar`, in pages) less what came from storage (the misses, or
    /// its own `read_bytes` when more: O_DIRECT reads pass the cache), at
    /// most what was cached.
    pub hits: u64,
    /// `cachestat(2)` or `mincore(2)`.
    pub source: String,
}

/// The regular files under `paths`, each once (by device and inode: a
/// file named twice, or through a hard link, or inside a directory also
/// named, is one file): a named symbolic link is followed, directories
/// are walked (links found inside them are not followed). Notes for what
/// has no page cache to set: a FIFO, a device, a socket.
pub fn files_under(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<String>)> {
    use std::os::unix::fs::MetadataExt;
    let mut notes = Vec::new();
    let mut named = Vec::new();
    for p in paths {
        let found = std::fs::canonicalize(p).and_then(|r| Ok((std::fs::metadata(&r)?, r)));
        let (md, real) = match found {
            Ok(x) => x,
            Err(e) => {
                // Checked before the first run: gone since (the command
                // removed it).
                notes.push(format!("--files {}: {e}", p.display()));
                continue;
            }
        };
        if md.is_dir() || md.is_file() {
            named.push(real);
        } else {
            notes.push(format!(
                "--files {}: a {}, not a file: no page cache to set or measure",
                p.display(),
                crate::sys::fs::kind_of(&md)
            ));
        }
    }
    let mut seen = std::collections::HashSet::new();
    let files = pagecache::collect(&named)?
        .0
        .into_iter()
        .filter(|f| std::fs::metadata(f).map_or(true, |m| seen.insert((m.dev(), m.ino()))))
        .collect();
    Ok((files, notes))
}

/// Puts `files` in the state `policy` asks; returns notes for the user
/// (a file that stayed cached when evicted: dirty, locked or mapped).
pub fn set(policy: CachePolicy, files: &[PathBuf]) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    match policy {
        CachePolicy::Keep => {}
        CachePolicy::Warm => {
            pagecache::warm_all(files, None)?;
        }
        CachePolicy::Cold => {
            for (path, cached, dirty) in pagecache::evict_all(files)?.left {
                notes.push(format!(
                    "cache cold: {} kept {cached} pages in the cache ({dirty} dirty): the kernel keeps pages of tmpfs, of locked or mapped files and dirty ones it could not write back",
                    path.display()
                ));
            }
        }
    }
    Ok(notes)
}

/// Pages of `files` and how many are cached now.
#[derive(Debug, Clone, Copy, Default)]
pub struct Resident {
    /// Pages.
    pub pages: u64,
    /// Cached pages.
    pub cached: u64,
    /// Measured by mincore (cachestat missing).
    pub mincore: bool,
}

/// The residency of `files` now; a file the command removed (or could
/// not be read) counts as no pages, and is named in the notes.
pub fn resident(files: &[PathBuf], notes: &mut Vec<String>) -> Resident {
    let mut r = Resident::default();
    for f in files {
        match pagecache::status(f, false) {
            Ok(s) => {
                r.pages += s.state.pages;
                r.cached += s.state.cached;
                r.mincore |= s.state.source == "mincore";
            }
            Err(e) => {
                let note = format!("{}: its cache could not be measured: {e}", f.display());
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
    }
    r
}

/// The run's cache figures from the residency before and after it, the
/// bytes the program read (`rchar`) and those it read from storage
/// (`read_bytes`).
pub fn delta(
    files: usize,
    before: Resident,
    after: Resident,
    rchar: u64,
    storage: u64,
) -> CacheDelta {
    let page = crate::sys::machine::page_size();
    let misses = after.cached.saturating_sub(before.cached);
    let uncached = misses.max(storage.div_ceil(page));
    let read_pages = rchar.div_ceil(page);
    CacheDelta {
        files,
        pages: after.pages.max(before.pages),
        before: before.cached,
        after: after.cached,
        misses,
        hits: read_pages.saturating_sub(uncached).min(before.cached),
        source: if before.mincore || after.mincore {
            "mincore(2)"
        } else {
            "cachestat(2)"
        }
        .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(pages: u64, cached: u64) -> Resident {
        Resident {
            pages,
            cached,
            mincore: false,
        }
    }

    #[test]
    fn cold_runs_miss_and_warm_runs_hit() {
        let page = crate::sys::machine::page_size();
        // Cold: 100 pages read in; the program read them all.
        let d = delta(1, r(100, 0), r(100, 100), 100 * page + 10, 100 * page);
        assert_eq!((d.misses, d.hits), (100, 0));
        // Warm: nothing came in; every page it read was a hit.
        let d = delta(1, r(100, 100), r(100, 100), 100 * page + 10, 0);
        assert_eq!((d.misses, d.hits), (0, 100));
        // Half cached: half hit, half missed.
        let d = delta(1, r(100, 50), r(100, 100), 100 * page, 50 * page);
        assert_eq!((d.misses, d.hits), (50, 50));
        // O_DIRECT over a cached file: from storage, not the cache.
        let d = delta(1, r(100, 100), r(100, 100), 100 * page, 100 * page);
        assert_eq!((d.misses, d.hits), (0, 0));
    }
}
