//! The hot-path front of [`LatencyHistogram`]: a flat array of counts with
//! exactly the bucket boundaries of an HDR histogram with 3 significant
//! digits (2048 sub-buckets per power of two), so recording is a few
//! instructions. [`Recorder::finish`] folds it into the HDR histogram: each
//! bucket's count is recorded at the bucket's lowest value, which lands in the
//! same HDR bucket as the original samples, so nothing is approximated twice.

use super::histogram::{LatencyHistogram, MAX_NS};

const SUB: usize = 2048;
const MAGS: usize = 32; // MAX_NS < 2^42 = 2^(31 + 11)

/// Records latencies in O(1) without touching the HDR structure.
pub struct Recorder {
    counts: Vec<u64>,
    count: u64,
    sum: u128,
    sum_sq: u128,
    min: u64,
    max: u64,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    /// An empty recorder (its 512 KiB of counts are zero pages until used).
    pub fn new() -> Recorder {
        Recorder {
            counts: vec![0; SUB * MAGS],
            count: 0,
            sum: 0,
            sum_sq: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// A recorder that must never record: no memory at all, for op types a
    /// loop cannot issue (its `finish` is an empty histogram).
    pub fn empty() -> Recorder {
        Recorder {
            counts: Vec::new(),
            count: 0,
            sum: 0,
            sum_sq: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Forgets every sample (fio's reset at the end of `ramp_time`); an
    /// [`Recorder::empty`] one stays empty.
    pub fn reset(&mut self) {
        self.counts.fill(0);
        self.count = 0;
        self.sum = 0;
        self.sum_sq = 0;
        self.min = u64::MAX;
        self.max = 0;
    }

    /// Records one latency in nanoseconds.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        let v = ns.min(MAX_NS);
        let idx = bucket_index(v);
        // idx < MAGS * SUB because v <= MAX_NS < 2^42.
        self.counts[idx] += 1;
        self.count += 1;
        self.sum += v as u128;
        self.sum_sq += (v as u128) * (v as u128);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Number of samples so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Sum of the samples in ns.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Appends `(bucket, count)` for every bucket whose count grew since
    /// `prev` (the counts at the previous call, updated here): the samples of
    /// one interval, without any per-sample cost.
    pub fn delta_since(&self, prev: &mut Vec<u64>, out: &mut Vec<(u32, u32)>) {
        if self.count == 0 {
            return;
        }
        let lo = bucket_index(self.min);
        let hi = bucket_index(self.max) + 1;
        if prev.len() < hi {
            prev.resize(hi, 0);
        }
        for (i, (&c, p)) in self.counts[lo..hi]
            .iter()
            .zip(&mut prev[lo..hi])
            .enumerate()
        {
            if c != *p {
                out.push(((lo + i) as u32, (c - *p) as u32));
                *p = c;
            }
        }
    }

    /// The samples as a [`LatencyHistogram`].
    pub fn finish(&self) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        if self.count > 0 {
            // Only the buckets between min and max can hold samples.
            let (lo, hi) = (bucket_index(self.min), bucket_index(self.max));
            for (i, &c) in self.counts[lo..=hi].iter().enumerate() {
                if c > 0 {
                    h.record_bucket(bucket_range((lo + i) as u32).0, c);
                }
            }
        }
        h.set_moments(self.count, self.sum, self.sum_sq, self.min, self.max);
        h
    }
}

/// The bucket of a value (ns, at most `MAX_NS`).
#[inline(always)]
fn bucket_index(v: u64) -> usize {
    let mag = (63 - (v | (SUB as u64 - 1)).leading_zeros()) as usize - 10;
    mag * SUB + (v >> mag) as usize
}

/// The lowest and highest value of bucket `idx` (as from [`Recorder::delta_since`]).
pub fn bucket_range(idx: u32) -> (u64, u64) {
    let idx = idx as usize;
    let mag = idx / SUB;
    let low = ((idx % SUB) as u64) << mag;
    (low, low + (1u64 << mag) - 1)
}
