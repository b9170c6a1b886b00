//! Extended attributes: iolab's marks on what it made (laid-out files,
//! trees), which make re-runs and removal safe. On an open descriptor
//! (what the next check reads is the file that was opened) or by path.

use std::ffi::CString;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn c_name(name: &str) -> std::io::Result<CString> {
    CString::new(name).map_err(|_| std::io::Error::other("NUL in attribute name"))
}

fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// True when the open file `fd` carries attribute `name` with a value.
pub fn has_fd(fd: BorrowedFd<'_>, name: &str) -> bool {
    let Ok(n) = c_name(name) else { return false };
    let mut buf = [0u8; 64];
    // SAFETY: valid descriptor and NUL-terminated name; the kernel writes at
    // most `buf.len()` bytes into `buf`.
    let rc = unsafe {
        libc::fgetxattr(
            fd.as_raw_fd(),
            n.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    rc > 0
}

/// Sets attribute `name` on the open file `fd`.
pub fn set_fd(fd: BorrowedFd<'_>, name: &str, value: &[u8]) -> std::io::Result<()> {
    let n = c_name(name)?;
    // SAFETY: valid descriptor, NUL-terminated name, value of the given length.
    check(unsafe {
        libc::fsetxattr(
            fd.as_raw_fd(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    })
}

/// True when `path` carries attribute `name` with a value (following symlinks).
pub fn has(path: &Path, name: &str) -> bool {
    super::fs::open_file(path, false, 0).is_ok_and(|f| has_fd(std::os::fd::AsFd::as_fd(&f), name))
}

/// Sets attribute `name` on `path` (following symlinks).
pub fn set(path: &Path, name: &str, value: &[u8]) -> std::io::Result<()> {
    let p = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("NUL in path"))?;
    let n = c_name(name)?;
    // SAFETY: valid NUL-terminated strings and a value of the given length.
    check(unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    })
}

fn c_path(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| std::io::Error::other("NUL in path"))
}

fn sized(rc: isize) -> std::io::Result<usize> {
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(rc as usize)
}

/// Attribute `name` of `path` itself (a symlink's own), into `buf`; with
/// an empty `buf`, the value's size. Bytes written (or needed).
pub fn get_raw(path: &Path, name: &[u8], buf: &mut [u8]) -> std::io::Result<usize> {
    let (p, n) = (
        c_path(path)?,
        CString::new(name).map_err(std::io::Error::other)?,
    );
    // SAFETY: NUL-terminated strings; the kernel writes at most `buf.len()`
    // bytes into `buf` (none when it is empty).
    sized(unsafe { libc::lgetxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) })
}

/// The attribute names of `path` itself, NUL-separated, into `buf`; with
/// an empty `buf`, the size needed.
pub fn list_raw(path: &Path, buf: &mut [u8]) -> std::io::Result<usize> {
    let p = c_path(path)?;
    // SAFETY: a NUL-terminated path; the kernel writes at most `buf.len()` bytes.
    sized(unsafe { libc::llistxattr(p.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) })
}

/// Sets attribute `name` of `path` itself with setxattr's `flags`.
pub fn set_raw(path: &Path, name: &[u8], value: &[u8], flags: i32) -> std::io::Result<()> {
    let (p, n) = (
        c_path(path)?,
        CString::new(name).map_err(std::io::Error::other)?,
    );
    // SAFETY: NUL-terminated strings and a value of the given length.
    check(unsafe {
        libc::lsetxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            flags,
        )
    })
}

/// Removes attribute `name` of `path` itself.
pub fn remove_raw(path: &Path, name: &[u8]) -> std::io::Result<()> {
    let (p, n) = (
        c_path(path)?,
        CString::new(name).map_err(std::io::Error::other)?,
    );
    // SAFETY: NUL-terminated strings.
    check(unsafe { libc::lremovexattr(p.as_ptr(), n.as_ptr()) })
}
