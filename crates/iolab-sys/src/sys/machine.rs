//! Facts about this machine that need no error handling: root or not, the
//! page size, free space under a directory, lines of `/proc/meminfo`.

use std::path::Path;

/// True when iolab runs as root (effective user id 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The page size of this machine in bytes.
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as u64 }
}

/// Free bytes for unprivileged users on the file system holding `dir`
/// (0 if unknown).
pub fn free_disk(dir: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return 0;
    };
    // SAFETY: statvfs fills the zeroed struct for a valid NUL-terminated path.
    unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut s) != 0 {
            return 0;
        }
        s.f_bavail * s.f_frsize
    }
}

/// A `/proc/meminfo` line in bytes (`MemTotal`, `MemAvailable`); 0 if absent.
pub fn meminfo(key: &str) -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}
