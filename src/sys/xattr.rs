//! Extended attributes by path: iolab's marks on what it made (laid-out
//! files, trees), which make re-runs and removal safe.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn cstrings(path: &Path, name: &str) -> Option<(CString, CString)> {
    Some((
        CString::new(path.as_os_str().as_bytes()).ok()?,
        CString::new(name).ok()?,
    ))
}

/// True when `path` carries attribute `name` with a non-empty value.
pub fn has(path: &Path, name: &str) -> bool {
    let Some((p, n)) = cstrings(path, name) else {
        return false;
    };
    let mut buf = [0u8; 64];
    // SAFETY: valid NUL-terminated strings and a buffer of the given length.
    let rc = unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    rc > 0
}

/// Sets attribute `name` on `path` (following symlinks).
pub fn set(path: &Path, name: &str, value: &[u8]) -> std::io::Result<()> {
    let (p, n) = cstrings(path, name).ok_or_else(|| std::io::Error::other("NUL in path"))?;
    // SAFETY: valid NUL-terminated strings and a value of the given length.
    let rc = unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
