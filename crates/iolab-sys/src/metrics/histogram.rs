//! Latency histogram: an HDR (log-linear) histogram plus exact count, sum,
//! sum of squares, min and max.
//!
//! **Error bound.** Values are kept with 3 significant decimal digits: the
//! HDR histogram uses 2048 linear sub-buckets per power of two, so any
//! reported percentile differs from the true sample value by at most 1/1024
//! (< 0.1 %) of that value. Count, min, max, mean and standard deviation are
//! exact (not derived from buckets). Range: 0 ns to one hour; longer values
//! are recorded as one hour. Histograms merge exactly: merging equals
//! recording all samples into one histogram. Only the buckets that hold
//! samples are kept, so an empty histogram costs nothing and a full one a
//! few KiB.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// Largest value kept exactly (one hour in ns).
pub const MAX_NS: u64 = 3_600_000_000_000;

/// fio's default percentile list.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The bucket layout every histogram shares (one hdrhistogram of the
/// configuration above, used only to map values to buckets: 256 KiB once).
static LAYOUT: LazyLock<Histogram<u64>> =
    LazyLock::new(|| Histogram::new_with_bounds(1, MAX_NS, 3).expect("valid histogram bounds"));

/// The lowest value of the bucket `v` falls in (the bucket's key).
fn bucket_of(v: u64) -> u64 {
    LAYOUT.lowest_equivalent(v.min(MAX_NS))
}

/// The highest value of the bucket whose key is `key`.
fn bucket_top(key: u64) -> u64 {
    LAYOUT.highest_equivalent(key)
}

/// Latencies of one operation type, in nanoseconds: the HDR buckets that
/// hold samples (sorted by value; memory grows with the distinct buckets
/// used, at most a few thousand, never with the number of samples), plus
/// the exact moments.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(into = "HistogramSnapshot", from = "HistogramSnapshot")]
pub struct LatencyHistogram {
    /// (bucket key, count), sorted by key, no zero counts.
    buckets: Vec<(u64, u64)>,
    /// Sum of the bucket counts (the exact count may differ for imports).
    in_buckets: u64,
    count: u64,
    sum: u128,
    sum_sq: u128,
    min: Option<u64>,
    max: u64,
}

impl LatencyHistogram {
    /// An empty histogram (allocates nothing).
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one latency.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let v = ns.min(MAX_NS);
        self.add_to_bucket(bucket_of(v), 1);
        self.count += 1;
        self.sum += v as u128;
        self.sum_sq += (v as u128) * (v as u128);
        self.min = Some(self.min.map_or(v, |m| m.min(v)));
        self.max = self.max.max(v);
    }

    /// Adds `n` samples of `ns` to the buckets only; pair with
    /// [`Self::set_exact`] when the exact moments are known from elsewhere
    /// (an imported fio result).
    pub fn record_n(&mut self, ns: u64, n: u64) {
        self.add_to_bucket(bucket_of(ns), n);
    }

    /// Sets count, sum, sum of squares, min and max to known exact values.
    pub fn set_exact(&mut self, count: u64, sum: u128, sum_sq: u128, min: u64, max: u64) {
        self.set_moments(count, sum, sum_sq, min, max);
    }

    /// Adds `n` samples to the bucket of `value` without touching the exact
    /// moments (used by [`super::recorder::Recorder::finish`], which sets them).
    pub(crate) fn record_bucket(&mut self, value: u64, n: u64) {
        self.add_to_bucket(bucket_of(value), n);
    }

    fn add_to_bucket(&mut self, key: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.in_buckets = self.in_buckets.saturating_add(n);
        // Values mostly arrive in order (from a recorder): try the end first.
        match self.buckets.last_mut() {
            Some((k, c)) if *k == key => *c = c.saturating_add(n),
            Some((k, _)) if *k > key => match self.buckets.binary_search_by_key(&key, |b| b.0) {
                Ok(i) => self.buckets[i].1 = self.buckets[i].1.saturating_add(n),
                Err(i) => self.buckets.insert(i, (key, n)),
            },
            _ => self.buckets.push((key, n)),
        }
    }

    /// Sets the exact moments (see [`Self::record_bucket`]).
    pub(crate) fn set_moments(&mut self, count: u64, sum: u128, sum_sq: u128, min: u64, max: u64) {
        self.count = count;
        self.sum = sum;
        self.sum_sq = sum_sq;
        self.min = (count > 0).then_some(min);
        self.max = max;
    }

    /// Adds every sample of `other` (exact).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if !other.buckets.is_empty() {
            let mut merged = Vec::with_capacity(self.buckets.len() + other.buckets.len());
            let (mut a, mut b) = (
                self.buckets.iter().peekable(),
                other.buckets.iter().peekable(),
            );
            loop {
                let next = match (a.peek(), b.peek()) {
                    (Some(x), Some(y)) if x.0 == y.0 => {
                        let v = (x.0, x.1.saturating_add(y.1));
                        a.next();
                        b.next();
                        v
                    }
                    (Some(x), Some(y)) if x.0 < y.0 => *a.next().expect("peeked"),
                    (Some(_), Some(_)) | (None, Some(_)) => *b.next().expect("peeked"),
                    (Some(_), None) => *a.next().expect("peeked"),
                    (None, None) => break,
                };
                merged.push(next);
            }
            self.buckets = merged;
        }
        self.in_buckets = self.in_buckets.saturating_add(other.in_buckets);
        self.count += other.count;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
        self.min = match (self.min, other.min) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        self.max = self.max.max(other.max);
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Smallest sample (0 when empty).
    pub fn min(&self) -> u64 {
        self.min.unwrap_or(0)
    }

    /// Largest sample.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Exact mean.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// Exact sum of all samples.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Exact sample standard deviation (n-1), as fio reports it.
    pub fn stddev(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as f64;
        let mean = self.sum as f64 / n;
        let var = (self.sum_sq as f64 - n * mean * mean) / (n - 1.0);
        var.max(0.0).sqrt()
    }

    /// The value at percentile `p` (0-100), within the documented error
    /// bound: the top of the bucket that holds the sample of that rank (as
    /// hdrhistogram's `value_at_quantile`), kept within min and max.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count == 0 || self.in_buckets == 0 {
            return 0;
        }
        let q = (p / 100.0).min(1.0);
        let rank = ((q * self.in_buckets as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        let mut key = self.buckets.last().map_or(0, |b| b.0);
        for &(k, c) in &self.buckets {
            seen = seen.saturating_add(c);
            if seen >= rank {
                key = k;
                break;
            }
        }
        let v = if q == 0.0 { key } else { bucket_top(key) };
        v.min(self.max).max(self.min())
    }

    /// Non-empty buckets as (value, count), for fio's json+ `bins`.
    pub fn bins(&self) -> Vec<(u64, u64)> {
        self.buckets
            .iter()
            .map(|&(k, c)| (bucket_top(k), c))
            .collect()
    }

    /// Non-empty buckets as (lowest value, count), sorted.
    pub fn bins_low(&self) -> Vec<(u64, u64)> {
        // A bucket's key is its lowest value (`bucket_of`).
        self.buckets.clone()
    }

    /// dtrace `quantize()` buckets: (power of two, count) from the first to
    /// the last non-empty bucket, with one empty bucket on each side.
    pub fn log2_buckets(&self) -> Vec<(u64, u64)> {
        let mut counts = [0u64; 65];
        for &(val, c) in &self.buckets {
            let idx = if val == 0 {
                0
            } else {
                64 - val.leading_zeros() as usize
            };
            counts[idx] += c;
        }
        let Some(first) = counts.iter().position(|&c| c > 0) else {
            return Vec::new();
        };
        let last = counts.iter().rposition(|&c| c > 0).unwrap_or(first);
        let lo = first.saturating_sub(1);
        let hi = (last + 1).min(64);
        (lo..=hi)
            .map(|i| (if i == 0 { 0 } else { 1u64 << (i - 1) }, counts[i]))
            .collect()
    }

    /// A serialisable copy (buckets and exact sums) for storage and merging.
    pub fn to_snapshot(&self) -> HistogramSnapshot {
        HistogramSnapshot {
            count: self.count,
            sum: self.sum.to_string(),
            sum_sq: self.sum_sq.to_string(),
            min: self.min(),
            max: self.max,
            buckets: self.bins(),
        }
    }
}

impl From<LatencyHistogram> for HistogramSnapshot {
    fn from(h: LatencyHistogram) -> Self {
        h.to_snapshot()
    }
}

impl From<HistogramSnapshot> for LatencyHistogram {
    /// Rebuilds the histogram: every bucket value lands in its own bucket
    /// again, and the exact moments are restored as stored.
    fn from(s: HistogramSnapshot) -> Self {
        let mut h = LatencyHistogram::new();
        for (v, n) in &s.buckets {
            h.record_bucket((*v).min(MAX_NS), *n);
        }
        h.set_moments(
            s.count,
            s.sum.parse().unwrap_or(0),
            s.sum_sq.parse().unwrap_or(0),
            s.min,
            s.max,
        );
        h
    }
}

/// A histogram in a form that serialises and merges back exactly.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct HistogramSnapshot {
    /// Samples.
    pub count: u64,
    /// Exact sum (decimal string: it may exceed 2^64).
    pub sum: String,
    /// Exact sum of squares (decimal string).
    pub sum_sq: String,
    /// Smallest sample.
    pub min: u64,
    /// Largest sample.
    pub max: u64,
    /// (bucket value, count) pairs.
    pub buckets: Vec<(u64, u64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_moments() {
        let mut h = LatencyHistogram::new();
        for v in [1u64, 2, 3, 4, 5] {
            h.record(v * 1000);
        }
        assert_eq!(h.count(), 5);
        assert_eq!(h.min(), 1000);
        assert_eq!(h.max(), 5000);
        assert_eq!(h.mean(), 3000.0);
        assert!((h.stddev() - 1581.1388).abs() < 0.01);
    }

    #[test]
    fn snapshot_round_trip_is_exact() {
        let mut h = LatencyHistogram::new();
        for v in [1u64, 999, 1_000_001, 77_777_777, MAX_NS] {
            h.record(v);
        }
        let json = serde_json::to_string(&h).unwrap();
        let back: LatencyHistogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back.to_snapshot(), h.to_snapshot());
        for p in [1.0, 50.0, 99.0, 100.0] {
            assert_eq!(back.percentile(p), h.percentile(p));
        }
        let mut merged = back.clone();
        merged.merge(&h);
        assert_eq!(merged.count(), 10);
        assert_eq!(merged.max(), MAX_NS);
    }

    /// The kept buckets answer exactly as a dense hdrhistogram would.
    #[test]
    fn same_answers_as_a_dense_hdrhistogram() {
        let mut dense = Histogram::<u64>::new_with_bounds(1, MAX_NS, 3).unwrap();
        let (mut a, mut b) = (LatencyHistogram::new(), LatencyHistogram::new());
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x % 50_000_000) >> (x % 17);
            dense.saturating_record(v);
            if i % 3 == 0 { a.record(v) } else { b.record(v) }
        }
        a.merge(&b);
        assert_eq!(a.count(), 20_000);
        for p in [0.0, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
            let want = dense.value_at_quantile(p / 100.0).min(a.max()).max(a.min());
            assert_eq!(a.percentile(p), want, "p{p}");
        }
        let dense_bins: Vec<(u64, u64)> = dense
            .iter_recorded()
            .map(|v| {
                (
                    dense.highest_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                )
            })
            .collect();
        assert_eq!(a.bins(), dense_bins);
    }

    #[test]
    fn log2_view() {
        let mut h = LatencyHistogram::new();
        for _ in 0..10 {
            h.record(5000);
        }
        h.record(9000);
        let b = h.log2_buckets();
        assert_eq!(b, vec![(2048, 0), (4096, 10), (8192, 1), (16384, 0)]);
    }
}
