//! Figures from the events as they stream by, for a trace with events:
//! the kernel aggregates a call's sizes in histogram slots (1000-byte reads
//! fall in the 992–1023 slot) while the events carry each size; and in
//! event mode the kernel keeps no per-file figures at all (they cost each
//! call half a dozen locked additions), so they are tallied here.
//! [`SizeTally`] puts exact sizes in place of the kernel's per-call ones
//! where both counted the same calls; [`FileTally`] makes the per-file
//! figures.

use super::hist::LogHist;
use super::model::{Event, FileStats, Stats, Trace};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// The sizes of the data-moving events, per call.
#[derive(Debug, Default)]
pub struct SizeTally {
    calls: HashMap<u16, LogHist>,
}

/// The name of call `id`.
fn name(call: u16) -> String {
    Event {
        call,
        ..Event::default()
    }
    .name()
    .to_string()
}

impl SizeTally {
    /// Counts the size of `e` (the bytes a read, write or copy moved).
    pub fn add(&mut self, e: &Event) {
        if e.result < 0 || !e.moves_data() {
            return;
        }
        self.calls
            .entry(e.call)
            .or_default()
            .add(e.result as u64, 1);
    }

    /// Puts the exact sizes in `t`'s per-call figures where they count as
    /// many calls as the kernel's histogram (none lost, none left out).
    pub fn fill(self, t: &mut Trace) {
        for (call, h) in self.calls {
            if let Some(st) = t.calls.get_mut(&name(call))
                && st.sizes.count() == h.count()
            {
                st.sizes = h;
            }
        }
    }
}

/// Per file (an index into [`Trace::paths`]) and call, the figures of the
/// events: count, errors, bytes, time, sequential calls (those that began
/// where the previous call of the kind on the file ended), latencies and
/// sizes (exact while few).
#[derive(Debug, Default)]
pub struct FileTally {
    files: BTreeMap<u32, BTreeMap<u16, Stats>>,
    last_end: HashMap<(u32, u16), u64>,
}

impl FileTally {
    /// Counts `e` on its file.
    pub fn add(&mut self, e: &Event) {
        let Some(f) = e.file else { return };
        let moved = e.moves_data();
        let st = self.files.entry(f).or_default().entry(e.call).or_default();
        st.add(e.lat_ns, e.result, moved);
        if moved
            && e.result >= 0
            && let Some(off) = e.offset
        {
            let before = self.last_end.insert((f, e.call), off + e.result as u64);
            if before == Some(off) {
                st.sequential += 1;
            }
        }
    }

    /// The per-file figures, by path.
    pub fn files(self, paths: &[String]) -> Vec<FileStats> {
        (self.files.into_iter())
            .map(|(f, calls)| FileStats {
                path: paths.get(f as usize).cloned().unwrap_or_default(),
                calls: calls.into_iter().map(|(c, s)| (name(c), s)).collect(),
                pattern: None,
            })
            .collect()
    }
}
