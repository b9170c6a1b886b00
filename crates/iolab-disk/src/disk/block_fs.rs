//! The FUSE file system of the block layer: one file, `disk.img`, the
//! image, whose reads, writes and fsyncs pass the gate. The loop device
//! above it does direct I/O, so each block request arrives here as one
//! read or write; answers are deferred, so requests overlap.

use super::gate::Gate;
use super::image::{Image, Stale};
use super::rules::Op;
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, KernelConfig,
    LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen,
    ReplyWrite, Request, WriteFlags,
};
use std::ffi::OsStr;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

/// The image's name in the FUSE mount.
pub const IMAGE_NAME: &str = "disk.img";
const IMG: INodeNo = INodeNo(2);
const TTL: Duration = Duration::from_secs(3600);

/// The image, served through the gate.
pub struct BlockFs {
    /// The bytes.
    pub image: Arc<Image>,
    /// The rules and timer.
    pub gate: Arc<Gate>,
}

fn errno(e: i32) -> Errno {
    Errno::from_i32(e)
}

impl BlockFs {
    fn attr(&self, ino: INodeNo) -> FileAttr {
        let (kind, size, perm) = match ino == IMG {
            true => (FileType::RegularFile, self.image.len(), 0o600),
            false => (FileType::Directory, 0, 0o755),
        };
        FileAttr {
            ino,
            size,
            blocks: size / 512,
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind,
            perm,
            nlink: 1,
            uid: 0,
            gid: 0,
            rdev: 0,
            flags: 0,
            blksize: 4096,
        }
    }
}

impl Filesystem for BlockFs {
    fn init(&mut self, _r: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // Direct I/O from the loop device stays asynchronous (else the
        // kernel sends one request at a time), with room for a queue.
        let _ = config.add_capabilities(fuser::InitFlags::FUSE_ASYNC_DIO);
        let _ = config.set_max_background(256);
        let _ = config.set_max_write(1 << 20);
        Ok(())
    }

    fn lookup(&self, _r: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match parent == INodeNo::ROOT && name == IMAGE_NAME {
            true => reply.entry(&TTL, &self.attr(IMG), fuser::Generation(0)),
            false => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _r: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        reply.attr(&TTL, &self.attr(ino));
    }

    fn open(&self, _r: &Request, _ino: INodeNo, _f: OpenFlags, reply: ReplyOpen) {
        // The handle remembers the crash epoch it was opened in.
        reply.opened(FileHandle(self.image.epoch()), FopenFlags::FOPEN_DIRECT_IO);
    }

    fn read(
        &self,
        _r: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _f: OpenFlags,
        _l: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let d = self.gate.decide(Op::Read, (offset, size as u64), None);
        let answer: Box<dyn FnOnce() + Send> = match d.errno {
            Some(e) => Box::new(move || reply.error(errno(e))),
            None => match self.image.read(offset, size) {
                Ok(data) => Box::new(move || reply.data(&data)),
                Err(_) => Box::new(move || reply.error(Errno::EIO)),
            },
        };
        self.gate.answer(d.delay_ns, answer);
    }

    fn write(
        &self,
        _r: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _wf: WriteFlags,
        _f: OpenFlags,
        _l: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let d = self
            .gate
            .decide(Op::Write, (offset, data.len() as u64), None);
        let answer: Box<dyn FnOnce() + Send> = match d.errno {
            Some(e) => Box::new(move || reply.error(errno(e))),
            None => match self.image.write(offset, data, fh.0) {
                Ok(Ok(n)) => Box::new(move || reply.written(n)),
                Ok(Err(Stale)) | Err(_) => Box::new(move || reply.error(Errno::EIO)),
            },
        };
        self.gate.answer(d.delay_ns, answer);
    }

    /// The loop device's discards (`fstrim`, `rm` with `-o discard`, mkfs)
    /// arrive as punched holes: the blocks read back as zeros and their
    /// memory is freed. Allocation (mode 0) has nothing to do.
    fn fallocate(
        &self,
        _r: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let zero = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE;
        if mode & !(zero | libc::FALLOC_FL_KEEP_SIZE) != 0 {
            return reply.error(Errno::EOPNOTSUPP);
        }
        if mode & zero == 0 {
            return reply.ok();
        }
        match self.image.punch(offset, length, fh.0) {
            Ok(Ok(())) => reply.ok(),
            Ok(Err(Stale)) | Err(_) => reply.error(Errno::EIO),
        }
    }

    fn flush(&self, _r: &Request, _i: INodeNo, _fh: FileHandle, _l: LockOwner, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fsync(&self, _r: &Request, _i: INodeNo, fh: FileHandle, _d: bool, reply: ReplyEmpty) {
        let d = self.gate.decide(Op::Flush, (0, 0), None);
        let answer: Box<dyn FnOnce() + Send> = match d.errno {
            Some(e) => Box::new(move || reply.error(errno(e))),
            // A handle from before a crash flushes nothing of the new epoch.
            None if fh.0 != self.image.epoch() => Box::new(move || reply.error(Errno::EIO)),
            None => match self.image.flush() {
                Ok(()) => Box::new(move || reply.ok()),
                Err(_) => Box::new(move || reply.error(Errno::EIO)),
            },
        };
        self.gate.answer(d.delay_ns, answer);
    }

    fn readdir(
        &self,
        _r: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let entries = [
            (INodeNo::ROOT, FileType::Directory, "."),
            (INodeNo::ROOT, FileType::Directory, ".."),
            (IMG, FileType::RegularFile, IMAGE_NAME),
        ];
        for (i, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(ino, (i + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok();
    }
}
