//! Latency and size histograms of a trace: log2 buckets (dtrace's
//! `quantize`) each split into 16 linear sub-buckets, so that a percentile
//! read from them is within about 3% of the value measured. The BPF program
//! computes the same slot ([`slot`]) in the kernel.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Sub-buckets per power of two.
pub const SUB: u64 = 16;
/// How many slots there are (values up to `u64::MAX`).
pub const SLOTS: usize = 976;

/// The slot of `v`: `v` itself below 16, then 16 slots per power of two.
pub fn slot(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let k = 63 - u64::from(v.leading_zeros()); // floor(log2 v), 4 or more
    let sub = (v >> (k - 4)) & (SUB - 1);
    ((k - 3) * SUB + sub) as usize
}

/// The smallest value of slot `s`.
pub fn low(s: usize) -> u64 {
    let s = s as u64;
    if s < SUB {
        return s;
    }
    let k = s / SUB + 3;
    (SUB + s % SUB) << (k - 4)
}

/// A histogram: counts per slot, only the slots that have any.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LogHist {
    /// Count per slot.
    pub slots: BTreeMap<u16, u64>,
}

impl LogHist {
    /// Counts `n` values of `v`.
    pub fn add(&mut self, v: u64, n: u64) {
        self.add_slot(slot(v), n);
    }

    /// Counts `n` values in slot `s` (as the kernel reports them).
    pub fn add_slot(&mut self, s: usize, n: u64) {
        if n > 0 {
            *self.slots.entry(s.min(SLOTS - 1) as u16).or_default() += n;
        }
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, o: &LogHist) {
        for (&s, &n) in &o.slots {
            *self.slots.entry(s).or_default() += n;
        }
    }

    /// How many values.
    pub fn count(&self) -> u64 {
        self.slots.values().sum()
    }

    /// The `p`th percentile (0..=100), the middle of the slot it falls in
    /// (0 when empty).
    pub fn percentile(&self, p: f64) -> u64 {
        let total = self.count();
        if total == 0 {
            return 0;
        }
        let want = ((p / 100.0 * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (&s, &n) in &self.slots {
            seen += n;
            if seen >= want {
                let (lo, hi) = (low(s.into()), low(usize::from(s) + 1));
                return lo + (hi - lo) / 2;
            }
        }
        0
    }

    /// The `p`th percentile as the lowest value of its slot: exact for
    /// sizes that are multiples of the slot width (4096, 65536).
    pub fn percentile_low(&self, p: f64) -> u64 {
        let mid = self.percentile(p);
        low(slot(mid))
    }

    /// dtrace's view: counts per power of two, as (lower bound, count),
    /// from the lowest to the highest bucket that has any, empty buckets
    /// between included.
    pub fn log2(&self) -> Vec<(u64, u64)> {
        let mut by: BTreeMap<u32, u64> = BTreeMap::new();
        for (&s, &n) in &self.slots {
            let v = low(s.into());
            let k = if v == 0 { 0 } else { 64 - v.leading_zeros() };
            *by.entry(k).or_default() += n;
        }
        let (Some(&first), Some(&last)) = (by.keys().next(), by.keys().last()) else {
            return Vec::new();
        };
        (first..=last)
            .map(|k| {
                let lo = if k == 0 { 0 } else { 1u64 << (k - 1) };
                (lo, by.get(&k).copied().unwrap_or(0))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_cover_every_value_in_order() {
        let mut last = 0;
        for v in (0..5000).chain([u64::MAX / 3, u64::MAX]) {
            let s = slot(v);
            assert!(s >= last && s < SLOTS, "{v}");
            assert!(low(s) <= v, "{v}");
            if s + 1 < SLOTS {
                assert!(v < low(s + 1), "{v}");
            }
            last = s;
        }
    }

    #[test]
    fn percentiles_are_within_a_sub_bucket() {
        let mut h = LogHist::default();
        for v in 1000..=3000u64 {
            h.add(v, 1);
        }
        let p50 = h.percentile(50.0) as f64;
        assert!((p50 - 2000.0).abs() / 2000.0 < 0.04, "{p50}");
        assert_eq!(h.count(), 2001);
        let sum: u64 = h.log2().iter().map(|b| b.1).sum();
        assert_eq!(sum, 2001);
        assert_eq!(h.log2()[0].0, 512);
    }
}
