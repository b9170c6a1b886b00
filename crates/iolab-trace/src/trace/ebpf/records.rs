//! What comes through the ring buffer (`struct event`, `struct
//! open_event` of trace.bpf.c), read field by field, and the names of the
//! files events refer to.

use crate::trace::model::Event;
use rustc_hash::FxHashMap as HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Size of `struct event`.
pub const EVENT_SIZE: usize = 80;
/// Where an event's `kind` is: 0 a call, 1 an open with its path, 2 a chunk.
pub const KIND_AT: usize = 74;
/// The `kind` of a chunk of gathered calls.
pub const KIND_CHUNK: u8 = 2;
/// Calls a CPU gathers into one record in event mode (trace.bpf.c `CHUNK`).
pub const CHUNK: usize = 32;
/// The size of such a record (`struct chunk`): a head and `CHUNK` events.
pub const CHUNK_SIZE: usize = EVENT_SIZE * (CHUNK + 1);

/// The records a ring buffer record holds: a chunk (kind 2) its calls, as
/// many as its head's `len` says; any other record itself.
pub fn split(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    let chunk = b.len() >= CHUNK_SIZE && b[KIND_AT] == KIND_CHUNK;
    let n = match chunk {
        true => (u64_at(b, 24) as usize).min(CHUNK),
        false => 1,
    };
    let skip = usize::from(chunk);
    (0..n).map(move |i| match chunk {
        true => &b[(i + skip) * EVENT_SIZE..(i + skip + 1) * EVENT_SIZE],
        false => b,
    })
}
/// Where an open's path starts in `struct open_event` (after its length,
/// how it is written, and padding).
const PATH_AT: usize = EVENT_SIZE + 8;

/// One record of the ring buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The call, times in kernel monotonic nanoseconds.
    pub event: Event,
    /// When it was entered (CLOCK_MONOTONIC ns).
    pub ts: u64,
    /// The file's device (kernel encoding) and inode (0: none).
    pub dev: u32,
    /// Inode number.
    pub ino: u64,
    /// An open's path: the file's as the kernel resolved it (absolute,
    /// or `…/`-prefixed when cut short), else the argument as the program
    /// wrote it.
    pub path: Option<String>,
    /// True when `path` is the kernel's (not the program's argument).
    pub resolved: bool,
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_ne_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_ne_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}

/// Reads one record (`None`: too short, not one of ours).
pub fn parse(b: &[u8]) -> Option<Record> {
    if b.len() < EVENT_SIZE {
        return None;
    }
    let kind = b[KIND_AT];
    let (path, resolved) = match kind == 1 && b.len() > PATH_AT {
        true => open_path(b),
        false => (None, false),
    };
    let has_off = b[75] != 0;
    Some(Record {
        ts: u64_at(b, 0),
        dev: u32_at(b, 56),
        ino: u64_at(b, 40),
        path,
        resolved,
        event: Event {
            t_ns: 0,
            pid: u32_at(b, 60),
            tid: u32_at(b, 64),
            call: u16::from_ne_bytes([b[72], b[73]]),
            fd: u32_at(b, 68) as i32,
            file: None,
            offset: has_off.then(|| u64_at(b, 16)),
            len: u64_at(b, 24),
            flags: u64_at(b, 32),
            result: u64_at(b, 48) as i64,
            lat_ns: u64_at(b, 8),
        },
    })
}

/// The path of an `open_event` (trace.bpf.c `file_path`): the names from
/// the file up to the root, each NUL-ended, turned around (`how` 1; 2: cut
/// short, shown under `…/`); or the program's argument (`how` 0).
fn open_path(b: &[u8]) -> (Option<String>, bool) {
    let len = usize::from(u16::from_ne_bytes([b[EVENT_SIZE], b[EVENT_SIZE + 1]]));
    let how = b[EVENT_SIZE + 2];
    let p = &b[PATH_AT..(PATH_AT + len).min(b.len())];
    if how == 0 {
        let end = p.iter().position(|&c| c == 0).unwrap_or(p.len());
        return (Some(String::from_utf8_lossy(&p[..end]).into_owned()), false);
    }
    let names: Vec<_> = (p.split(|&c| c == 0))
        .filter(|n| !n.is_empty())
        .map(String::from_utf8_lossy)
        .collect();
    let mut path = String::from(if how == 1 { "" } else { "…" });
    for n in names.iter().rev() {
        path.push('/');
        path.push_str(n);
    }
    if path.is_empty() {
        path.push('/');
    }
    (Some(path), true)
}

/// The kernel's device number as `stat` gives it.
pub fn user_dev(kdev: u32) -> u64 {
    libc::makedev(kdev >> 20, kdev & 0xfffff)
}

/// Names files by (device, inode): from open paths, from the processes'
/// descriptors, else `dev:ino`.
#[derive(Debug, Default)]
pub struct Names {
    index: HashMap<(u32, u64), u32>,
    /// The paths, in the order they were first needed.
    pub paths: Vec<String>,
    known: HashMap<(u32, u64), String>,
    /// Where relative paths start when the process that opened them has
    /// ended before its open was read: the traced process's working
    /// directory when tracing started (iolab's own for a command it ran).
    pub cwd: PathBuf,
}

impl Names {
    /// No file named yet; relative paths of ended processes start at `cwd`.
    pub fn starting_in(cwd: PathBuf) -> Names {
        Names {
            cwd,
            ..Names::default()
        }
    }

    /// Learns every file process `pid` has open (`/proc/PID/fd`), and its
    /// threads' and children's (for `-p`, where fds predate the trace).
    pub fn scan(&mut self, pid: u32) {
        let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return;
        };
        for e in dir.flatten() {
            self.learn_fd(pid, e.file_name().to_string_lossy().parse().unwrap_or(-1));
        }
    }

    /// Learns the file behind `fd` of `pid`, if it is still open.
    fn learn_fd(&mut self, pid: u32, fd: i32) -> Option<String> {
        let link = PathBuf::from(format!("/proc/{pid}/fd/{fd}"));
        let target = std::fs::read_link(&link).ok()?;
        let md = std::fs::metadata(&link).ok()?;
        let name = target.to_string_lossy().into_owned();
        if !name.starts_with('/') {
            return None; // pipe:[..], socket:[..], anon_inode:...
        }
        // An unlinked file: its path as it was (the suffix is /proc's, and
        // no iolog could name a file with a space in it).
        let name = match name.strip_suffix(" (deleted)") {
            Some(p) => p.to_string(),
            None => name,
        };
        let key = (kernel_dev(md.dev()), md.ino());
        self.known.entry(key).or_insert(name.clone());
        Some(name)
    }

    /// Learns the path an open returned `fd` for: the kernel's; without
    /// it, the descriptor's own link when it is still open, else the path
    /// given made absolute against the process's working directory.
    pub fn learn_open(&mut self, r: &Record) {
        let key = (r.dev, r.ino);
        if r.ino == 0 || self.known.contains_key(&key) {
            return;
        }
        if let (true, Some(p)) = (r.resolved, &r.path) {
            self.known.insert(key, p.clone());
            return;
        }
        if let Some(p) = self.learn_fd(r.event.pid, r.event.result as i32)
            && self.known.get(&key) == Some(&p)
        {
            return;
        }
        if let Some(p) = &r.path {
            let abs = if p.starts_with('/') {
                PathBuf::from(p)
            } else {
                let cwd = std::fs::read_link(format!("/proc/{}/cwd", r.event.pid))
                    .unwrap_or_else(|_| self.cwd.clone());
                cwd.join(p)
            };
            self.known.insert(key, clean(&abs));
        }
    }

    /// The index of the file (device, inode) in [`Names::paths`], naming it
    /// now if it is new (`pid`'s `fd` is tried when no open named it).
    pub fn index(&mut self, dev: u32, ino: u64, pid: u32, fd: i32) -> Option<u32> {
        if ino == 0 {
            return None;
        }
        if let Some(&i) = self.index.get(&(dev, ino)) {
            return Some(i);
        }
        if !self.known.contains_key(&(dev, ino)) && fd >= 0 {
            self.learn_fd(pid, fd);
        }
        let name = self.name(dev, ino);
        let i = self.paths.len() as u32;
        self.paths.push(name);
        self.index.insert((dev, ino), i);
        Some(i)
    }

    /// The path of (device, inode); a pipe or socket as /proc names it
    /// (`pipe:[N]`, `socket:[N]`); else `dev:ino` (major:minor:inode).
    pub fn name(&self, dev: u32, ino: u64) -> String {
        if let Some(p) = self.known.get(&(dev, ino)) {
            return p.clone();
        }
        let (pipes, sockets) = *PSEUDO_DEVS;
        match dev {
            d if Some(d) == pipes => format!("pipe:[{ino}]"),
            d if Some(d) == sockets => format!("socket:[{ino}]"),
            _ => format!("{}:{}:{ino}", dev >> 20, dev & 0xfffff),
        }
    }
}

/// The devices of pipefs and sockfs (kernel encoding), from a pipe and a
/// socket of iolab's own: their files have no path.
static PSEUDO_DEVS: std::sync::LazyLock<(Option<u32>, Option<u32>)> =
    std::sync::LazyLock::new(|| {
        let dev = |f: &std::fs::File| f.metadata().ok().map(|m| kernel_dev(m.dev()));
        let pipe = std::io::pipe().ok().and_then(|(r, _w)| {
            let f: std::fs::File = std::os::fd::OwnedFd::from(r).into();
            dev(&f)
        });
        let socket = std::os::unix::net::UnixDatagram::unbound()
            .ok()
            .and_then(|s| {
                let f: std::fs::File = std::os::fd::OwnedFd::from(s).into();
                dev(&f)
            });
        (pipe, socket)
    });

/// `stat`'s device number in the kernel's encoding.
fn kernel_dev(d: u64) -> u32 {
    (libc::major(d) << 20) | (libc::minor(d) & 0xfffff)
}

/// `a/./b/../c` as `a/c` (no symlinks resolved: the path as the program
/// named it).
fn clean(p: &Path) -> String {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_field_by_field() {
        let mut b = vec![0u8; PATH_AT + 8];
        b[0..8].copy_from_slice(&5u64.to_ne_bytes());
        b[8..16].copy_from_slice(&700u64.to_ne_bytes());
        b[16..24].copy_from_slice(&4096u64.to_ne_bytes());
        b[48..56].copy_from_slice(&(-2i64).to_ne_bytes());
        b[60..64].copy_from_slice(&42u32.to_ne_bytes());
        b[68..72].copy_from_slice(&(-1i32).to_ne_bytes());
        b[72..74].copy_from_slice(&2u16.to_ne_bytes());
        b[74] = 1;
        b[75] = 1;
        b[EVENT_SIZE..EVENT_SIZE + 2].copy_from_slice(&4u16.to_ne_bytes());
        b[PATH_AT..PATH_AT + 3].copy_from_slice(b"a/b");
        let r = parse(&b).unwrap();
        assert_eq!(r.ts, 5);
        assert_eq!(r.event.lat_ns, 700);
        assert_eq!(r.event.offset, Some(4096));
        assert_eq!(r.event.result, -2);
        assert_eq!(r.event.pid, 42);
        assert_eq!(r.event.fd, -1);
        assert_eq!(r.event.name(), "pread64");
        assert_eq!(r.path.as_deref(), Some("a/b"));
        assert!(!r.resolved);
        // The kernel's names, leaf first: /data/real/c.txt.
        let names = b"c.txt\0real\0data\0";
        b[EVENT_SIZE..EVENT_SIZE + 2].copy_from_slice(&(names.len() as u16).to_ne_bytes());
        b[EVENT_SIZE + 2] = 1;
        b.resize(PATH_AT + names.len(), 0);
        b[PATH_AT..].copy_from_slice(names);
        assert_eq!(parse(&b).unwrap().path.as_deref(), Some("/data/real/c.txt"));
        b[EVENT_SIZE + 2] = 2;
        assert_eq!(
            parse(&b).unwrap().path.as_deref(),
            Some("…/data/real/c.txt")
        );
        b[EVENT_SIZE..EVENT_SIZE + 2].copy_from_slice(&0u16.to_ne_bytes());
        b[EVENT_SIZE + 2] = 1;
        assert_eq!(parse(&b).unwrap().path.as_deref(), Some("/"));
        assert_eq!(clean(Path::new("/x/./y/../z")), "/x/z");
        assert_eq!(kernel_dev(user_dev(0x0080_0003)), 0x0080_0003);
    }
}
