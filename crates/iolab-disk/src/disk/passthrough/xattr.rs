//! Extended attributes on the file layer: passed to the backing file (its
//! own, not a symlink's target), as metadata operations through the gate.
//! iolab's own runs mark the files they lay out with one.

use super::io::{or_answer, send_empty};
use super::tables::Passthrough;
use crate::sys::xattr;
use fuser::{Errno, INodeNo, ReplyEmpty, ReplyXattr};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// Answers a size (when `size` asked 0) or the bytes.
fn send_xattr(reply: ReplyXattr, size: u32) -> impl FnOnce(Result<Vec<u8>, Errno>) + Send {
    move |r| match r {
        Ok(v) if size == 0 => reply.size(v.len() as u32),
        Ok(v) if v.len() > size as usize => reply.error(Errno::ERANGE),
        Ok(v) => reply.data(&v),
        Err(e) => reply.error(e),
    }
}

/// Reads with a buffer grown to what the kernel says it needs.
fn read_all(mut get: impl FnMut(&mut [u8]) -> std::io::Result<usize>) -> std::io::Result<Vec<u8>> {
    let n = get(&mut [])?;
    let mut buf = vec![0u8; n];
    let got = get(&mut buf)?;
    buf.truncate(got);
    Ok(buf)
}

impl Passthrough {
    /// FUSE getxattr.
    pub(super) fn get_xattr(&self, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        let rel = or_answer!(self.rel(ino), reply);
        let path = self.full(&rel);
        let work = || read_all(|b| xattr::get_raw(&path, name.as_bytes(), b));
        self.meta(&rel, work, send_xattr(reply, size));
    }

    /// FUSE listxattr.
    pub(super) fn list_xattr(&self, ino: INodeNo, size: u32, reply: ReplyXattr) {
        let rel = or_answer!(self.rel(ino), reply);
        let path = self.full(&rel);
        let work = || read_all(|b| xattr::list_raw(&path, b));
        self.meta(&rel, work, send_xattr(reply, size));
    }

    /// FUSE setxattr.
    pub(super) fn set_xattr(
        &self,
        ino: INodeNo,
        name: &OsStr,
        value: &[u8],
        flags: i32,
        reply: ReplyEmpty,
    ) {
        let rel = or_answer!(self.rel(ino), reply);
        let path = self.full(&rel);
        let work = || xattr::set_raw(&path, name.as_bytes(), value, flags);
        self.meta(&rel, work, send_empty(reply));
    }

    /// FUSE removexattr.
    pub(super) fn remove_xattr(&self, ino: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let rel = or_answer!(self.rel(ino), reply);
        let path = self.full(&rel);
        let work = || xattr::remove_raw(&path, name.as_bytes());
        self.meta(&rel, work, send_empty(reply));
    }
}
