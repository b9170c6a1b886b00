//! The page cache, in one place: how much of a file is cached (cachestat,
//! or mincore where the kernel lacks it, see [`super::cachestat`]), reading
//! files in, evicting them (POSIX_FADV_DONTNEED after writing back their
//! dirty pages), dropping the whole cache (root), and locking files in with
//! mlock(2); also vmtouch's jobs over many files at once.

use super::cachestat::{CacheState, cache_state, mincore_pages};
use crate::error::{Error, Result};
use serde::Serialize;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Cache state of `[off, off+len)` of `path`.
pub fn state(path: &Path, off: u64, len: u64) -> std::io::Result<CacheState> {
    cache_state(File::open(path)?.as_fd(), off, len)
}

/// Writes back the file's dirty pages (they cannot be dropped), then asks
/// the kernel to drop all its pages.
pub fn evict(path: &Path) -> std::io::Result<()> {
    let f = File::open(path)?;
    f.sync_data().or_else(|e| {
        // Some files (pipes, some pseudo files) cannot be synced.
        if e.raw_os_error() == Some(libc::EINVAL) {
            Ok(())
        } else {
            Err(e)
        }
    })?;
    advise(&f, 0, 0, libc::POSIX_FADV_DONTNEED)
}

/// Asks the kernel to drop the cached pages of the open file `fd` (dirty
/// ones stay), as fio's cache invalidation: `POSIX_FADV_DONTNEED` over the
/// whole file. Best effort, like fio's (which ignores the result).
pub fn drop_cached(fd: std::os::fd::RawFd) {
    // SAFETY: advice on a descriptor; no memory is passed. A closed or
    // foreign descriptor only makes the call fail.
    unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) };
}

/// Reads `[off, off+len)` of `path` through `buf` so it is in the cache;
/// returns the bytes read.
pub fn warm(path: &Path, off: u64, len: u64, buf: &mut [u8]) -> std::io::Result<u64> {
    let f = File::open(path)?;
    advise(&f, 0, 0, libc::POSIX_FADV_SEQUENTIAL)?;
    let (mut pos, end) = (off, off.saturating_add(len));
    while pos < end {
        let n = ((end - pos) as usize).min(buf.len());
        let got = f.read_at(&mut buf[..n], pos)?;
        if got == 0 {
            break;
        }
        pos += got as u64;
    }
    Ok(pos - off)
}

/// Writes back every dirty page of the system and drops every clean page,
/// dentry and inode (`drop_caches=3`; needs root).
pub fn drop_all() -> std::io::Result<()> {
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3\n")
}

/// `posix_fadvise(WILLNEED)` for `len` bytes at `off` of `f`: read them in
/// now, asynchronously (the prefetch of seed 000).
pub fn will_need(f: &File, off: u64, len: u64) -> std::io::Result<()> {
    advise(f, off as i64, len as i64, libc::POSIX_FADV_WILLNEED)
}

/// `posix_fadvise(RANDOM)` over all of `f` (no readahead), as fio's
/// `fadvise_hint` gives random jobs.
pub fn random_access(f: &File) -> std::io::Result<()> {
    advise(f, 0, 0, libc::POSIX_FADV_RANDOM)
}

fn advise(f: &File, off: i64, len: i64, advice: libc::c_int) -> std::io::Result<()> {
    // SAFETY: advice on an open descriptor; no memory is passed.
    match unsafe { libc::posix_fadvise(f.as_raw_fd(), off, len, advice) } {
        0 => Ok(()),
        rc => Err(std::io::Error::from_raw_os_error(rc)),
    }
}

/// Regular files under `paths` (directories recursively, symlinks not
/// followed), and how many directories were entered.
pub fn collect(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, u64)> {
    let mut files = Vec::new();
    let mut dirs = 0;
    let mut stack: Vec<PathBuf> = paths.iter().rev().cloned().collect();
    while let Some(p) = stack.pop() {
        let named = |e| Error::io(p.display().to_string(), e);
        let md = std::fs::symlink_metadata(&p).map_err(named)?;
        if md.is_dir() {
            dirs += 1;
            let mut kids: Vec<PathBuf> = std::fs::read_dir(&p)
                .and_then(|it| it.map(|e| e.map(|e| e.path())).collect())
                .map_err(|e| Error::io(p.display().to_string(), e))?;
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

/// The residency of many files at one moment (`iolab cache status`).
#[derive(Debug, Clone)]
pub struct Survey {
    /// Each file.
    pub files: Vec<Residency>,
    /// Directories walked.
    pub dirs: u64,
    /// Seconds the survey took.
    pub elapsed_s: f64,
}

impl Survey {
    /// Pages of all files.
    pub fn pages(&self) -> u64 {
        self.files.iter().map(|r| r.state.pages).sum()
    }

    /// Pages of all files in the cache.
    pub fn cached(&self) -> u64 {
        self.files.iter().map(|r| r.state.cached).sum()
    }

    /// Bytes of all files.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|r| r.size).sum()
    }

    /// Which call measured it.
    pub fn source(&self) -> &'static str {
        if self.files.iter().any(|r| r.state.source == "mincore") {
            "mincore(2) (cachestat unavailable: resident pages only)"
        } else {
            "cachestat(2)"
        }
    }
}

/// The residency of every file under `paths` (maps when `with_map`).
pub fn survey(paths: &[PathBuf], with_map: bool) -> Result<Survey> {
    let (files, dirs) = collect(paths)?;
    let t0 = Instant::now();
    let files = files
        .iter()
        .map(|f| status(f, with_map).map_err(|e| Error::io(f.display().to_string(), e)))
        .collect::<Result<_>>()?;
    Ok(Survey {
        files,
        dirs,
        elapsed_s: t0.elapsed().as_secs_f64(),
    })
}

/// What `warm_all` did.
#[derive(Debug, Clone)]
pub struct Warmed {
    /// Bytes read.
    pub bytes: u64,
    /// Seconds it took.
    pub elapsed_s: f64,
    /// The residency afterwards.
    pub after: Survey,
}

/// Reads every file under `paths` into the cache; with `newest`, only
/// that many of them, the most recently modified (seed 004 kept the newest
/// logs cached this way).
pub fn warm_all(paths: &[PathBuf], newest: Option<usize>) -> Result<Warmed> {
    let (mut files, _) = collect(paths)?;
    if let Some(n) = newest {
        files = newest_files(files, n)?;
    }
    let mut buf = vec![0u8; 1 << 20];
    let t0 = Instant::now();
    let mut bytes = 0;
    for f in &files {
        bytes +=
            warm(f, 0, u64::MAX, &mut buf).map_err(|e| Error::io(f.display().to_string(), e))?;
    }
    let elapsed_s = t0.elapsed().as_secs_f64();
    let after = match newest {
        Some(_) => survey(&files, false)?,
        None => survey(paths, false)?,
    };
    Ok(Warmed {
        bytes,
        elapsed_s,
        after,
    })
}

/// The `n` most recently modified of `files`, newest first (ties by name).
fn newest_files(files: Vec<PathBuf>, n: usize) -> Result<Vec<PathBuf>> {
    let mut timed = files
        .into_iter()
        .map(|f| {
            let m = std::fs::metadata(&f).and_then(|m| m.modified());
            m.map(|t| (std::cmp::Reverse(t), f.clone()))
                .map_err(|e| Error::io(f.display().to_string(), e))
        })
        .collect::<Result<Vec<_>>>()?;
    timed.sort();
    Ok(timed.into_iter().take(n).map(|(_, f)| f).collect())
}

/// What `evict_all` did.
#[derive(Debug, Clone)]
pub struct Evicted {
    /// Files and directories handled.
    pub files: usize,
    /// Directories walked.
    pub dirs: u64,
    /// Pages of the files.
    pub pages: u64,
    /// Seconds it took.
    pub elapsed_s: f64,
    /// Files still (partly) cached: path, cached pages, dirty pages.
    pub left: Vec<(PathBuf, u64, u64)>,
}

/// Evicts every file under `paths` and checks what stayed.
pub fn evict_all(paths: &[PathBuf]) -> Result<Evicted> {
    let (files, dirs) = collect(paths)?;
    let t0 = Instant::now();
    let mut out = Evicted {
        files: files.len(),
        dirs,
        pages: 0,
        elapsed_s: 0.0,
        left: Vec::new(),
    };
    for f in &files {
        let s = evict(f)
            .and_then(|_| status(f, false))
            .map_err(|e| Error::io(f.display().to_string(), e))?
            .state;
        out.pages += s.pages;
        if s.cached > 0 {
            out.left.push((f.clone(), s.cached, s.dirty.unwrap_or(0)));
        }
    }
    out.elapsed_s = t0.elapsed().as_secs_f64();
    Ok(out)
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
    let locked = Locked { addr, len };
    // SAFETY: the range is the mapping just made (unmapped by `locked`'s
    // Drop if this fails).
    if unsafe { libc::mlock(addr, len) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(locked)
}

/// Locks every file (the error names the file and the likely limit).
pub fn lock_all(files: &[PathBuf]) -> Result<Vec<Locked>> {
    files
        .iter()
        .map(|f| {
            lock(f).map_err(|e| {
                Error::io(
                    format!(
                        "mlock {} (RLIMIT_MEMLOCK too small? root or CAP_IPC_LOCK lifts it)",
                        f.display()
                    ),
                    e,
                )
            })
        })
        .collect()
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
