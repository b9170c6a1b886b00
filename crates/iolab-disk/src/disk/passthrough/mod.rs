//! The FUSE file system of the file layer: a pass-through over the backing
//! directory whose every operation passes the gate with its path relative
//! to the backing root (`logs/a.log`), so `--fail read=EIO@1@*.log`
//! applies to files by name. The operations themselves are in
//! `ops` (extended attributes in `xattr`), what they share with the
//! backing directory and the kernel in `io`, what the kernel is told of
//! a file in `attr`; the inode and handle tables and the one place that
//! asks the gate are in `tables`.
//!
//! Attributes and entries are given with a TTL of 0: the kernel asks again
//! for every `stat`, `open` and path walk, so each one reaches the gate (a
//! metadata experiment sees every operation) and changes made in the
//! backing directory show at once. File data is cached by the kernel only
//! while a file is open (no `FOPEN_KEEP_CACHE`): each `open` drops what was
//! cached, so its reads pass the gate again; O_DIRECT opens bypass the
//! cache (`FOPEN_DIRECT_IO`); writes always pass it (no writeback cache).

mod attr;
mod io;
mod ops;
mod tables;
mod xattr;

pub use tables::Passthrough;
