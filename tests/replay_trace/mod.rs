//! Trace files made by hand for the replay tests: events over real files,
//! written with `trace::file::write`, and what the tests check on files.
#![allow(dead_code)]

use crate::common::*;
use iolab::trace::calls;
use iolab::trace::{Event, Meta, Mode, Trace, file};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub const MS: u64 = 1_000_000;

/// An event of call `name` at `t_ns` on `fd` (file `file`).
pub fn ev(t_ns: u64, name: &str, fd: i32, file: Option<u32>) -> Event {
    Event {
        t_ns,
        pid: 100,
        tid: 100,
        call: calls::by_name(name).unwrap().0,
        fd,
        file,
        lat_ns: 2000,
        ..Event::default()
    }
}

pub fn pread(t_ns: u64, fd: i32, file: u32, offset: u64, len: u64) -> Event {
    Event {
        offset: Some(offset),
        len,
        result: len as i64,
        ..ev(t_ns, "pread64", fd, Some(file))
    }
}

pub fn open(t_ns: u64, file: u32, flags: i32, fd: i32) -> Event {
    Event {
        flags: flags as u64,
        result: fd.into(),
        ..ev(t_ns, "openat", -100, Some(file))
    }
}

/// Writes a trace of `events` over `paths` into `dir`; its path.
pub fn trace_file(dir: &Path, paths: &[&Path], events: Vec<Event>) -> PathBuf {
    let mut t = Trace {
        meta: Meta {
            source: "test".into(),
            mode: Mode::Events,
            command: vec!["reader".into()],
            pid: 100,
            ..Meta::default()
        },
        paths: paths.iter().map(|p| s(p).to_string()).collect(),
        events,
        ..Trace::default()
    };
    t.tally_events();
    let out = dir.join("t.trace");
    file::write(&out, &t).unwrap();
    out
}

/// A file of `len` bytes that are not all alike.
pub fn data_file(dir: &Path, name: &str, len: usize) -> PathBuf {
    let p = dir.join(name);
    let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4096) as u8).collect();
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Contents and modification time of `p`.
pub fn fingerprint(p: &Path) -> (u64, i64, i64) {
    let mut h = DefaultHasher::new();
    std::fs::read(p).unwrap().hash(&mut h);
    let m = std::fs::metadata(p).unwrap();
    (h.finish(), m.mtime(), m.mtime_nsec())
}

/// A trace of 1 open, `n` 4 KiB preads at scattered offsets of a 4 MiB
/// file and 1 close.
pub fn random_reads(dir: &Path, n: u64) -> (PathBuf, PathBuf) {
    let f = data_file(dir, "data", 4 << 20);
    let mut evs = vec![open(0, 0, libc::O_RDONLY, 3)];
    for i in 0..n {
        evs.push(pread(
            1000 + i * 10_000,
            3,
            0,
            (i * 397 % 1024) * 4096,
            4096,
        ));
    }
    evs.push(Event {
        ..ev(1000 + n * 10_000, "close", 3, Some(0))
    });
    let t = trace_file(dir, &[&f], evs);
    (f, t)
}

pub fn replay_json(args: &[&str]) -> serde_json::Value {
    stdout_json(bin().arg("replay").args(args).args(["-f", "json"]))
}
