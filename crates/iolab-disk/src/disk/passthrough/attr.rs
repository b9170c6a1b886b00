//! What the kernel is told of a backing file: its attributes
//! ([`attr_of`]) and how long it may keep them ([`TTL`]: not at all, so
//! every `stat`, `open` and path walk reaches the gate).

use fuser::{FileAttr, FileType, INodeNo};
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long the kernel may keep attributes and entries: not at all.
pub(super) const TTL: Duration = Duration::ZERO;

fn time(secs: i64, nsecs: i64) -> SystemTime {
    let t = Duration::new(secs.unsigned_abs(), nsecs.clamp(0, 999_999_999) as u32);
    match secs >= 0 {
        true => UNIX_EPOCH + t,
        false => UNIX_EPOCH - t,
    }
}

/// The attributes of a backing file, under inode number `ino`.
pub(super) fn attr_of(ino: INodeNo, md: &Metadata) -> FileAttr {
    FileAttr {
        ino,
        size: md.size(),
        blocks: md.blocks(),
        atime: time(md.atime(), md.atime_nsec()),
        mtime: time(md.mtime(), md.mtime_nsec()),
        ctime: time(md.ctime(), md.ctime_nsec()),
        crtime: time(md.ctime(), md.ctime_nsec()),
        kind: FileType::from_std(md.file_type()).unwrap_or(FileType::RegularFile),
        perm: (md.mode() & 0o7777) as u16,
        nlink: md.nlink() as u32,
        uid: md.uid(),
        gid: md.gid(),
        rdev: md.rdev() as u32,
        blksize: md.blksize() as u32,
        flags: 0,
    }
}
