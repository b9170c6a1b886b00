//! vmtouch's jobs in-process: how much of each file is in the page cache
//! (cachestat(2), or mincore(2) where the kernel lacks it), reading files
//! into the cache, evicting them (POSIX_FADV_DONTNEED, verified), and
//! locking them in with mlock(2).
//!
//! mincore's limits: it needs a readable mapping of the file, counts only
//! pages present in the page cache (not dirty/writeback/evicted), and
//! cannot see pages of files it cannot open.

use crate::metrics::CacheState;
use crate::sys::cachestat::{cache_state, mincore_pages};
use serde::Serialize;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

/// Regular files under `paths` (directories recursively, symlinks not
/// followed), and how many directories were entered.
pub fn collect(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, u64), String> {
    let mut files = Vec::new();
    let mut dirs = 0;
    let mut stack: Vec<PathBuf> = paths.iter().rev().cloned().collect();
    while let Some(p) = stack.pop() {
        let md = std::fs::symlink_metadata(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        if md.is_dir() {
            dirs += 1;
            let mut kids: Vec<PathBuf> = std::fs::read_dir(&p)
                .and_then(|it| it.map(|e| e.map(|e| e.path())).collect())
                .map_err(|e| format!("{}: {e}", p.display()))?;
            kids.sort();
            stack.extend(kids.into_iter().rev());
        } else if md.is_file() {
            files.push(p);
        }
    }
    Ok((files, dirs))
}

/// Page-cache residency of one file.
#[derive(Debug, Clone, Serialize)]
pub struct Residency {
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Its state (pages, cached, dirty, evicted... and the source).
    pub state: CacheState,
    /// Per page: resident or not (only when asked; from mincore).
    #[serde(skip)]
    pub map: Option<Vec<bool>>,
}

/// The residency of `path`; `with_map` adds the per-page map.
pub fn status(path: &Path, with_map: bool) -> std::io::Result<Residency> {
    let f = File::open(path)?;
    let size = f.metadata()?.len();
    let state = cache_state(f.as_fd(), 0, size)?;
    let map = if with_map {
        Some(mincore_pages(f.as_fd(), 0, size)?)
    } else {
        None
    };
    Ok(Residency {
        path: path.to_path_buf(),
        size,
        state,
        map,
    })
}

/// Reads `path` through so it is in the cache; returns the bytes read.
pub fn warm(path: &Path, buf: &mut [u8]) -> std::io::Result<u64> {
    let mut f = File::open(path)?;
    // SAFETY: plain advice on a valid descriptor.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_SEQUENTIAL) };
    let mut n = 0;
    loop {
        let r = f.read(buf)?;
        if r == 0 {
            return Ok(n);
        }
        n += r as u64;
    }
}

/// Writes back `path`'s dirty pages (dirty pages cannot be dropped), then
/// asks the kernel to drop its pages; returns the state after.
pub fn evict(path: &Path) -> std::io::Result<CacheState> {
    let f = File::open(path)?;
    f.sync_data()?;
    // SAFETY: plain advice on a valid descriptor.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    let size = f.metadata()?.len();
    cache_state(f.as_fd(), 0, size)
}

/// A file mapped and locked into memory until dropped.
pub struct Locked {
    addr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is only unmapped in Drop; nothing else touches it.
unsafe impl Send for Locked {}

impl Locked {
    /// Bytes locked.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for an empty file (nothing locked).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: addr/len are the mapping made in `lock`.
            unsafe {
                libc::munlock(self.addr, self.len);
                libc::munmap(self.addr, self.len);
            }
        }
    }
}

/// Maps `path` and mlocks it (reading it in if needed).
pub fn lock(path: &Path) -> std::io::Result<Locked> {
    let f = File::open(path)?;
    let len = f.metadata()?.len() as usize;
    if len == 0 {
        return Ok(Locked {
            addr: std::ptr::null_mut(),
            len: 0,
        });
    }
    // SAFETY: a fresh shared read-only mapping, kept until Drop.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the range is the mapping just made.
    if unsafe { libc::mlock(addr, len) } != 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: as above.
        unsafe { libc::munmap(addr, len) };
        return Err(e);
    }
    Ok(Locked { addr, len })
}

/// vmtouch's residency line: `width` cells, `O` all pages resident, `o`
/// some, space none.
pub fn map_line(map: &[bool], width: usize) -> String {
    if map.is_empty() {
        return String::new();
    }
    let w = width.min(map.len()).max(1);
    (0..w)
        .map(|i| {
            let a = i * map.len() / w;
            let b = ((i + 1) * map.len() / w).max(a + 1);
            let n = map[a..b].iter().filter(|&&x| x).count();
            if n == b - a {
                'O'
            } else if n > 0 {
                'o'
            } else {
                ' '
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_line_like_vmtouch() {
        let m: Vec<bool> = (0..8).map(|i| i < 4 || i == 6).collect();
        assert_eq!(map_line(&m, 4), "OO o");
        assert_eq!(map_line(&m, 60), "OOOO  O ");
        assert_eq!(map_line(&[], 10), "");
    }
}
