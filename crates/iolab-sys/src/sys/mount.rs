//! Mounting and unmounting (nix's wrappers of mount(2) and umount2(2)), and
//! reading what is mounted where.

use super::environment::unescape;
use nix::mount::{MntFlags, MsFlags};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Mounts the file system `fstype` on `source` at `target`, with the
/// comma-separated `options` (`""`: the defaults).
pub fn mount(source: &Path, target: &Path, fstype: &str, options: &str) -> std::io::Result<()> {
    let data = (!options.is_empty()).then_some(options);
    nix::mount::mount(Some(source), target, Some(fstype), MsFlags::empty(), data)
        .map_err(std::io::Error::from)
}

/// How an unmount went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmounted {
    /// It was not mounted.
    NotMounted,
    /// Unmounted.
    Clean,
    /// Still busy after `wait`: detached lazily (gone from the tree, freed
    /// when its last file closes).
    Lazy,
}

/// Unmounts `target`, trying again while it is busy for up to `wait`,
/// then lazily.
pub fn unmount(target: &Path, wait: Duration) -> std::io::Result<Unmounted> {
    if !is_mount_point(target) {
        return Ok(Unmounted::NotMounted);
    }
    let until = Instant::now() + wait;
    loop {
        match nix::mount::umount2(target, MntFlags::empty()) {
            Ok(()) => return Ok(Unmounted::Clean),
            Err(nix::errno::Errno::EBUSY) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Err(nix::errno::Errno::EINVAL) if !is_mount_point(target) => {
                return Ok(Unmounted::NotMounted);
            }
            Err(_) => break,
        }
    }
    nix::mount::umount2(target, MntFlags::MNT_DETACH)
        .map(|()| Unmounted::Lazy)
        .map_err(std::io::Error::from)
}

/// The mount points listed in `/proc/self/mounts`, unescaped.
pub fn mount_points() -> Vec<PathBuf> {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(' ').nth(1))
        .map(|p| PathBuf::from(unescape(p)))
        .collect()
}

/// The file system type and source mounted at `path` (the last mount
/// there, the one visible), if `path` is a mount point.
pub fn mounted_at(path: &Path) -> Option<(String, String)> {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let point = PathBuf::from(unescape(f.get(1)?));
            Some((point, f.get(2)?.to_string(), unescape(f.first()?)))
        })
        .rfind(|(p, _, _)| p == path)
        .map(|(_, t, s)| (t, s))
}

/// True when `path` is a mount point.
pub fn is_mount_point(path: &Path) -> bool {
    mount_points().iter().any(|m| m == path)
}

/// True when the file system mounted at `path` is read-only now.
pub fn is_read_only(path: &Path) -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            let point = PathBuf::from(unescape(f.nth(1)?));
            Some((point, f.nth(1)?.split(',').any(|o| o == "ro")))
        })
        .rfind(|(p, _)| p == path)
        .is_some_and(|(_, ro)| ro)
}
