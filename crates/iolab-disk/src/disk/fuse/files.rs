//! The one-file namespace: a root directory holding the image under one
//! name. Each request, whichever transport brought it, becomes an
//! [`Outcome`]: nothing (forgets), an answer now, or an answer after the
//! handler's delay. READ, WRITE, FALLOCATE and FSYNC go to the
//! [`ImageHandler`]; READ fills the transport's own buffer and WRITE reads
//! from it, so the data is never copied here.

use super::proto::{self, Wire, op};
use super::{Answer, Failures, ImageHandler};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

/// The image's node id.
pub(crate) const FILE_ID: u64 = 2;
/// How long the kernel may cache names and attributes: the file never
/// changes size or name while mounted.
const TTL_SECS: u64 = 3600;
/// Room for any answer but READ's data and READDIR's entries.
pub(crate) const SMALL: usize = 256;

/// Where a request's variable part comes from and its answer's body goes.
pub(crate) trait Body {
    /// The bytes after the opcode's own header: LOOKUP's name, WRITE's data.
    fn input(&self) -> &[u8];
    /// Room for the answer's body (without the out header).
    fn output(&mut self) -> &mut [u8];
}

/// What to do with a request.
#[derive(Debug, PartialEq)]
pub(crate) enum Outcome {
    /// Send nothing (FORGET, BATCH_FORGET, INTERRUPT).
    Silent,
    /// Send the first `len` bytes of the output (none on an error) after
    /// `delay_ns`.
    Reply {
        /// An errno, 0 on success.
        errno: i32,
        /// The body's length.
        len: usize,
        /// How long to hold the answer back.
        delay_ns: u64,
    },
}

impl Outcome {
    fn now(len: usize) -> Outcome {
        Outcome::Reply {
            errno: 0,
            len,
            delay_ns: 0,
        }
    }

    fn error(errno: i32) -> Outcome {
        Outcome::Reply {
            errno,
            len: 0,
            delay_ns: 0,
        }
    }

    /// The handler's answer, with `len(bytes)` the body it leaves.
    fn from(a: Answer, len: impl FnOnce(u32) -> usize) -> Outcome {
        let (errno, len) = match a.result {
            Ok(n) => (0, len(n)),
            Err(e) if e > 0 => (e, 0),
            Err(_) => (libc::EIO, 0),
        };
        Outcome::Reply {
            errno,
            len,
            delay_ns: a.delay_ns,
        }
    }
}

/// Where the opcode's own header ends in the arguments of a request read
/// from /dev/fuse (io_uring hands the two parts over separately).
pub(crate) fn op_header_len(opcode: u32, args_len: usize) -> usize {
    match opcode {
        op::LOOKUP => 0,
        op::WRITE => size_of::<proto::WriteIn>().min(args_len),
        _ => args_len,
    }
}

/// How much room the answer's body may need.
pub(crate) fn room(opcode: u32, op_header: &[u8]) -> usize {
    match opcode {
        op::READ | op::READDIR => proto::ReadIn::read_prefix(op_header).size as usize,
        _ => SMALL,
    }
}

/// The namespace over one handler.
pub(crate) struct Files {
    handler: Arc<dyn ImageHandler>,
    name: Box<[u8]>,
    /// Requests whose handler panicked, answered EIO.
    failures: Mutex<Failures>,
}

fn put<T: Wire>(v: &T, body: &mut impl Body) -> Outcome {
    match v.write_to(body.output()) {
        0 => Outcome::error(libc::EIO),
        n => Outcome::now(n),
    }
}

impl Files {
    /// The image `name` (one path component) served by `handler`.
    pub(crate) fn new(handler: Arc<dyn ImageHandler>, name: &str) -> Files {
        Files {
            handler,
            name: name.as_bytes().into(),
            failures: Mutex::new(Failures::default()),
        }
    }

    /// The requests whose handler panicked so far.
    pub(crate) fn failures(&self) -> Failures {
        self.failures
            .lock()
            .map_or_else(|e| e.into_inner().clone(), |f| f.clone())
    }

    /// [`Self::dispatch`], with a panic of the handler caught: the request
    /// fails with EIO and is counted, and the service thread goes on (a
    /// thread that died would leave its queue's requests unanswered and
    /// the mount hanging).
    pub(crate) fn answer(&self, h: &proto::InHeader, arg: &[u8], body: &mut impl Body) -> Outcome {
        match catch_unwind(AssertUnwindSafe(|| self.dispatch(h, arg, body))) {
            Ok(o) => o,
            Err(payload) => {
                let why = (payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                let mut f = self.failures.lock().unwrap_or_else(|e| e.into_inner());
                f.count += 1;
                f.first
                    .get_or_insert_with(|| format!("opcode {}: {why}", h.opcode));
                Outcome::error(libc::EIO)
            }
        }
    }

    fn attr(&self, node: u64) -> proto::Attr {
        let (mode, size, nlink) = match node {
            FILE_ID => (libc::S_IFREG | 0o600, self.handler.size(), 1),
            _ => (libc::S_IFDIR | 0o755, 0, 2),
        };
        proto::Attr {
            ino: node,
            size,
            blocks: size.div_ceil(512),
            mode,
            nlink,
            blksize: 4096,
            ..Default::default()
        }
    }

    /// Answers one request: `h` its header, `arg` the opcode's own header
    /// (may be longer than the struct), `body` the rest and the room for
    /// the answer.
    pub(crate) fn dispatch(
        &self,
        h: &proto::InHeader,
        arg: &[u8],
        body: &mut impl Body,
    ) -> Outcome {
        let node = h.nodeid;
        let known = node == proto::ROOT_ID || node == FILE_ID;
        match h.opcode {
            op::FORGET | op::BATCH_FORGET | op::INTERRUPT => Outcome::Silent,
            op::LOOKUP => self.lookup(node, body),
            _ if !known => Outcome::error(libc::ENOENT),
            op::GETATTR => put(
                &proto::AttrOut {
                    attr_valid: TTL_SECS,
                    attr: self.attr(node),
                    ..Default::default()
                },
                body,
            ),
            op::OPEN if node == FILE_ID => put(
                &proto::OpenOut {
                    fh: self.handler.open(),
                    open_flags: proto::FOPEN_DIRECT_IO,
                    backing_id: 0,
                },
                body,
            ),
            op::OPEN => Outcome::error(libc::EISDIR),
            op::OPENDIR if node == proto::ROOT_ID => put(&proto::OpenOut::default(), body),
            op::OPENDIR => Outcome::error(libc::ENOTDIR),
            op::READDIR if node == proto::ROOT_ID => self.readdir(arg, body),
            op::RELEASE => {
                self.handler.release(proto::ReleaseIn::read_prefix(arg).fh);
                Outcome::now(0)
            }
            op::RELEASEDIR | op::FLUSH | op::FSYNCDIR | op::ACCESS | op::DESTROY => Outcome::now(0),
            op::STATFS => {
                let size = self.handler.size();
                put(
                    &proto::StatfsOut {
                        blocks: size / 4096,
                        files: 2,
                        bsize: 4096,
                        namelen: 255,
                        frsize: 4096,
                        ..Default::default()
                    },
                    body,
                )
            }
            op::READ if node == FILE_ID => {
                let Some(r) = proto::ReadIn::read(arg) else {
                    return Outcome::error(libc::EINVAL);
                };
                let out = body.output();
                let size = (r.size as usize).min(out.len());
                let a = self.handler.read(r.fh, r.offset, &mut out[..size]);
                Outcome::from(a, |n| (n as usize).min(size))
            }
            op::WRITE if node == FILE_ID => {
                let Some(w) = proto::WriteIn::read(arg) else {
                    return Outcome::error(libc::EINVAL);
                };
                let Some(data) = body.input().get(..w.size as usize) else {
                    return Outcome::error(libc::EINVAL);
                };
                let a = self.handler.write(w.fh, w.offset, data);
                let done = Outcome::from(a, |n| n as usize);
                match done {
                    Outcome::Reply {
                        errno: 0,
                        len,
                        delay_ns,
                    } => {
                        let out = proto::WriteOut {
                            size: len as u32,
                            padding: 0,
                        };
                        Outcome::Reply {
                            errno: 0,
                            len: out.write_to(body.output()),
                            delay_ns,
                        }
                    }
                    other => other,
                }
            }
            op::FALLOCATE if node == FILE_ID => {
                let Some(f) = proto::FallocateIn::read(arg) else {
                    return Outcome::error(libc::EINVAL);
                };
                let a = self.handler.fallocate(f.fh, f.offset, f.length, f.mode);
                Outcome::from(a, |_| 0)
            }
            op::FSYNC if node == FILE_ID => {
                let fh = proto::FsyncIn::read_prefix(arg).fh;
                Outcome::from(self.handler.fsync(fh), |_| 0)
            }
            op::READ | op::WRITE | op::FALLOCATE | op::FSYNC => Outcome::error(libc::EISDIR),
            op::READDIR => Outcome::error(libc::ENOTDIR),
            _ => Outcome::error(libc::ENOSYS),
        }
    }

    fn lookup(&self, parent: u64, body: &mut impl Body) -> Outcome {
        let input = body.input();
        let name = input.split(|b| *b == 0).next().unwrap_or(input);
        if parent != proto::ROOT_ID || name != &*self.name {
            return Outcome::error(libc::ENOENT);
        }
        put(
            &proto::EntryOut {
                nodeid: FILE_ID,
                generation: 0,
                entry_valid: TTL_SECS,
                attr_valid: TTL_SECS,
                entry_valid_nsec: 0,
                attr_valid_nsec: 0,
                attr: self.attr(FILE_ID),
            },
            body,
        )
    }

    /// ".", ".." and the image, from the entry at the request's offset on,
    /// as many as fit.
    fn readdir(&self, arg: &[u8], body: &mut impl Body) -> Outcome {
        let r = proto::ReadIn::read_prefix(arg);
        let entries: [(u64, &[u8], u32); 3] = [
            (proto::ROOT_ID, b".", libc::DT_DIR as u32),
            (proto::ROOT_ID, b"..", libc::DT_DIR as u32),
            (FILE_ID, &self.name, libc::DT_REG as u32),
        ];
        let out = body.output();
        let limit = (r.size as usize).min(out.len());
        let mut len = 0;
        for (i, (ino, name, typ)) in entries.iter().enumerate().skip(r.offset as usize) {
            let head = size_of::<proto::Dirent>();
            let size = (head + name.len()).next_multiple_of(8);
            if len + size > limit {
                break;
            }
            let d = proto::Dirent {
                ino: *ino,
                off: i as u64 + 1,
                namelen: name.len() as u32,
                typ: *typ,
            };
            let rec = &mut out[len..len + size];
            d.write_to(rec);
            rec[head..head + name.len()].copy_from_slice(name);
            rec[head + name.len()..].fill(0);
            len += size;
        }
        Outcome::now(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Mem;
    impl ImageHandler for Mem {
        fn size(&self) -> u64 {
            1 << 20
        }
        fn open(&self) -> u64 {
            7
        }
        fn read(&self, _fh: u64, _off: u64, buf: &mut [u8]) -> Answer {
            buf.fill(0xab);
            Answer::ok(buf.len() as u32)
        }
        fn write(&self, _fh: u64, _off: u64, data: &[u8]) -> Answer {
            Answer::ok(data.len() as u32).after(5)
        }
        fn fallocate(&self, _fh: u64, _o: u64, _l: u64, _m: u32) -> Answer {
            Answer::err(libc::EOPNOTSUPP)
        }
        fn fsync(&self, _fh: u64) -> Answer {
            Answer::ok(0)
        }
    }

    struct Split {
        input: Vec<u8>,
        output: Vec<u8>,
    }
    impl Body for Split {
        fn input(&self) -> &[u8] {
            &self.input
        }
        fn output(&mut self) -> &mut [u8] {
            &mut self.output
        }
    }

    fn req(opcode: u32, nodeid: u64) -> proto::InHeader {
        proto::InHeader {
            opcode,
            nodeid,
            unique: 2,
            ..Default::default()
        }
    }

    #[test]
    fn lookup_finds_only_the_image() {
        let f = Files::new(Arc::new(Mem), "disk.img");
        let mut b = Split {
            input: b"disk.img\0".to_vec(),
            output: vec![0; SMALL],
        };
        let o = f.dispatch(&req(op::LOOKUP, 1), &[], &mut b);
        assert_eq!(o, Outcome::now(128));
        let e = proto::EntryOut::read(&b.output).unwrap();
        assert_eq!((e.nodeid, e.attr.size, e.attr.mode), (2, 1 << 20, 0o100600));
        b.input = b"other\0".to_vec();
        let o = f.dispatch(&req(op::LOOKUP, 1), &[], &mut b);
        assert_eq!(o, Outcome::error(libc::ENOENT));
    }

    #[test]
    fn write_answers_its_size_after_the_delay() {
        let f = Files::new(Arc::new(Mem), "disk.img");
        let w = proto::WriteIn {
            size: 4,
            ..Default::default()
        };
        let mut b = Split {
            input: vec![1, 2, 3, 4],
            output: vec![0; SMALL],
        };
        let o = f.dispatch(&req(op::WRITE, FILE_ID), w.as_bytes(), &mut b);
        assert_eq!(
            o,
            Outcome::Reply {
                errno: 0,
                len: 8,
                delay_ns: 5
            }
        );
        assert_eq!(proto::WriteOut::read(&b.output).unwrap().size, 4);
    }

    #[test]
    fn readdir_lists_three_and_resumes() {
        let f = Files::new(Arc::new(Mem), "disk.img");
        let r = proto::ReadIn {
            size: 4096,
            ..Default::default()
        };
        let mut b = Split {
            input: vec![],
            output: vec![0; 4096],
        };
        let o = f.dispatch(&req(op::READDIR, 1), r.as_bytes(), &mut b);
        assert_eq!(o, Outcome::now(96));
        let r = proto::ReadIn { offset: 3, ..r };
        let o = f.dispatch(&req(op::READDIR, 1), r.as_bytes(), &mut b);
        assert_eq!(o, Outcome::now(0));
    }

    #[test]
    fn unknown_opcodes_are_enosys_and_forgets_silent() {
        let f = Files::new(Arc::new(Mem), "disk.img");
        let mut b = Split {
            input: vec![],
            output: vec![0; SMALL],
        };
        let o = f.dispatch(&req(op::SETATTR, FILE_ID), &[], &mut b);
        assert_eq!(o, Outcome::error(libc::ENOSYS));
        let o = f.dispatch(&req(op::FORGET, FILE_ID), &[0; 8], &mut b);
        assert_eq!(o, Outcome::Silent);
    }
}
