//! A trace's figures built from its events ([`Trace::tally_events`]): per
//! call and per file, with the files' access patterns; for a trace
//! imported from strace, or one whose figures were lost.

use super::model::{FileStats, Stats, Trace};
use super::pattern;
use std::collections::BTreeMap;

impl Trace {
    /// Builds the per call and per file figures and the files' access
    /// patterns from the events (a trace imported from strace, or one whose
    /// figures were lost).
    pub fn tally_events(&mut self) {
        let mut calls: BTreeMap<String, Stats> = BTreeMap::new();
        let mut files: BTreeMap<u32, BTreeMap<String, Stats>> = BTreeMap::new();
        let mut last_end: BTreeMap<(u32, u16), u64> = BTreeMap::new();
        for e in &self.events {
            let moved = e.moves_data();
            let st = calls.entry(e.name().to_string()).or_default();
            st.add(e.lat_ns, e.result, moved);
            let seq = match (e.file, e.offset) {
                (Some(f), Some(off)) if moved && e.result >= 0 => {
                    let prev = last_end.insert((f, e.call), off + e.result as u64);
                    prev == Some(off)
                }
                _ => false,
            };
            if seq {
                st.sequential += 1;
            }
            if let Some(f) = e.file {
                let fs = files.entry(f).or_default();
                let st = fs.entry(e.name().to_string()).or_default();
                st.add(e.lat_ns, e.result, moved);
                if seq {
                    st.sequential += 1;
                }
            }
        }
        self.calls = calls;
        self.files = files
            .into_iter()
            .map(|(f, calls)| FileStats {
                path: self.paths.get(f as usize).cloned().unwrap_or_default(),
                calls,
                pattern: None,
            })
            .collect();
        pattern::analyse(self);
    }
}
