//! How much of a file range is in the page cache: `cachestat(2)` (Linux 6.5+,
//! raw syscall 451), falling back to `mmap` + `mincore(2)`.
//!
//! mincore's limits: it needs a readable mapping, only sees pages mapped into
//! this process's view of the file, and knows nothing of dirty, writeback or
//! evicted pages (those fields are then absent).

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::os::fd::{AsRawFd, BorrowedFd};

/// Page-cache state of a byte range of one file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CacheState {
    /// Pages in the range.
    pub pages: u64,
    /// Pages of the range in the page cache.
    pub cached: u64,
    /// Dirty pages (cachestat only).
    pub dirty: Option<u64>,
    /// Pages under writeback (cachestat only).
    pub writeback: Option<u64>,
    /// Pages evicted from the cache (cachestat only).
    pub evicted: Option<u64>,
    /// Pages evicted recently enough to count as refaults (cachestat only).
    pub recently_evicted: Option<u64>,
    /// "cachestat" or "mincore".
    pub source: Cow<'static, str>,
}

impl CacheState {
    /// Cached fraction in percent.
    pub fn percent(&self) -> f64 {
        if self.pages == 0 {
            0.0
        } else {
            100.0 * self.cached as f64 / self.pages as f64
        }
    }
}

const SYS_CACHESTAT: libc::c_long = 451;

#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

#[repr(C)]
#[derive(Default)]
struct Cachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// Cache state of `len` bytes at `off` of the open file `fd`.
pub fn cache_state(fd: BorrowedFd<'_>, off: u64, len: u64) -> std::io::Result<CacheState> {
    match cachestat(fd, off, len) {
        Ok(s) => Ok(s),
        // ENOSYS: an older kernel; EPERM: a newer one's check that the
        // caller may write the file (a user's look at a system file).
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
            mincore_state(fd, off, len)
        }
        Err(e) => Err(e),
    }
}

/// Cache state through `cachestat(2)` only.
pub fn cachestat(fd: BorrowedFd<'_>, off: u64, len: u64) -> std::io::Result<CacheState> {
    let ps = super::machine::page_size();
    let range = CachestatRange { off, len };
    let mut cs = Cachestat::default();
    // SAFETY: the kernel reads `range` and writes `cs`, both live and of the
    // layout cachestat(2) defines.
    let rc = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            fd.as_raw_fd() as libc::c_uint,
            &range as *const CachestatRange,
            &mut cs as *mut Cachestat,
            0u32,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let first = off / ps;
    let last = (off + len).div_ceil(ps);
    Ok(CacheState {
        pages: last.saturating_sub(first),
        cached: cs.nr_cache,
        dirty: Some(cs.nr_dirty),
        writeback: Some(cs.nr_writeback),
        evicted: Some(cs.nr_evicted),
        recently_evicted: Some(cs.nr_recently_evicted),
        source: Cow::Borrowed("cachestat"),
    })
}

/// Residency of each page of `[off, off+len)` through `mmap` + `mincore(2)`
/// (the first entry is the page holding `off`).
pub fn mincore_pages(fd: BorrowedFd<'_>, off: u64, len: u64) -> std::io::Result<Vec<bool>> {
    let ps = super::machine::page_size();
    let start = off / ps * ps;
    let map_len = (off + len - start) as usize;
    if len == 0 {
        return Ok(Vec::new());
    }
    let pages = map_len.div_ceil(ps as usize);
    // SAFETY: a fresh shared read-only mapping of the file, unmapped below;
    // mincore writes one byte per page into `vec`, which has `pages` bytes.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            start as libc::off_t,
        );
        if addr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let mut vec = vec![0u8; pages];
        let rc = libc::mincore(addr, map_len, vec.as_mut_ptr());
        let err = std::io::Error::last_os_error();
        libc::munmap(addr, map_len);
        if rc != 0 {
            return Err(err);
        }
        Ok(vec.into_iter().map(|b| b & 1 == 1).collect())
    }
}

/// Cache state through `mmap` + `mincore(2)`.
pub fn mincore_state(fd: BorrowedFd<'_>, off: u64, len: u64) -> std::io::Result<CacheState> {
    let map = mincore_pages(fd, off, len)?;
    let pages = map.len() as u64;
    let cached = map.iter().filter(|&&b| b).count() as u64;
    Ok(CacheState {
        pages,
        cached,
        dirty: None,
        writeback: None,
        evicted: None,
        recently_evicted: None,
        source: Cow::Borrowed("mincore"),
    })
}
