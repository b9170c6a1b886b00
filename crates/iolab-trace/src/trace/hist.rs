//! Latency and size histograms of a trace: log2 buckets (dtrace's
//! `quantize`) each split into 16 linear sub-buckets, so that a percentile
//! read from them is within about 3% of the value measured. The BPF program
//! computes the same slot ([`slot`]) in the kernel. A histogram built from
//! values (events, not the kernel's slots) also keeps the values themselves
//! while there are few different ones, so that the sizes of a trace with
//! events are exact (1000-byte reads are 1000 B, not their slot's middle).

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

/// How many different values a histogram keeps exactly; past that, only
/// its slots.
pub const MAX_EXACT: usize = 256;

/// A histogram: counts per slot, only the slots that have any; and the
/// values themselves while every value came as one ([`LogHist::add`]) and
/// there are at most [`MAX_EXACT`] different ones. Stored as the map of
/// slots alone (as before exact values were kept) or, with exact values,
/// as `{"slots": {...}, "exact": [[value, count], ...]}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "Stored", into = "Stored")]
pub struct LogHist {
    slots: Slots,
    exact: Option<BTreeMap<u64, u64>>,
}

/// Counts per slot, kept dense from the lowest slot used to the highest:
/// a tracer adds millions of values a second, and one index is cheaper
/// than a map's search (a latency histogram spans a few hundred slots).
#[derive(Debug, Clone, Default)]
struct Slots {
    base: usize,
    counts: Vec<u64>,
}

impl Slots {
    fn bump(&mut self, s: usize, n: u64) {
        if self.counts.is_empty() {
            self.base = s;
        } else if s < self.base {
            let grow = self.base - s;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.base = s;
        }
        let i = s - self.base;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += n;
    }

    fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The slots with values, as (slot, count), lowest first.
    fn iter(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        (self.counts.iter().enumerate())
            .filter(|(_, n)| **n > 0)
            .map(|(i, &n)| (self.base + i, n))
    }
}

impl PartialEq for Slots {
    fn eq(&self, o: &Slots) -> bool {
        self.iter().eq(o.iter())
    }
}

/// How a [`LogHist`] is stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum Stored {
    /// With exact values.
    Exact {
        slots: BTreeMap<String, u64>,
        exact: Vec<(u64, u64)>,
    },
    /// Slots alone (JSON map keys are strings).
    Slots(BTreeMap<String, u64>),
}

// Inside an untagged enum map keys reach serde as strings: the slots are
// stored with string keys and parsed back.
fn parse_slots(m: BTreeMap<String, u64>) -> Slots {
    let mut out = Slots::default();
    for (k, v) in m {
        if let Ok(s) = k.parse::<usize>()
            && v > 0
        {
            out.bump(s.min(SLOTS - 1), v);
        }
    }
    out
}

fn show_slots(m: Slots) -> BTreeMap<String, u64> {
    m.iter().map(|(k, v)| (k.to_string(), v)).collect()
}

impl From<Stored> for LogHist {
    fn from(s: Stored) -> LogHist {
        match s {
            Stored::Exact { slots, exact } => LogHist {
                slots: parse_slots(slots),
                exact: Some(exact.into_iter().collect()),
            },
            Stored::Slots(m) => LogHist {
                slots: parse_slots(m),
                exact: None,
            },
        }
    }
}

impl From<LogHist> for Stored {
    fn from(h: LogHist) -> Stored {
        match h.exact {
            Some(e) if !e.is_empty() => Stored::Exact {
                slots: show_slots(h.slots),
                exact: e.into_iter().collect(),
            },
            _ => Stored::Slots(show_slots(h.slots)),
        }
    }
}

impl LogHist {
    /// Counts `n` values of `v`.
    pub fn add(&mut self, v: u64, n: u64) {
        if n == 0 {
            return;
        }
        if self.slots.is_empty() {
            self.exact.get_or_insert_with(BTreeMap::new);
        }
        self.bump(slot(v), n);
        if let Some(e) = &mut self.exact {
            *e.entry(v).or_default() += n;
            if e.len() > MAX_EXACT {
                self.exact = None;
            }
        }
    }

    /// Counts `n` values in slot `s` (as the kernel reports them): the
    /// histogram no longer knows its values exactly.
    pub fn add_slot(&mut self, s: usize, n: u64) {
        if n > 0 {
            self.bump(s, n);
            self.exact = None;
        }
    }

    fn bump(&mut self, s: usize, n: u64) {
        self.slots.bump(s.min(SLOTS - 1), n);
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, o: &LogHist) {
        if o.slots.is_empty() {
            return;
        }
        self.exact = match (self.slots.is_empty(), &mut self.exact, &o.exact) {
            (true, _, e) => e.clone(),
            (false, Some(mine), Some(theirs)) => {
                for (&v, &n) in theirs {
                    *mine.entry(v).or_default() += n;
                }
                Some(std::mem::take(mine)).filter(|m| m.len() <= MAX_EXACT)
            }
            _ => None,
        };
        for (s, n) in o.slots.iter() {
            self.slots.bump(s, n);
        }
    }

    /// The values and their counts, when kept exactly (else empty).
    pub fn exact_values(&self) -> Vec<(u64, u64)> {
        (self.exact.iter().flatten())
            .map(|(&v, &n)| (v, n))
            .collect()
    }

    /// Whether its percentiles are the values themselves.
    pub fn is_exact(&self) -> bool {
        self.exact.is_some()
    }

    /// How many values.
    pub fn count(&self) -> u64 {
        self.slots.counts.iter().sum()
    }

    /// The `p`th percentile (0..=100): the value itself when the
    /// histogram is exact, else the middle of the slot it falls in (0 when
    /// empty).
    pub fn percentile(&self, p: f64) -> u64 {
        let total = self.count();
        if total == 0 {
            return 0;
        }
        let want = ((p / 100.0 * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        if let Some(e) = &self.exact {
            for (&v, &n) in e {
                seen += n;
                if seen >= want {
                    return v;
                }
            }
        }
        for (s, n) in self.slots.iter() {
            seen += n;
            if seen >= want {
                let (lo, hi) = (low(s), low(s + 1));
                return lo + (hi - lo) / 2;
            }
        }
        0
    }

    /// The `p`th percentile as the lowest value of its slot (exact for
    /// sizes that are multiples of the slot width, 4096, 65536), or the
    /// value itself when the histogram is exact.
    pub fn percentile_low(&self, p: f64) -> u64 {
        let v = self.percentile(p);
        if self.is_exact() { v } else { low(slot(v)) }
    }

    /// The slots that have values, as (slot, count).
    pub fn slots(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.slots.iter()
    }

    /// dtrace's view: counts per power of two, as (lower bound, count),
    /// from the lowest to the highest bucket that has any, empty buckets
    /// between included.
    pub fn log2(&self) -> Vec<(u64, u64)> {
        let mut by: BTreeMap<u32, u64> = BTreeMap::new();
        for (s, n) in self.slots.iter() {
            let v = low(s);
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
        assert!(!h.is_exact(), "2001 different values");
    }

    #[test]
    fn few_values_are_kept_exactly_and_stored_both_ways() {
        let mut h = LogHist::default();
        h.add(1000, 50);
        h.add(24, 10);
        assert_eq!((h.percentile(50.0), h.percentile_low(100.0)), (1000, 1000));
        assert_eq!(h.percentile(1.0), 24);
        let json = serde_json::to_string(&h).unwrap();
        assert!(json.contains("\"exact\":[[24,10],[1000,50]]"), "{json}");
        assert_eq!(serde_json::from_str::<LogHist>(&json).unwrap(), h);
        // The kernel's slots: no exact values, stored as before.
        let mut k = LogHist::default();
        k.add_slot(slot(1000), 3);
        let json = serde_json::to_string(&k).unwrap();
        assert_eq!(json, format!("{{\"{}\":3}}", slot(1000)));
        assert_eq!(serde_json::from_str::<LogHist>(&json).unwrap(), k);
        assert_ne!(k.percentile(50.0), 1000);
        let mut m = h.clone();
        m.merge(&k);
        assert!(!m.is_exact());
        let mut e = LogHist::default();
        e.merge(&h);
        assert!(e.is_exact());
    }
}
