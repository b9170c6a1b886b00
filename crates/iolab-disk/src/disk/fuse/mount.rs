//! The mount itself: /dev/fuse, mount(2) and umount2(2) without
//! fusermount (we run as root), and the connection's abort switch under
//! /sys/fs/fuse/connections for when a mount cannot be taken down.

use super::error::FuseError;
use nix::mount::{MntFlags, MsFlags};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// The source shown in /proc/mounts.
pub const SOURCE: &str = "iolab-disk";
/// The file system type.
const FSTYPE: &str = "fuse";
/// The kernel module's switch for FUSE over io_uring.
pub(crate) const ENABLE_URING: &str = "/sys/module/fuse/parameters/enable_uring";

/// Opens /dev/fuse for a new connection.
pub(crate) fn open_dev() -> Result<OwnedFd, FuseError> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .map(OwnedFd::from)
        .map_err(|e| FuseError::io("cannot open /dev/fuse", e))
}

/// The mount options: root's own file system that others may read
/// (`allow_other`), permissions checked by the kernel from the modes
/// (`default_permissions`, so no ACCESS requests), reads of up to
/// `max_read` bytes per request.
pub(crate) fn options(fd: &OwnedFd, max_read: u32) -> String {
    format!(
        "fd={},rootmode=40000,user_id=0,group_id=0,allow_other,default_permissions,max_read={max_read}",
        fd.as_raw_fd()
    )
}

/// Mounts the connection of `fd` at `dir`.
pub(crate) fn mount(dir: &Path, fd: &OwnedFd, max_read: u32) -> Result<(), FuseError> {
    let data = options(fd, max_read);
    nix::mount::mount(
        Some(SOURCE),
        dir,
        Some(FSTYPE),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(data.as_str()),
    )
    .map_err(|e| FuseError::Mount {
        dir: dir.to_path_buf(),
        source: e.into(),
    })
}

/// How an unmount went.
#[derive(Debug, PartialEq)]
pub(crate) enum Unmounted {
    /// Taken down; the kernel ended the connection.
    Clean,
    /// Nothing was mounted there any more (someone else unmounted it).
    Gone,
    /// Busy (a loop device or an open file on it): detached lazily; the
    /// connection lives on until aborted.
    Detached,
}

/// Unmounts `dir`: plainly, else (busy) lazily.
pub(crate) fn unmount(dir: &Path) -> Result<Unmounted, FuseError> {
    use nix::errno::Errno;
    match nix::mount::umount2(dir, MntFlags::empty()) {
        Ok(()) => Ok(Unmounted::Clean),
        Err(Errno::EINVAL | Errno::ENOENT) => Ok(Unmounted::Gone),
        Err(Errno::EBUSY) => match nix::mount::umount2(dir, MntFlags::MNT_DETACH) {
            Ok(()) => Ok(Unmounted::Detached),
            Err(Errno::EINVAL | Errno::ENOENT) => Ok(Unmounted::Gone),
            Err(e) => Err(FuseError::errno(format!("umount2 {}", dir.display()), e)),
        },
        Err(e) => Err(FuseError::errno(format!("umount2 {}", dir.display()), e)),
    }
}

/// The connection's directory under /sys/fs/fuse/connections, named by
/// the mount's device number as the kernel writes it (major << 20 |
/// minor), found in /proc/self/mountinfo (a stat would ask the server).
pub(crate) fn connection(dir: &Path) -> Option<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = dir.to_str()?;
    let dev = info.lines().rev().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let f: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        let here = unescape(f.get(4)?) == want;
        (here && r.first() == Some(&FSTYPE) && r.get(1) == Some(&SOURCE)).then(|| f[2])
    })?;
    let (major, minor) = dev.split_once(':')?;
    let id = (major.parse::<u32>().ok()? << 20) | minor.parse::<u32>().ok()?;
    Some(PathBuf::from(format!("/sys/fs/fuse/connections/{id}")))
}

/// A mountinfo path with its octal escapes (`\040` for a space) undone.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], oct) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Aborts a connection: every request waiting on it fails with ENOTCONN
/// and the queue threads see it end. Needs fusectl mounted at
/// /sys/fs/fuse/connections (systemd does it; we do not mount it).
pub(crate) fn abort(conn: &Path) -> std::io::Result<()> {
    std::fs::write(conn.join("abort"), "1")
}

/// True when the fuse module lets connections use io_uring
/// (`enable_uring` reads Y or 1); Err says why not.
pub(crate) fn uring_enabled() -> Result<(), String> {
    match std::fs::read_to_string(ENABLE_URING) {
        Ok(v) if matches!(v.trim(), "Y" | "y" | "1") => Ok(()),
        Ok(_) => Err("enable_uring is off".into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err("this kernel has no FUSE over io_uring (no enable_uring parameter)".into())
        }
        Err(e) => Err(format!("cannot read {ENABLE_URING}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes() {
        assert_eq!(unescape(r"/tmp/a\040b"), "/tmp/a b");
        assert_eq!(unescape(r"/x\\y"), r"/x\\y");
        assert_eq!(unescape("/plain"), "/plain");
    }
}
