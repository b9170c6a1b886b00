//! Per file access patterns, from a trace's events: per direction the
//! bytes and calls, the size distribution, the share of calls at a random
//! offset, the bytes moved again (re-reads, overwrites) and the think time
//! before each call. [`analyse`] puts them into [`FileStats::pattern`];
//! [`by`] gives them for any grouping of the events (the job export groups
//! them per thread and file).

use super::calls::{self, Class};
use super::hist::LogHist;
use super::model::{Event, FileStats, Trace};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// The block sizes of [`DirPattern::blocks`] are multiples of this.
pub const BLOCK: u64 = 512;

/// `posix_fadvise` advice numbers (Linux).
pub mod advice {
    /// POSIX_FADV_NORMAL.
    pub const NORMAL: u64 = 0;
    /// POSIX_FADV_RANDOM.
    pub const RANDOM: u64 = 1;
    /// POSIX_FADV_SEQUENTIAL.
    pub const SEQUENTIAL: u64 = 2;
    /// POSIX_FADV_WILLNEED.
    pub const WILLNEED: u64 = 3;
    /// POSIX_FADV_DONTNEED.
    pub const DONTNEED: u64 = 4;
    /// POSIX_FADV_NOREUSE.
    pub const NOREUSE: u64 = 5;
}

/// `O_DIRECT` on x86_64.
pub const O_DIRECT: u64 = 0o40000;

/// How a file was read, or written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirPattern {
    /// Calls that returned (not an error), zero-byte ones included.
    pub ops: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Calls that moved nothing (a read at the end of the file).
    pub empty: u64,
    /// Calls that were vector calls (readv, pwritev2, ...).
    pub vector: u64,
    /// Bytes moved by each call that moved any.
    pub sizes: LogHist,
    /// Calls per size rounded to the nearest [`BLOCK`] (at least one
    /// block): the `bssplit` of a job.
    pub blocks: BTreeMap<u64, u64>,
    /// Calls (with a known offset) that began where the same thread's
    /// previous call of this direction on this file ended, or at offset 0
    /// as its first.
    pub sequential: u64,
    /// Calls (with a known offset) that began anywhere else.
    pub random: u64,
    /// Bytes this direction had already moved earlier in the trace, by any
    /// thread: re-reads, overwrites.
    pub repeat_bytes: u64,
    /// Time from the thread's previous call's return to this call's entry,
    /// nanoseconds (calls that had a previous one).
    pub think: LogHist,
    /// The think times added up, nanoseconds.
    pub think_ns: u64,
    /// Latency of each call, nanoseconds.
    pub lat: LogHist,
}

impl DirPattern {
    /// The share (0..=1) of calls with a known offset that went to a
    /// random one (0 when none is known).
    pub fn random_share(&self) -> f64 {
        let n = self.sequential + self.random;
        if n == 0 {
            0.0
        } else {
            self.random as f64 / n as f64
        }
    }
}

/// The access pattern of one file (or of one thread on one file).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pattern {
    /// Reads.
    pub read: DirPattern,
    /// Writes.
    pub write: DirPattern,
    /// The furthest byte reached: the most offset + bytes moved.
    pub extent: u64,
    /// When the first call was entered, nanoseconds since the trace began.
    pub first_ns: u64,
    /// When the last call returned.
    pub end_ns: u64,
    /// Calls to fsync.
    pub fsync: u64,
    /// Calls to fdatasync (and sync_file_range).
    pub fdatasync: u64,
    /// fadvise calls per advice number ([`advice`]).
    pub advice: BTreeMap<u64, u64>,
    /// It was opened with O_DIRECT.
    pub direct: bool,
    /// The threads that used it.
    pub threads: Vec<u32>,
}

impl Pattern {
    /// The pattern of `class` (Read or Write).
    pub fn dir(&self, class: Class) -> &DirPattern {
        if class == Class::Write {
            &self.write
        } else {
            &self.read
        }
    }
}

/// Non-overlapping byte ranges `[start, end)`, by start.
#[derive(Debug, Default)]
struct Ranges(BTreeMap<u64, u64>);

impl Ranges {
    /// Adds `[a, b)`; returns how many of its bytes were already in.
    fn insert(&mut self, mut a: u64, mut b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        let mut seen = 0;
        // A range starting before `a` that reaches into it.
        if let Some((&s, &e)) = self.0.range(..=a).next_back()
            && e >= a
        {
            seen += e.min(b) - a;
            a = s;
            b = b.max(e);
            self.0.remove(&s);
        }
        let inside: Vec<(u64, u64)> = self.0.range(a..=b).map(|(&s, &e)| (s, e)).collect();
        for (s, e) in inside {
            seen += e.min(b) - s;
            b = b.max(e);
            self.0.remove(&s);
        }
        self.0.insert(a, b);
        seen
    }
}

/// Whether `e` moves data (the read and write calls, not fallocate).
fn data_class(e: &Event) -> Option<Class> {
    let c = calls::by_id(e.call)?;
    match c.class {
        Class::Read | Class::Write if c.name != "fallocate" => Some(c.class),
        _ => None,
    }
}

fn is_vector(name: &str) -> bool {
    name.ends_with('v') || name.ends_with("v2")
}

/// The events' indices in entry-time order.
pub(crate) fn in_order(events: &[Event]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..events.len()).collect();
    if !events.is_sorted_by_key(|e| e.t_ns) {
        idx.sort_by_key(|&i| events[i].t_ns);
    }
    idx
}

/// `O_APPEND` on x86_64: writes go to the end, wherever the position is.
const O_APPEND: u64 = 0o2000;

/// Each event's offset (by index): the one it has, or for a call at the
/// file position without one (read, write, readv, writev; strace gives
/// none) the position followed from the file's open (0), lseek results
/// and the bytes moved since, per process and descriptor. Unknown for a
/// descriptor opened before the trace began or with O_APPEND.
pub fn offsets(events: &[Event], order: &[usize]) -> Vec<Option<u64>> {
    let mut out = vec![None; events.len()];
    let mut pos: HashMap<(u32, i32), Option<u64>> = HashMap::new();
    for &i in order {
        let e = &events[i];
        let Some(c) = calls::by_id(e.call) else {
            continue;
        };
        out[i] = e.offset;
        match (c.class, c.name) {
            (Class::Open, "close") => {
                pos.remove(&(e.pid, e.fd));
            }
            (Class::Open, _) if e.result >= 0 => {
                let at = (e.flags & O_APPEND == 0).then_some(0);
                pos.insert((e.pid, e.result as i32), at);
            }
            (Class::Other, "lseek") if e.result >= 0 => {
                pos.insert((e.pid, e.fd), Some(e.result as u64));
            }
            (Class::Read | Class::Write, _) if c.offset.is_none() && e.result >= 0 => {
                let p = pos.entry((e.pid, e.fd)).or_insert(None);
                if out[i].is_none() {
                    out[i] = *p;
                }
                *p = out[i].map(|o| o + e.result as u64);
            }
            _ => {}
        }
    }
    out
}

/// The patterns of the events grouped by `key` (events it gives `None`
/// are left out); only events with a known file count. Think times are
/// per thread over all its calls; sequential runs per thread, file and
/// direction; repeated bytes per file and direction; offsets as
/// [`offsets`] gives them.
pub fn by<K: Ord + Clone>(t: &Trace, key: impl Fn(&Event) -> Option<K>) -> BTreeMap<K, Pattern> {
    let mut out: BTreeMap<K, Pattern> = BTreeMap::new();
    let mut prev_end: HashMap<u32, u64> = HashMap::new();
    let mut last: HashMap<(u32, u32, bool), u64> = HashMap::new();
    let mut moved: HashMap<(u32, bool), Ranges> = HashMap::new();
    let order = in_order(&t.events);
    let offsets = offsets(&t.events, &order);
    for i in order {
        let e = &t.events[i];
        let think = prev_end.insert(e.tid, e.t_ns + e.lat_ns);
        let (Some(file), Some(k)) = (e.file, key(e)) else {
            continue;
        };
        let p = out.entry(k).or_insert_with(|| Pattern {
            first_ns: e.t_ns,
            ..Pattern::default()
        });
        p.end_ns = p.end_ns.max(e.t_ns + e.lat_ns);
        if let Err(at) = p.threads.binary_search(&e.tid) {
            p.threads.insert(at, e.tid);
        }
        let name = e.name();
        match (e.class(), name) {
            (Class::Sync, "fsync") => p.fsync += 1,
            (Class::Sync, _) => p.fdatasync += 1,
            (Class::Advice, "fadvise64") => *p.advice.entry(e.flags).or_default() += 1,
            (Class::Open, n) if n != "close" => p.direct |= e.flags & O_DIRECT != 0,
            _ => {}
        }
        let Some(class) = data_class(e) else {
            continue;
        };
        if e.result < 0 {
            continue;
        }
        let write = class == Class::Write;
        let d = if write { &mut p.write } else { &mut p.read };
        let n = e.result as u64;
        d.ops += 1;
        d.bytes += n;
        d.lat.add(e.lat_ns, 1);
        if is_vector(name) {
            d.vector += 1;
        }
        if let Some(prev) = think {
            let gap = e.t_ns.saturating_sub(prev);
            d.think.add(gap, 1);
            d.think_ns += gap;
        }
        if n == 0 {
            d.empty += 1;
            continue;
        }
        d.sizes.add(n, 1);
        let block = ((n + BLOCK / 2) / BLOCK).max(1) * BLOCK;
        *d.blocks.entry(block).or_default() += 1;
        let Some(off) = offsets[i] else {
            continue;
        };
        p.extent = p.extent.max(off + n);
        let before = last.insert((e.tid, file, write), off + n);
        if before.map_or(off == 0, |end| end == off) {
            d.sequential += 1;
        } else {
            d.random += 1;
        }
        d.repeat_bytes += moved.entry((file, write)).or_default().insert(off, off + n);
    }
    out
}

/// Fills [`FileStats::pattern`] of every file the events used (adding
/// files the figures lack). Without events it changes nothing; run again,
/// it gives the same result.
pub fn analyse(t: &mut Trace) {
    if t.events.is_empty() {
        return;
    }
    let found = by(t, |e| e.file);
    for (f, p) in found {
        let Some(path) = t.paths.get(f as usize) else {
            continue;
        };
        match t.files.iter_mut().find(|fs| &fs.path == path) {
            Some(fs) => fs.pattern = Some(p),
            None => t.files.push(FileStats {
                path: path.clone(),
                calls: BTreeMap::new(),
                pattern: Some(p),
            }),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An event of call `name` by `tid` on file 0.
    pub(crate) fn ev(t_us: u64, tid: u32, name: &str, off: u64, n: i64) -> Event {
        Event {
            t_ns: t_us * 1000,
            pid: 1,
            tid,
            call: calls::by_name(name).unwrap().0,
            fd: 3,
            file: Some(0),
            offset: Some(off),
            len: n.max(0) as u64,
            flags: 0,
            result: n,
            lat_ns: 1000,
        }
    }

    fn trace(events: Vec<Event>) -> Trace {
        Trace {
            paths: vec!["/d/f".into()],
            events,
            ..Trace::default()
        }
    }

    #[test]
    fn ranges_count_bytes_seen_before() {
        let mut r = Ranges::default();
        assert_eq!(r.insert(0, 10), 0);
        assert_eq!(r.insert(20, 30), 0);
        assert_eq!(r.insert(5, 25), 10);
        assert_eq!(r.0.len(), 1);
        assert_eq!(r.insert(0, 40), 30);
        assert_eq!(r.insert(40, 41), 0);
        assert_eq!(r.0, BTreeMap::from([(0, 41)]));
    }

    #[test]
    fn sequential_random_repeats_and_think() {
        let t = trace(vec![
            ev(0, 7, "pread64", 0, 4096),      // first, at 0: sequential
            ev(10, 7, "pread64", 4096, 4096),  // continues: sequential
            ev(30, 7, "pread64", 65536, 8192), // random
            ev(40, 7, "pread64", 0, 4096),     // random, all re-read
            ev(50, 7, "pwrite64", 4096, 100),  // write: first at 4096: random
            ev(60, 7, "pread64", 8192, 0),     // EOF read: empty
            ev(70, 7, "pread64", 0, -5),       // error: left out
            ev(80, 8, "read", 73728, 4096),    // other thread, continues nothing
        ]);
        let p = by(&t, |e| e.file);
        let p = &p[&0];
        assert_eq!(p.read.ops, 6);
        assert_eq!(p.read.empty, 1);
        assert_eq!(p.read.bytes, 4096 * 4 + 8192);
        assert_eq!((p.read.sequential, p.read.random), (2, 3));
        assert_eq!(p.read.repeat_bytes, 4096);
        assert_eq!((p.write.ops, p.write.random), (1, 1));
        assert_eq!(p.write.blocks, BTreeMap::from([(512, 1)]));
        assert_eq!(p.read.blocks, BTreeMap::from([(4096, 4), (8192, 1)]));
        assert_eq!(p.extent, 73728 + 4096);
        assert_eq!(p.threads, vec![7, 8]);
        // Thread 7: gaps 9, 19, 9, 9, 9 us after 1 us calls; thread 8 has none.
        assert_eq!(p.read.think.count() + p.write.think.count(), 5);
        assert_eq!(
            p.read.think_ns + p.write.think_ns,
            (9 + 19 + 9 + 9 + 9) * 1000
        );
        assert!((p.read.random_share() - 0.6).abs() < 1e-9);
    }

    #[test]
    fn positions_are_followed_where_the_trace_has_none() {
        let mut t = trace(vec![
            ev(0, 1, "openat", 0, 3),
            ev(1, 1, "read", 0, 100),
            ev(2, 1, "read", 0, 50),
            ev(3, 1, "pread64", 4096, 10), // the position stays
            ev(4, 1, "read", 0, 0),
            ev(5, 1, "lseek", 0, 8192),
            ev(6, 1, "write", 0, 10),
            ev(7, 1, "close", 0, 0),
            ev(8, 1, "read", 0, 10), // fd 3 closed: unknown
        ]);
        for e in &mut t.events {
            if e.name() != "pread64" {
                e.offset = None;
            }
        }
        let order: Vec<usize> = (0..t.events.len()).collect();
        let o = offsets(&t.events, &order);
        assert_eq!(
            o[1..],
            [
                Some(0),
                Some(100),
                Some(4096),
                Some(150),
                None,
                Some(8192),
                None,
                None
            ]
        );
    }

    #[test]
    fn analyse_fills_files_once_and_again_the_same() {
        let mut t = trace(vec![ev(0, 1, "pread64", 0, 512), ev(5, 1, "fsync", 0, 0)]);
        t.tally_events();
        analyse(&mut t);
        let once = t.clone();
        analyse(&mut t);
        assert_eq!(t, once);
        assert_eq!(t.files.len(), 1);
        let p = t.files[0].pattern.as_ref().unwrap();
        assert_eq!((p.read.ops, p.fsync), (1, 1));
        let mut empty = Trace::default();
        analyse(&mut empty);
        assert!(empty.files.is_empty());
    }
}
