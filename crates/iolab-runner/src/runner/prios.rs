//! fio's per-priority latencies (`prios` in its JSON, stat.c
//! `add_ddir_status_json`): with `cmdprio_*`, the I/Os of each ioprio are
//! also counted apart, their total and completion latencies.

use crate::metrics::{LatencyHistogram, Recorder};
use serde::{Deserialize, Serialize};

/// The latencies of one direction's I/Os of one priority.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PrioStats {
    /// The kernel's ioprio value: class × 8192 + level.
    pub ioprio: u16,
    /// Total latency (queued to completed).
    pub lat: LatencyHistogram,
    /// Completion latency (submitted to completed).
    pub clat: LatencyHistogram,
}

impl PrioStats {
    /// The ioprio class (fio's `prioclass`).
    pub fn class(&self) -> u16 {
        self.ioprio >> 13
    }

    /// The ioprio level (fio's `prio`).
    pub fn level(&self) -> u16 {
        self.ioprio & 7
    }
}

/// Adds `from` to `into`, priority by priority, kept in ioprio order.
pub fn merge(into: &mut Vec<PrioStats>, from: &[PrioStats]) {
    for p in from {
        match into.iter_mut().find(|q| q.ioprio == p.ioprio) {
            Some(q) => {
                q.lat.merge(&p.lat);
                q.clat.merge(&p.clat);
            }
            None => into.push(p.clone()),
        }
    }
    into.sort_by_key(|p| p.ioprio);
}

/// Records one direction's latencies per priority (empty, and free, when
/// the job gives no I/O a priority of its own).
#[derive(Default)]
pub struct PrioRecorders {
    by: Vec<(u16, Recorder, Recorder)>,
}

impl PrioRecorders {
    /// Records an I/O of priority `ioprio`.
    #[inline]
    pub fn record(&mut self, ioprio: u16, lat: u64, clat: u64) {
        let i = match self.by.iter().position(|(p, ..)| *p == ioprio) {
            Some(i) => i,
            None => {
                self.by.push((ioprio, Recorder::new(), Recorder::new()));
                self.by.len() - 1
            }
        };
        let (_, l, c) = &mut self.by[i];
        l.record(lat);
        c.record(clat);
    }

    /// What was recorded, in ioprio order.
    pub fn finish(&self) -> Vec<PrioStats> {
        let mut v: Vec<PrioStats> = (self.by.iter())
            .map(|(p, l, c)| PrioStats {
                ioprio: *p,
                lat: l.finish(),
                clat: c.finish(),
            })
            .collect();
        v.sort_by_key(|p| p.ioprio);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_priority_is_counted_apart_and_merged_by_value() {
        let mut r = PrioRecorders::default();
        r.record(8192 + 3, 10, 5);
        r.record(0, 20, 15);
        r.record(8192 + 3, 30, 25);
        let a = r.finish();
        assert_eq!(a.iter().map(|p| p.ioprio).collect::<Vec<_>>(), [0, 8195]);
        assert_eq!((a[1].class(), a[1].level()), (1, 3));
        assert_eq!(a[1].lat.count(), 2);
        let mut m = a.clone();
        merge(&mut m, &a);
        assert_eq!(m[1].lat.count(), 4);
        assert_eq!(m[0].clat.count(), 2);
    }
}
