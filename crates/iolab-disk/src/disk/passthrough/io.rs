//! How the file layer's pass-through touches the backing directory and
//! answers the kernel: opening backing files with the kernel's flags,
//! listing directories, giving made files to their user, the answers of
//! each reply kind, and the shapes several operations share (make a name,
//! remove one, flush, release).

use super::attr::TTL;
use super::tables::{DirEntry, Passthrough};
use crate::disk::rules::Op;
use fuser::{
    Errno, FileAttr, FileHandle, FileType, FopenFlags, INodeNo, ReplyAttr, ReplyData, ReplyEmpty,
    ReplyEntry, ReplyWrite, Request, TimeOrNow,
};
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use nix::sys::time::TimeSpec;
use std::ffi::OsStr;
use std::fs::{File, Permissions};
use std::io::Result as IoResult;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::UNIX_EPOCH;

/// The value of a path lookup, or answers its error and returns.
macro_rules! or_answer {
    ($r:expr, $reply:ident) => {
        match $r {
            Ok(v) => v,
            Err(e) => return $reply.error(e),
        }
    };
}
pub(super) use or_answer;

/// Gives a file made for `req` to its user, as the kernel would.
pub(super) fn own(req: &Request, full: &Path) -> IoResult<()> {
    let me = (
        nix::unistd::geteuid().as_raw(),
        nix::unistd::getegid().as_raw(),
    );
    match (req.uid(), req.gid()) == me {
        true => Ok(()),
        false => std::os::unix::fs::lchown(full, Some(req.uid()), Some(req.gid())),
    }
}

/// The permission bits asked for, whatever the daemon's umask.
pub(super) fn set_mode(full: &Path, mode: u32, umask: u32) -> IoResult<()> {
    std::fs::set_permissions(full, Permissions::from_mode(mode & !umask & 0o7777))
}

/// Opens a backing file with the flags the kernel passed, less O_DIRECT
/// (the kernel then bypasses its cache instead: answered by the caller).
pub(super) fn open_backing(full: &Path, flags: i32, mode: u32) -> IoResult<File> {
    let drop = libc::O_DIRECT | libc::O_NOCTTY;
    let oflag = OFlag::from_bits_truncate(flags & !drop) | OFlag::O_CLOEXEC;
    let fd = nix::fcntl::open(full, oflag, Mode::from_bits_truncate(mode))?;
    Ok(File::from(fd))
}

/// How the kernel should cache an open file: not at all for O_DIRECT.
pub(super) fn fopen_flags(flags: i32) -> FopenFlags {
    match flags & libc::O_DIRECT != 0 {
        true => FopenFlags::FOPEN_DIRECT_IO,
        false => FopenFlags::empty(),
    }
}

/// A time of `setattr` for utimensat (none: left as it is).
pub(super) fn timespec(t: Option<TimeOrNow>) -> TimeSpec {
    match t {
        None => TimeSpec::UTIME_OMIT,
        Some(TimeOrNow::Now) => TimeSpec::UTIME_NOW,
        Some(TimeOrNow::SpecificTime(t)) => {
            TimeSpec::from(t.duration_since(UNIX_EPOCH).unwrap_or_default())
        }
    }
}

/// A directory's entries now, with `.` and `..`.
pub(super) fn list(full: &Path, ino: INodeNo) -> IoResult<Vec<DirEntry>> {
    let mut out = vec![
        (ino.0, FileType::Directory, ".".into()),
        (ino.0, FileType::Directory, "..".into()),
    ];
    for e in std::fs::read_dir(full)? {
        let e = e?;
        let kind = e.file_type().ok().and_then(FileType::from_std);
        let kind = kind.unwrap_or(FileType::RegularFile);
        out.push((std::os::unix::fs::DirEntryExt::ino(&e), kind, e.file_name()));
    }
    Ok(out)
}

impl Passthrough {
    /// Makes `name` in `parent` with `make` (given the backing path), for
    /// `req`, and answers its entry.
    pub(super) fn make(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        reply: ReplyEntry,
        make: impl FnOnce(&Path) -> IoResult<()>,
    ) {
        let rel = or_answer!(self.child(parent, name), reply);
        let full = self.full(&rel);
        self.meta(
            &rel.clone(),
            || {
                make(&full)?;
                own(req, &full)?;
                self.entry_of(rel)
            },
            send_entry(reply),
        );
    }

    /// Removes `name` from `parent` with `remove`.
    pub(super) fn remove(
        &self,
        parent: INodeNo,
        name: &OsStr,
        reply: ReplyEmpty,
        remove: fn(&Path) -> IoResult<()>,
    ) {
        let rel = or_answer!(self.child(parent, name), reply);
        let work = || {
            remove(&self.full(&rel))?;
            self.removed(&rel);
            Ok(())
        };
        self.meta(&rel, work, send_empty(reply));
    }

    /// A flush-kind operation on `ino`: `work` on its open file `fh`.
    pub(super) fn flush_op(
        &self,
        ino: INodeNo,
        fh: FileHandle,
        reply: ReplyEmpty,
        work: impl FnOnce(&File) -> IoResult<()>,
    ) {
        let rel = or_answer!(self.rel(ino), reply);
        self.gated(
            Op::Flush,
            (0, 0),
            &rel,
            || work(&*self.file(fh.0)?),
            send_empty(reply),
        );
    }

    /// Closes handle `fh` whatever the gate says (a release cannot fail),
    /// then passes the gate for its delay and count.
    pub(super) fn release_op(&self, ino: INodeNo, fh: FileHandle, reply: ReplyEmpty) {
        self.close_handle(fh.0);
        let rel = self.rel(ino).unwrap_or_default();
        self.meta(&rel, || Ok(()), move |_| reply.ok());
    }
}

/// Answers an entry (lookup, mkdir, create, ...).
pub(super) fn send_entry(reply: ReplyEntry) -> impl FnOnce(Result<FileAttr, Errno>) + Send {
    move |r| match r {
        Ok(a) => reply.entry(&TTL, &a, fuser::Generation(0)),
        Err(e) => reply.error(e),
    }
}

/// Answers attributes (getattr, setattr).
pub(super) fn send_attr(reply: ReplyAttr) -> impl FnOnce(Result<FileAttr, Errno>) + Send {
    move |r| match r {
        Ok(a) => reply.attr(&TTL, &a),
        Err(e) => reply.error(e),
    }
}

/// Answers success or an error.
pub(super) fn send_empty(reply: ReplyEmpty) -> impl FnOnce(Result<(), Errno>) + Send {
    move |r| match r {
        Ok(()) => reply.ok(),
        Err(e) => reply.error(e),
    }
}

/// Answers bytes (read, readlink).
pub(super) fn send_data(reply: ReplyData) -> impl FnOnce(Result<Vec<u8>, Errno>) + Send {
    move |r| match r {
        Ok(d) => reply.data(&d),
        Err(e) => reply.error(e),
    }
}

/// Answers a byte count written.
pub(super) fn send_written(reply: ReplyWrite) -> impl FnOnce(Result<u32, Errno>) + Send {
    move |r| match r {
        Ok(n) => reply.written(n),
        Err(e) => reply.error(e),
    }
}
