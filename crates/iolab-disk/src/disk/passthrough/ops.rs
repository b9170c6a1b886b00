//! The operations of the file layer's pass-through ([`Passthrough`]): each
//! asks the gate with its path relative to the backing root (reads and
//! writes with their byte range, fsync, flush and fsyncdir as flushes, the
//! rest as metadata), does the operation on the backing directory unless
//! an errno was decided, and answers after the decided delay. `rename`
//! and `link` pass the gate with their source path; `forget` has no answer
//! and does not pass it.

use super::attr::{TTL, attr_of};
use super::io::{
    fopen_flags, list, open_backing, or_answer, own, send_attr, send_data, send_empty, send_entry,
    send_written, set_mode, timespec,
};
use super::tables::{Handle, Passthrough, os_error};
use crate::disk::rules::Op;
use fuser::{
    AccessFlags, FileHandle, Filesystem, FopenFlags, INodeNo, KernelConfig, LockOwner, OpenFlags,
    RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow, WriteFlags,
};
use nix::fcntl::AT_FDCWD;
use nix::sys::stat::Mode;
use std::ffi::OsStr;
use std::fs::{File, Permissions};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

impl Filesystem for Passthrough {
    fn init(&mut self, _r: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // As the block layer: direct I/O stays asynchronous, with a queue;
        // directory operations run in parallel.
        let _ = config.add_capabilities(fuser::InitFlags::FUSE_ASYNC_DIO);
        let _ = config.add_capabilities(fuser::InitFlags::FUSE_PARALLEL_DIROPS);
        let _ = config.set_max_background(256);
        let _ = config.set_max_write(1 << 20);
        Ok(())
    }

    fn lookup(&self, _r: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let rel = or_answer!(self.child(parent, name), reply);
        self.meta(&rel.clone(), || self.entry_of(rel), send_entry(reply));
    }

    fn forget(&self, _r: &Request, ino: INodeNo, nlookup: u64) {
        Passthrough::forget(self, ino, nlookup);
    }

    fn getattr(&self, _r: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let rel = or_answer!(self.rel(ino), reply);
        let work = || {
            let md = match fh.map(|h| self.file(h.0)) {
                Some(Ok(f)) => f.metadata()?,
                _ => std::fs::symlink_metadata(self.full(&rel))?,
            };
            Ok(attr_of(ino, &md))
        };
        self.meta(&rel, work, send_attr(reply));
    }

    fn setattr(
        &self,
        _r: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let rel = or_answer!(self.rel(ino), reply);
        let full = self.full(&rel);
        let work = || {
            if let Some(m) = mode {
                std::fs::set_permissions(&full, Permissions::from_mode(m & 0o7777))?;
            }
            if uid.is_some() || gid.is_some() {
                std::os::unix::fs::lchown(&full, uid, gid)?;
            }
            if let Some(s) = size {
                match fh {
                    Some(h) => self.file(h.0)?.set_len(s)?,
                    None => File::options().write(true).open(&full)?.set_len(s)?,
                }
            }
            if atime.is_some() || mtime.is_some() {
                let (a, m) = (timespec(atime), timespec(mtime));
                let nofollow = nix::sys::stat::UtimensatFlags::NoFollowSymlink;
                nix::sys::stat::utimensat(AT_FDCWD, &full, &a, &m, nofollow)?;
            }
            Ok(attr_of(ino, &std::fs::symlink_metadata(&full)?))
        };
        self.meta(&rel, work, send_attr(reply));
    }

    fn readlink(&self, _r: &Request, ino: INodeNo, reply: ReplyData) {
        let rel = or_answer!(self.rel(ino), reply);
        let work = || {
            let target = std::fs::read_link(self.full(&rel))?;
            Ok(std::os::unix::ffi::OsStringExt::into_vec(
                target.into_os_string(),
            ))
        };
        self.meta(&rel, work, send_data(reply));
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        self.make(req, parent, name, reply, |full| {
            let kind = nix::sys::stat::SFlag::from_bits_truncate(mode & libc::S_IFMT);
            let perm = Mode::from_bits_truncate(mode & !umask & 0o7777);
            nix::sys::stat::mknod(full, kind, perm, rdev as libc::dev_t)?;
            set_mode(full, mode, umask)
        });
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        self.make(req, parent, name, reply, |full| {
            std::fs::create_dir(full)?;
            set_mode(full, mode, umask)
        });
    }

    fn unlink(&self, _r: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.remove(parent, name, reply, |p| std::fs::remove_file(p));
    }

    fn rmdir(&self, _r: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.remove(parent, name, reply, |p| std::fs::remove_dir(p));
    }

    fn symlink(
        &self,
        req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        self.make(req, parent, link_name, reply, |full| {
            std::os::unix::fs::symlink(target, full)
        });
    }

    fn rename(
        &self,
        _r: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let from = or_answer!(self.child(parent, name), reply);
        let to = or_answer!(self.child(newparent, newname), reply);
        let work = || {
            let (a, b) = (self.full(&from), self.full(&to));
            match flags.is_empty() {
                true => std::fs::rename(&a, &b)?,
                false => {
                    let f = nix::fcntl::RenameFlags::from_bits_truncate(flags.bits());
                    nix::fcntl::renameat2(AT_FDCWD, &a, AT_FDCWD, &b, f)?
                }
            }
            self.renamed(&from, &to, flags.contains(RenameFlags::RENAME_EXCHANGE));
            Ok(())
        };
        self.meta(&from, work, send_empty(reply));
    }

    fn link(
        &self,
        _r: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        let from = or_answer!(self.rel(ino), reply);
        let to = or_answer!(self.child(newparent, newname), reply);
        let work = || {
            std::fs::hard_link(self.full(&from), self.full(&to))?;
            self.entry_of(to)
        };
        self.meta(&from, work, send_entry(reply));
    }

    fn open(&self, _r: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let rel = or_answer!(self.rel(ino), reply);
        let work = || {
            let f = open_backing(&self.full(&rel), flags.0, 0)?;
            Ok(self.open_handle(Handle::File(Arc::new(f))))
        };
        self.meta(&rel, work, move |r| match r {
            Ok(fh) => reply.opened(FileHandle(fh), fopen_flags(flags.0)),
            Err(e) => reply.error(e),
        });
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let rel = or_answer!(self.child(parent, name), reply);
        let full = self.full(&rel);
        let work = || {
            let f = open_backing(&full, flags | libc::O_CREAT, mode & !umask & 0o7777)?;
            f.set_permissions(Permissions::from_mode(mode & !umask & 0o7777))?;
            own(req, &full)?;
            let attr = attr_of(INodeNo(0), &f.metadata()?);
            let attr = fuser::FileAttr {
                ino: self.entry_of(rel.clone())?.ino,
                ..attr
            };
            Ok((attr, self.open_handle(Handle::File(Arc::new(f)))))
        };
        self.meta(&rel.clone(), work, move |r| match r {
            Ok((attr, fh)) => reply.created(
                &TTL,
                &attr,
                fuser::Generation(0),
                FileHandle(fh),
                fopen_flags(flags),
            ),
            Err(e) => reply.error(e),
        });
    }

    fn read(
        &self,
        _r: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _f: OpenFlags,
        _l: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let rel = or_answer!(self.rel(ino), reply);
        let work = || {
            let f = self.file(fh.0)?;
            let mut buf = vec![0u8; size as usize];
            let mut n = 0;
            while n < buf.len() {
                match f.read_at(&mut buf[n..], offset + n as u64)? {
                    0 => break,
                    k => n += k,
                }
            }
            buf.truncate(n);
            Ok(buf)
        };
        let bytes = (offset, size as u64);
        self.gated(Op::Read, bytes, &rel, work, send_data(reply));
    }

    fn write(
        &self,
        _r: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _wf: WriteFlags,
        _f: OpenFlags,
        _l: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let rel = or_answer!(self.rel(ino), reply);
        let work = || {
            self.file(fh.0)?.write_all_at(data, offset)?;
            Ok(data.len() as u32)
        };
        let bytes = (offset, data.len() as u64);
        self.gated(Op::Write, bytes, &rel, work, send_written(reply));
    }

    fn flush(&self, _r: &Request, ino: INodeNo, fh: FileHandle, _l: LockOwner, reply: ReplyEmpty) {
        // Nothing to do on the backing file (a pass-through writes through).
        self.flush_op(ino, fh, reply, |_| Ok(()));
    }

    fn release(
        &self,
        _r: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _f: OpenFlags,
        _l: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.release_op(ino, fh, reply);
    }

    fn fsync(&self, _r: &Request, ino: INodeNo, fh: FileHandle, data: bool, reply: ReplyEmpty) {
        self.flush_op(ino, fh, reply, |f| match data {
            true => f.sync_data(),
            false => f.sync_all(),
        });
    }

    fn opendir(&self, _r: &Request, ino: INodeNo, _f: OpenFlags, reply: ReplyOpen) {
        let rel = or_answer!(self.rel(ino), reply);
        let work = || {
            let entries = list(&self.full(&rel), ino)?;
            Ok(self.open_handle(Handle::Dir(Arc::new(entries))))
        };
        self.meta(&rel, work, move |r| match r {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
            Err(e) => reply.error(e),
        });
    }

    fn readdir(
        &self,
        _r: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        reply: ReplyDirectory,
    ) {
        let rel = or_answer!(self.rel(ino), reply);
        let work = || match self.handle(fh.0) {
            Some(Handle::Dir(d)) => Ok(d),
            _ => Err(os_error(libc::EBADF)),
        };
        self.meta(&rel, work, move |r| {
            let mut reply = reply;
            match r {
                Ok(d) => {
                    for (i, (ino, kind, name)) in d.iter().enumerate().skip(offset as usize) {
                        if reply.add(INodeNo(*ino), (i + 1) as u64, *kind, name) {
                            break;
                        }
                    }
                    reply.ok()
                }
                Err(e) => reply.error(e),
            }
        });
    }

    fn releasedir(
        &self,
        _r: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _f: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.release_op(ino, fh, reply);
    }

    fn fsyncdir(&self, _r: &Request, ino: INodeNo, _fh: FileHandle, _d: bool, reply: ReplyEmpty) {
        let rel = or_answer!(self.rel(ino), reply);
        let work = || File::open(self.full(&rel))?.sync_all();
        self.gated(Op::Flush, (0, 0), &rel, work, send_empty(reply));
    }

    fn statfs(&self, _r: &Request, ino: INodeNo, reply: ReplyStatfs) {
        let rel = or_answer!(self.rel(ino), reply);
        let work = || Ok(nix::sys::statvfs::statvfs(&self.full(&rel))?);
        self.meta(&rel, work, move |r| match r {
            Ok(s) => reply.statfs(
                s.blocks(),
                s.blocks_free(),
                s.blocks_available(),
                s.files(),
                s.files_free(),
                s.block_size() as u32,
                s.name_max() as u32,
                s.fragment_size() as u32,
            ),
            Err(e) => reply.error(e),
        });
    }

    fn access(&self, _r: &Request, ino: INodeNo, mask: AccessFlags, reply: ReplyEmpty) {
        let rel = or_answer!(self.rel(ino), reply);
        let work = || {
            let mask = nix::unistd::AccessFlags::from_bits_truncate(mask.bits());
            Ok(nix::unistd::access(&self.full(&rel), mask)?)
        };
        self.meta(&rel, work, send_empty(reply));
    }

    fn fallocate(
        &self,
        _r: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let rel = or_answer!(self.rel(ino), reply);
        let work = || {
            let f = self.file(fh.0)?;
            let how = nix::fcntl::FallocateFlags::from_bits_truncate(mode);
            Ok(nix::fcntl::fallocate(
                &*f,
                how,
                offset as i64,
                length as i64,
            )?)
        };
        self.meta(&rel, work, send_empty(reply));
    }

    fn getxattr(&self, _r: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        self.get_xattr(ino, name, size, reply);
    }

    fn listxattr(&self, _r: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        self.list_xattr(ino, size, reply);
    }

    #[allow(clippy::too_many_arguments)]
    fn setxattr(
        &self,
        _r: &Request,
        ino: INodeNo,
        name: &OsStr,
        value: &[u8],
        flags: i32,
        _pos: u32,
        reply: ReplyEmpty,
    ) {
        self.set_xattr(ino, name, value, flags, reply);
    }

    fn removexattr(&self, _r: &Request, ino: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.remove_xattr(ino, name, reply);
    }
}
