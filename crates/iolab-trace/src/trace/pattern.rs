//! Per file access patterns, from a trace's events: per direction the
//! bytes and calls, the size distribution, the share of calls at a random
//! offset, the bytes moved again (re-reads, overwrites) and the think time
//! before each call. [`analyse`] puts them into [`FileStats::pattern`];
//! [`by`] gives them for any grouping of the events (the job export groups
//! them per thread and file). What the figures are: [`figures`].

use super::calls::{self, Class};
use super::model::{Event, FileStats, Trace};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

pub mod figures;

pub use figures::{BLOCK, DirPattern, O_DIRECT, Pattern, advice};

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

/// File positions followed per process and descriptor, for calls at the
/// file position that carry no offset (read, write, readv, writev; strace
/// gives none): 0 at the open, an lseek's result, plus the bytes moved.
/// Unknown for a descriptor opened before the trace began or with
/// O_APPEND.
#[derive(Debug, Default)]
pub struct Positions(HashMap<(u32, i32), Option<u64>>);

impl Positions {
    /// The offset of `e` (its own, or the followed position), taking the
    /// event into account; events of a process must come in order.
    pub fn offset(&mut self, e: &Event) -> Option<u64> {
        let c = calls::by_id(e.call)?;
        match (c.class, c.name) {
            (Class::Open, "close") => {
                self.0.remove(&(e.pid, e.fd));
            }
            (Class::Open, _) if e.result >= 0 => {
                let at = (e.flags & O_APPEND == 0).then_some(0);
                self.0.insert((e.pid, e.result as i32), at);
            }
            (Class::Other, "lseek") if e.result >= 0 => {
                self.0.insert((e.pid, e.fd), Some(e.result as u64));
            }
            (Class::Read | Class::Write, _) if c.offset.is_none() && e.result >= 0 => {
                let p = self.0.entry((e.pid, e.fd)).or_insert(None);
                let off = e.offset.or(*p);
                *p = off.map(|o| o + e.result as u64);
                return off;
            }
            _ => {}
        }
        e.offset
    }
}

/// Each event's offset (by index), [`Positions`] fed in `order`.
pub fn offsets(events: &[Event], order: &[usize]) -> Vec<Option<u64>> {
    let mut out = vec![None; events.len()];
    let mut pos = Positions::default();
    for &i in order {
        out[i] = pos.offset(&events[i]);
    }
    out
}

/// Patterns built one event at a time, grouped by a key: think times per
/// thread over all its calls; sequential runs per thread, file and
/// direction; repeated bytes per file and direction; offsets as
/// [`Positions`] follows them. A tracer can feed events as they stream
/// (each thread's in order) without keeping them.
#[derive(Debug)]
pub struct Analyser<K> {
    out: BTreeMap<K, Pattern>,
    prev_end: HashMap<u32, u64>,
    last: HashMap<(u32, u32, bool), u64>,
    moved: HashMap<(u32, bool), Ranges>,
    pos: Positions,
}

impl<K: Ord> Default for Analyser<K> {
    fn default() -> Self {
        Analyser {
            out: BTreeMap::new(),
            prev_end: HashMap::default(),
            last: HashMap::default(),
            moved: HashMap::default(),
            pos: Positions::default(),
        }
    }
}

impl<K: Ord> Analyser<K> {
    /// Counts `e` under `key` (`None`: only its effect on think times and
    /// positions); events without a known file count under no key.
    pub fn add(&mut self, e: &Event, key: Option<K>) {
        let think = self.prev_end.insert(e.tid, e.t_ns + e.lat_ns);
        let offset = self.pos.offset(e);
        let (Some(file), Some(k)) = (e.file, key) else {
            return;
        };
        let p = self.out.entry(k).or_insert_with(|| Pattern {
            first_ns: e.t_ns,
            ..Pattern::default()
        });
        p.first_ns = p.first_ns.min(e.t_ns);
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
            return;
        };
        if e.result < 0 {
            return;
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
            return;
        }
        d.sizes.add(n, 1);
        let block = ((n + BLOCK / 2) / BLOCK).max(1) * BLOCK;
        *d.blocks.entry(block).or_default() += 1;
        let Some(off) = offset else {
            return;
        };
        p.extent = p.extent.max(off + n);
        let before = self.last.insert((e.tid, file, write), off + n);
        if before.map_or(off == 0, |end| end == off) {
            d.sequential += 1;
        } else {
            d.random += 1;
        }
        d.repeat_bytes += self
            .moved
            .entry((file, write))
            .or_default()
            .insert(off, off + n);
    }

    /// The patterns, by key.
    pub fn finish(self) -> BTreeMap<K, Pattern> {
        self.out
    }
}

impl Analyser<u32> {
    /// Counts `e` under its file.
    pub fn add_event(&mut self, e: &Event) {
        self.add(e, e.file);
    }

    /// Puts the patterns (keyed by index into `t.paths`) into
    /// [`FileStats::pattern`], adding files the figures lack.
    pub fn fill(self, t: &mut Trace) {
        for (f, p) in self.out {
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
}

/// The patterns of the trace's events (in entry order) grouped by `key`
/// (events it gives `None` are left out, and those whose file number has
/// no path), as [`Analyser`] makes them.
pub fn by<K: Ord>(t: &Trace, key: impl Fn(&Event) -> Option<K>) -> BTreeMap<K, Pattern> {
    let mut a = Analyser::default();
    for i in in_order(&t.events) {
        let e = &t.events[i];
        // A file number the trace has no path for counts as no file.
        let known = e.file.is_some_and(|f| (f as usize) < t.paths.len());
        a.add(e, if known { key(e) } else { None });
    }
    a.finish()
}

/// Fills [`FileStats::pattern`] of every file the events used (adding
/// files the figures lack). Without events it changes nothing; run again,
/// it gives the same result.
pub fn analyse(t: &mut Trace) {
    if t.events.is_empty() {
        return;
    }
    let mut a = Analyser::default();
    for i in in_order(&t.events) {
        a.add_event(&t.events[i]);
    }
    a.fill(t);
}

#[cfg(test)]
pub(crate) mod tests;
