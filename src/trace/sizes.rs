//! Exact sizes for a trace with events: the kernel aggregates a call's
//! sizes in histogram slots (1000-byte reads fall in the 992–1023 slot),
//! while its events carry each size. [`SizeTally`] counts the sizes of the
//! events as they stream by and puts them in place of the kernel's, call
//! by call and file by file, where both counted the same calls.

use super::hist::LogHist;
use super::model::{Event, Trace};
use std::collections::HashMap;

/// The sizes of the data-moving events, per call and per file and call.
#[derive(Debug, Default)]
pub struct SizeTally {
    calls: HashMap<u16, LogHist>,
    files: HashMap<(u32, u16), LogHist>,
}

impl SizeTally {
    /// Counts the size of `e` (the bytes a read, write or copy moved).
    pub fn add(&mut self, e: &Event) {
        if e.result < 0 || !e.moves_data() {
            return;
        }
        let n = e.result as u64;
        self.calls.entry(e.call).or_default().add(n, 1);
        if let Some(f) = e.file {
            self.files.entry((f, e.call)).or_default().add(n, 1);
        }
    }

    /// Puts the exact sizes in `t`'s figures where they count as many
    /// calls as the kernel's histogram (none lost, none left out).
    pub fn fill(self, t: &mut Trace) {
        let name = |call: u16| {
            Event {
                call,
                ..Event::default()
            }
            .name()
            .to_string()
        };
        for (call, h) in self.calls {
            if let Some(st) = t.calls.get_mut(&name(call))
                && st.sizes.count() == h.count()
            {
                st.sizes = h;
            }
        }
        let by_path: HashMap<String, usize> = (t.files.iter().enumerate())
            .map(|(i, f)| (f.path.clone(), i))
            .collect();
        for ((file, call), h) in self.files {
            let Some(&i) = t.paths.get(file as usize).and_then(|p| by_path.get(p)) else {
                continue;
            };
            if let Some(st) = t.files[i].calls.get_mut(&name(call))
                && st.sizes.count() == h.count()
            {
                st.sizes = h;
            }
        }
    }
}
