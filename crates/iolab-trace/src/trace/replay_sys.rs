//! The system calls a replay issues that std has no form for: advice,
//! readahead, ranges synced or allocated, seeks with any `whence`, and
//! directory reads. Each returns the call's result or the OS error.

use std::fs::File;
use std::io::{Error, Result};
use std::os::fd::AsRawFd;

fn zero_ok(rc: libc::c_int) -> Result<i64> {
    if rc < 0 {
        return Err(Error::last_os_error());
    }
    Ok(0)
}

fn counted(rc: i64) -> Result<i64> {
    if rc < 0 {
        return Err(Error::last_os_error());
    }
    Ok(rc)
}

/// `posix_fadvise(f, offset, len, advice)`.
pub fn fadvise(f: &File, offset: u64, len: u64, advice: u64) -> Result<i64> {
    // SAFETY: advice on a descriptor `f` owns; no memory is passed.
    let rc = unsafe {
        libc::posix_fadvise(
            f.as_raw_fd(),
            offset as i64,
            len as i64,
            advice as libc::c_int,
        )
    };
    match rc {
        0 => Ok(0),
        e => Err(Error::from_raw_os_error(e)),
    }
}

/// `readahead(f, offset, len)`.
pub fn readahead(f: &File, offset: u64, len: u64) -> Result<i64> {
    // SAFETY: a descriptor `f` owns; no memory is passed.
    counted(unsafe { libc::readahead(f.as_raw_fd(), offset as i64, len as usize) } as i64)
        .map(|_| 0)
}

/// `sync_file_range(f, offset, len, flags)`.
pub fn sync_file_range(f: &File, offset: u64, len: u64, flags: u64) -> Result<i64> {
    // SAFETY: a descriptor `f` owns; no memory is passed.
    zero_ok(unsafe {
        libc::sync_file_range(
            f.as_raw_fd(),
            offset as i64,
            len as i64,
            flags as libc::c_uint,
        )
    })
}

/// `fallocate(f, mode, offset, len)`.
pub fn fallocate(f: &File, mode: u64, offset: u64, len: u64) -> Result<i64> {
    // SAFETY: a descriptor `f` owns; no memory is passed.
    zero_ok(unsafe {
        libc::fallocate(
            f.as_raw_fd(),
            mode as libc::c_int,
            offset as i64,
            len as i64,
        )
    })
}

/// `lseek(f, offset, whence)`: the new position.
pub fn lseek(f: &File, offset: u64, whence: u64) -> Result<i64> {
    // SAFETY: a descriptor `f` owns; no memory is passed.
    counted(unsafe { libc::lseek(f.as_raw_fd(), offset as i64, whence as libc::c_int) })
}

/// `getdents64(f, buf, buf.len())`: the bytes of entries read.
pub fn getdents64(f: &File, buf: &mut [u8]) -> Result<i64> {
    // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`, on a
    // descriptor `f` owns.
    counted(unsafe {
        libc::syscall(
            libc::SYS_getdents64,
            f.as_raw_fd(),
            buf.as_mut_ptr(),
            buf.len(),
        )
    })
}

/// Asks the kernel to wake this thread's sleeps within 1 ns of their
/// time instead of the default 50 µs slack (calls issued on schedule).
pub fn fine_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes a number, no memory; it changes only
    // the calling thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}
