//! From a file to the disk(s) under it: `st_dev` → `/sys/dev/block/MAJ:MIN`,
//! then down through partitions (their parent), device-mapper and md (their
//! `slaves/`), and loop devices (the device of their backing file).

use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A whole disk as named in `/proc/diskstats`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disk {
    /// Kernel name (`vda`, `nvme0n1`, `sda`).
    pub name: String,
    /// Devices passed on the way down (`vda1`, `loop0`, `dm-0`).
    pub via: Vec<String>,
}

/// The disks holding `path` (empty for tmpfs, overlay and other file
/// systems without a block device).
pub fn disks_behind(path: &Path) -> Vec<Disk> {
    let Ok(m) = std::fs::metadata(path) else {
        return Vec::new();
    };
    let dev = if m.file_type().is_block_device_like() {
        m.rdev()
    } else {
        m.dev()
    };
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    if maj == 0 {
        return Vec::new();
    }
    let sys = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    let Ok(real) = std::fs::canonicalize(&sys) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk(&real, Vec::new(), &mut out, 0);
    out
}

trait BlockLike {
    fn is_block_device_like(&self) -> bool;
}

impl BlockLike for std::fs::FileType {
    fn is_block_device_like(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.is_block_device()
    }
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn walk(dev: &Path, mut via: Vec<String>, out: &mut Vec<Disk>, depth: u32) {
    if depth > 8 {
        return;
    }
    let name = name_of(dev);
    if dev.join("partition").exists() {
        via.push(name);
        if let Some(parent) = dev.parent() {
            walk(parent, via, out, depth + 1);
        }
        return;
    }
    if let Ok(backing) = std::fs::read_to_string(dev.join("loop/backing_file")) {
        let under = disks_behind(Path::new(backing.trim()));
        // A file on no block device (tmpfs, FUSE: an iolab disk's image):
        // the loop device is the disk.
        if under.is_empty() {
            out.push(Disk { name, via });
            return;
        }
        via.push(name);
        for d in under {
            let mut v = via.clone();
            v.extend(d.via);
            out.push(Disk {
                name: d.name,
                via: v,
            });
        }
        return;
    }
    let slaves: Vec<PathBuf> = std::fs::read_dir(dev.join("slaves"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| std::fs::canonicalize(e.path()).ok())
                .collect()
        })
        .unwrap_or_default();
    if !slaves.is_empty() {
        via.push(name);
        for s in slaves {
            walk(&s, via.clone(), out, depth + 1);
        }
        return;
    }
    out.push(Disk { name, via });
}
