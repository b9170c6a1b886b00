//! One recorded call issued again on the scratch tree: the descriptors of
//! each traced process mapped to the replay's own, reads and writes at the
//! recorded offsets and lengths, and the calls that cannot be replayed
//! named with why.

use super::calls::{self, Class};
use super::model::Event;
use super::replay_scratch::{Place, Scratch};
use super::replay_sys as sys;
use std::collections::{BTreeSet, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Reads and writes bigger than this are issued at this size.
const MAX_IO: usize = 64 << 20;
/// Buffers are aligned for `O_DIRECT`.
const ALIGN: usize = 4096;

/// What became of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Issued: what it returned (negative: -errno) and how long it took.
    Done {
        /// The result.
        result: i64,
        /// Nanoseconds.
        lat_ns: u64,
    },
    /// Not replayed, and why.
    Skip(&'static str),
}

/// Why a call is never replayed, known from its name alone.
pub fn never(e: &Event) -> Option<&'static str> {
    let name = e.name();
    match name {
        "mmap" | "munmap" | "madvise" => Some("memory mappings are not replayed"),
        "io_uring_enter" | calls::URING_REQ => Some("io_uring is not replayed"),
        "rename" | "renameat" | "renameat2" => Some("the new name is not in the trace"),
        "?" => Some("unknown call"),
        _ => None,
    }
}

/// How a descriptor was opened: enough to open its file again the same
/// way, with the advice it was given since.
#[derive(Debug, Clone, Copy)]
struct Opened {
    path: Option<u32>,
    flags: libc::c_int,
    /// The last whole-file `fadvise64` advice (random, sequential, normal).
    advice: Option<u64>,
}

#[derive(Clone)]
struct Slot {
    file: Arc<File>,
    how: Opened,
}

/// The descriptors of the replay, by (pid, original fd).
#[derive(Default)]
struct Table {
    open: HashMap<(u32, i32), Slot>,
    /// Descriptors closed, as they were opened: one used again with no
    /// open between was a duplicate the trace did not see (dup, fcntl).
    closed: HashMap<(u32, i32), Opened>,
    /// Descriptors of files not replayed (/proc, pipes), and why.
    not: HashMap<(u32, i32), &'static str>,
}

/// The open descriptors of every traced process: (pid, original fd) to
/// the replay's file. Threads of a process share them.
#[derive(Default)]
pub struct Fds {
    map: Mutex<Table>,
    /// Things worth telling (O_DIRECT refused by the scratch file system).
    notes: Mutex<BTreeSet<String>>,
}

impl Fds {
    /// Closes every descriptor; the notes.
    pub fn into_notes(self) -> Vec<String> {
        let notes = self.notes.into_inner().unwrap_or_else(|p| p.into_inner());
        notes.into_iter().collect()
    }
}

/// Issues one thread's calls.
pub struct Worker<'a> {
    fds: &'a Fds,
    scratch: &'a Scratch,
    buf: Vec<u8>,
}

fn result(r: std::io::Result<i64>) -> i64 {
    match r {
        Ok(n) => n,
        Err(e) => -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
    }
}

fn timed(f: impl FnOnce() -> std::io::Result<i64>) -> Outcome {
    let t = Instant::now();
    let r = f();
    Outcome::Done {
        lat_ns: t.elapsed().as_nanos() as u64,
        result: result(r),
    }
}

fn is_vector(name: &str) -> bool {
    name.contains("readv") || name.contains("writev")
}

impl<'a> Worker<'a> {
    /// A worker on the shared descriptors and scratch tree.
    pub fn new(fds: &'a Fds, scratch: &'a Scratch) -> Worker<'a> {
        Worker {
            fds,
            scratch,
            buf: Vec::new(),
        }
    }

    /// Issues `e` again (see the module's doc). Right before the call
    /// itself (its descriptor found), `next` is stored in `at`: the
    /// recorded time of this thread's next call, which other threads wait
    /// for.
    pub fn issue(&mut self, e: &Event, at: &AtomicU64, next: u64) -> Outcome {
        let o = self.issue_one(e, &|| at.store(next, Ordering::Release));
        at.store(next, Ordering::Release);
        o
    }

    fn issue_one(&mut self, e: &Event, go: &dyn Fn()) -> Outcome {
        if let Some(why) = never(e) {
            return Outcome::Skip(why);
        }
        match e.name() {
            "open" | "openat" | "openat2" | "creat" => return self.open(e, go),
            "close" => return self.close(e, go),
            "newfstatat" | "statx" if e.flags & libc::AT_EMPTY_PATH as u64 != 0 => {}
            "stat" | "lstat" | "newfstatat" | "statx" | "mkdir" | "mkdirat" | "rmdir"
            | "unlink" | "unlinkat" => return self.by_path(e, go),
            _ => {}
        }
        let file = match self.file(e) {
            Ok(f) => f,
            Err(why) => return Outcome::Skip(why),
        };
        go();
        let o = self.by_fd(e, &file);
        if e.name() == "fadvise64" && matches!(o, Outcome::Done { result: 0, .. }) {
            self.remember_advice(e);
        }
        o
    }

    fn by_fd(&mut self, e: &Event, f: &File) -> Outcome {
        let name = e.name();
        let len = if is_vector(name) {
            e.result.max(0) as usize
        } else {
            e.len as usize
        }
        .min(MAX_IO);
        match (e.class(), name) {
            (Class::Write, "fallocate") => {
                timed(|| sys::fallocate(f, e.flags, e.offset.unwrap_or(0), e.len))
            }
            (Class::Read | Class::Write, _) => {
                let buf = aligned(&mut self.buf, len);
                let write = e.class() == Class::Write;
                timed(|| transfer(f, buf, e.offset, write).map(|n| n as i64))
            }
            (_, "fsync") => timed(|| f.sync_all().map(|()| 0)),
            (_, "fdatasync") => timed(|| f.sync_data().map(|()| 0)),
            (_, "sync_file_range") => {
                timed(|| sys::sync_file_range(f, e.offset.unwrap_or(0), e.len, e.flags))
            }
            (_, "fadvise64") => timed(|| sys::fadvise(f, e.offset.unwrap_or(0), e.len, e.flags)),
            (_, "readahead") => timed(|| sys::readahead(f, e.offset.unwrap_or(0), e.len)),
            (_, "lseek") => timed(|| sys::lseek(f, e.offset.unwrap_or(0), e.flags)),
            (_, "ftruncate") => timed(|| f.set_len(e.len).map(|()| 0)),
            (_, "getdents64") => {
                let buf = aligned(&mut self.buf, len.min(1 << 20));
                timed(|| sys::getdents64(f, buf))
            }
            (_, "fstat" | "newfstatat" | "statx") => timed(|| f.metadata().map(|_| 0)),
            _ => Outcome::Skip("not replayed on a descriptor"),
        }
    }

    /// The call's path in the scratch tree, or why it has none.
    fn path(&self, e: &Event) -> Result<&'a Path, &'static str> {
        if e.file.is_none() && e.result < 0 {
            return Err("failed in the trace, which holds no path for it");
        }
        self.place_path(e.file)
    }

    /// Where path number `file` of the trace is in the scratch tree.
    fn place_path(&self, file: Option<u32>) -> Result<&'a Path, &'static str> {
        match file.map(|i| self.scratch.place(i)) {
            Some(Place::At(p)) => Ok(p),
            Some(Place::Not(why)) => Err(why),
            None => Err("path not in the trace"),
        }
    }

    fn by_path(&mut self, e: &Event, go: &dyn Fn()) -> Outcome {
        let p = match self.path(e) {
            Ok(p) => p,
            Err(why) => return Outcome::Skip(why),
        };
        go();
        let nofollow = e.name() == "lstat"
            || (e.name() == "newfstatat" && e.flags & libc::AT_SYMLINK_NOFOLLOW as u64 != 0);
        match e.name() {
            "mkdir" | "mkdirat" => {
                let o = timed(|| std::fs::create_dir(p).map(|()| 0));
                if let Ok(f) = File::open(p) {
                    self.scratch.mark_new(&f);
                }
                o
            }
            "rmdir" => timed(|| std::fs::remove_dir(p).map(|()| 0)),
            "unlinkat" if e.flags & libc::AT_REMOVEDIR as u64 != 0 => {
                timed(|| std::fs::remove_dir(p).map(|()| 0))
            }
            "unlink" | "unlinkat" => timed(|| std::fs::remove_file(p).map(|()| 0)),
            _ if nofollow => timed(|| std::fs::symlink_metadata(p).map(|_| 0)),
            _ => timed(|| std::fs::metadata(p).map(|_| 0)),
        }
    }

    fn open(&mut self, e: &Event, go: &dyn Fn()) -> Outcome {
        let p = match self.path(e) {
            Ok(p) => p,
            Err(why) => {
                if e.result >= 0 && e.file.is_some() {
                    let mut t = self.fds.map.lock().unwrap_or_else(|p| p.into_inner());
                    t.not.insert((e.pid, e.result as i32), why);
                }
                return Outcome::Skip(why);
            }
        };
        go();
        let mut flags = match e.name() {
            "creat" => libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            _ => e.flags as libc::c_int,
        };
        if e.result >= 0 {
            // It opened in the trace; the scratch tree may hold a copy.
            flags &= !libc::O_EXCL;
        }
        let t = Instant::now();
        let mut file = open(p, flags);
        let mut lat = t.elapsed();
        if flags & libc::O_DIRECT != 0
            && matches!(&file, Err(err) if err.raw_os_error() == Some(libc::EINVAL))
        {
            flags &= !libc::O_DIRECT;
            self.note(format!(
                "O_DIRECT refused in {}: files opened without it",
                self.scratch.root().display()
            ));
            let t = Instant::now();
            file = open(p, flags);
            lat = t.elapsed();
        }
        let lat_ns = lat.as_nanos() as u64;
        let file = match file {
            Ok(f) => f,
            Err(err) => {
                return Outcome::Done {
                    result: result(Err(err)),
                    lat_ns,
                };
            }
        };
        let fd = i64::from(file.as_raw_fd());
        if flags & libc::O_CREAT != 0 {
            self.scratch.mark_new(&file);
        }
        if e.result >= 0 {
            let key = (e.pid, e.result as i32);
            let mut t = self.fds.map.lock().unwrap_or_else(|p| p.into_inner());
            t.closed.remove(&key);
            t.not.remove(&key);
            let how = Opened {
                path: e.file,
                flags,
                advice: None,
            };
            let file = Arc::new(file);
            t.open.insert(key, Slot { file, how });
        }
        Outcome::Done { result: fd, lat_ns }
    }

    fn close(&mut self, e: &Event, go: &dyn Fn()) -> Outcome {
        if let Some(Place::Not(why)) = e.file.map(|i| self.scratch.place(i)) {
            return Outcome::Skip(why);
        }
        go();
        let slot = {
            let mut t = self.fds.map.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(why) = t.not.remove(&(e.pid, e.fd)) {
                return Outcome::Skip(why);
            }
            let slot = t.open.remove(&(e.pid, e.fd));
            if let Some(s) = &slot {
                t.closed.insert((e.pid, e.fd), s.how);
            }
            slot
        };
        match slot {
            None => Outcome::Skip("descriptor not open in the replay"),
            Some(s) => timed(|| {
                drop(s);
                Ok(0)
            }),
        }
    }

    /// The replay's file for the call's descriptor: the one its open
    /// mapped, else the call's own file opened now (a descriptor opened
    /// before the trace began, or in another process).
    fn file(&mut self, e: &Event) -> Result<Arc<File>, &'static str> {
        if let Some(Place::Not(why)) = e.file.map(|i| self.scratch.place(i)) {
            return Err(why);
        }
        let key = (e.pid, e.fd);
        let mut t = self.fds.map.lock().unwrap_or_else(|p| p.into_inner());
        if e.file.is_none()
            && let Some(why) = t.not.get(&key)
        {
            return Err(why);
        }
        if let Some(s) = t.open.get(&key)
            && (e.file.is_none() || s.how.path == e.file)
        {
            return Ok(s.file.clone());
        }
        let how = match t.closed.get(&key) {
            Some(h) if e.file.is_none() || h.path == e.file => *h,
            _ => Opened {
                path: e.file,
                flags: libc::O_RDWR,
                advice: None,
            },
        };
        let p = self
            .place_path(how.path)
            .map_err(|_| "descriptor not opened in the trace and its file unknown")?;
        let flags = how.flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC);
        let file = open(p, flags)
            .or_else(|_| open(p, libc::O_RDONLY))
            .map_err(|_| "its file cannot be opened in the scratch tree")?;
        if let Some(a) = how.advice {
            let _ = sys::fadvise(&file, 0, 0, a);
        }
        let file = Arc::new(file);
        let slot = Slot {
            file: file.clone(),
            how,
        };
        t.open.insert(key, slot);
        Ok(file)
    }

    /// Keeps whole-file advice on the descriptor's record, for a
    /// duplicate of it opened later.
    fn remember_advice(&self, e: &Event) {
        if e.offset.unwrap_or(0) != 0 || e.len != 0 || e.flags > 2 {
            return;
        }
        let mut t = self.fds.map.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = t.open.get_mut(&(e.pid, e.fd)) {
            s.how.advice = Some(e.flags);
        }
    }

    fn note(&self, s: String) {
        self.fds
            .notes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(s);
    }
}

/// Opens `p` with open(2) flags `flags` (the access mode and the rest).
fn open(p: &Path, flags: libc::c_int) -> std::io::Result<File> {
    let acc = flags & libc::O_ACCMODE;
    OpenOptions::new()
        .read(acc == libc::O_RDONLY || acc == libc::O_RDWR)
        .write(acc == libc::O_WRONLY || acc == libc::O_RDWR)
        .custom_flags(flags & !libc::O_ACCMODE)
        .mode(0o644)
        .open(p)
}

/// Reads into or writes `buf` at `offset`, or at the file position when
/// the trace has none.
fn transfer(
    mut f: &File,
    buf: &mut [u8],
    offset: Option<u64>,
    write: bool,
) -> std::io::Result<usize> {
    match (offset, write) {
        (Some(off), false) => f.read_at(buf, off),
        (Some(off), true) => f.write_at(buf, off),
        (None, false) => f.read(buf),
        (None, true) => f.write(buf),
    }
}

/// `len` bytes of `buf` starting at an `ALIGN` boundary.
fn aligned(buf: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if buf.len() < len + ALIGN {
        buf.resize(len + ALIGN, 0x5a);
    }
    let off = buf.as_ptr().align_offset(ALIGN);
    &mut buf[off..off + len]
}
