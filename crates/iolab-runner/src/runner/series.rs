//! Figures over time: at each interval boundary the runner takes the
//! difference of its cumulative recorders, so the time series costs nothing
//! per I/O. Also the per-I/O log of fio's `log_avg_msec=0`.

use crate::metrics::Recorder;
use crate::metrics::recorder::bucket_range;
use serde::{Deserialize, Serialize};

/// Recorders of one direction in the timed loop.
pub struct DirRecorders {
    /// Total latency (queued to completed).
    pub lat: Recorder,
    /// Completion latency (submitted to completed); async engines only.
    pub clat: Recorder,
    /// Submission latency (queued to submitted); async engines only.
    pub slat: Recorder,
    /// Bytes transferred.
    pub bytes: u64,
    /// Latencies per I/O priority (`cmdprio_*` only).
    pub prios: super::prios::PrioRecorders,
}

impl DirRecorders {
    /// Empty recorders: none if the direction is `unused`; no slat/clat
    /// for a synchronous engine (`split` false).
    pub fn new(unused: bool, split: bool) -> DirRecorders {
        let mk = |on: bool| {
            if on {
                Recorder::new()
            } else {
                Recorder::empty()
            }
        };
        DirRecorders {
            lat: mk(!unused),
            clat: mk(!unused && split),
            slat: mk(!unused && split),
            bytes: 0,
            prios: Default::default(),
        }
    }

    /// The recorder of completion latency: `clat` when the engine splits
    /// latency, else `lat`.
    fn completion(&self) -> &Recorder {
        if self.clat.count() > 0 {
            &self.clat
        } else {
            &self.lat
        }
    }
}

/// One direction in one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalDir {
    /// I/Os completed.
    pub ios: u64,
    /// Bytes completed.
    pub bytes: u64,
    /// Sum of total latencies (ns).
    pub lat_sum: u128,
    /// Sum of completion latencies (ns).
    pub clat_sum: u128,
    /// Sum of submission latencies (ns).
    pub slat_sum: u128,
    /// Completion latencies as (bucket, count), see `bucket_range`.
    pub clat_buckets: Vec<(u32, u32)>,
}

impl IntervalDir {
    /// Mean of a latency sum over this interval's I/Os.
    pub fn mean(&self, sum: u128) -> f64 {
        if self.ios == 0 {
            0.0
        } else {
            sum as f64 / self.ios as f64
        }
    }

    /// Completion-latency percentile `p` (0..100) of the interval, as the
    /// highest value of the bucket it falls in (like HDR).
    pub fn clat_percentile(&self, p: f64) -> u64 {
        let total: u64 = self.clat_buckets.iter().map(|b| b.1 as u64).sum();
        if total == 0 {
            return 0;
        }
        let mut sorted = self.clat_buckets.clone();
        sorted.sort_unstable();
        let want = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (idx, c) in sorted {
            seen += c as u64;
            if seen >= want {
                return bucket_range(idx).1;
            }
        }
        0
    }

    fn add(&mut self, o: &IntervalDir) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.lat_sum += o.lat_sum;
        self.clat_sum += o.clat_sum;
        self.slat_sum += o.slat_sum;
        self.clat_buckets.extend_from_slice(&o.clat_buckets);
    }
}

/// One interval of the series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// End of the interval in ms since the start of the clone's run.
    pub end_ms: u64,
    /// Length in ms (the last one may be short).
    pub len_ms: u64,
    /// Reads, writes and trims (runs stored before trims have two).
    #[serde(deserialize_with = "three_dirs")]
    pub dirs: [IntervalDir; 3],
}

/// Reads an interval's directions: three, or the two of a run stored
/// before iolab trimmed.
fn three_dirs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[IntervalDir; 3], D::Error> {
    let mut v = Vec::<IntervalDir>::deserialize(d)?;
    if v.len() > 3 {
        return Err(serde::de::Error::invalid_length(
            v.len(),
            &"2 or 3 directions",
        ));
    }
    v.resize_with(3, IntervalDir::default);
    let [r, w, t] = <[IntervalDir; 3]>::try_from(v).expect("three");
    Ok([r, w, t])
}

/// Adds `b` into `a` interval by interval (clones that ran side by side).
pub fn merge_parallel(a: &mut Vec<Interval>, b: &[Interval]) {
    for (i, iv) in b.iter().enumerate() {
        if i == a.len() {
            a.push(Interval {
                end_ms: iv.end_ms,
                len_ms: iv.len_ms,
                ..Interval::default()
            });
        }
        let t = &mut a[i];
        t.end_ms = t.end_ms.max(iv.end_ms);
        t.len_ms = t.len_ms.max(iv.len_ms);
        for (a, b) in t.dirs.iter_mut().zip(&iv.dirs) {
            a.add(b);
        }
    }
}

/// Appends `b` after `a` (a later repetition), shifting its times.
pub fn append_sequential(a: &mut Vec<Interval>, b: &[Interval], offset_ms: u64) {
    a.extend(b.iter().map(|iv| Interval {
        end_ms: iv.end_ms + offset_ms,
        ..iv.clone()
    }));
}

#[derive(Default)]
struct Prev {
    ios: u64,
    bytes: u64,
    lat_sum: u128,
    clat_sum: u128,
    slat_sum: u128,
    counts: Vec<u64>,
}

/// Cuts the cumulative recorders into intervals of a fixed length.
pub struct Ticker {
    /// Intervals were asked for (a huge interval still closes one at the end).
    enabled: bool,
    interval_ns: u64,
    start_ns: u64,
    /// When the current interval ends (absolute ns).
    pub next_ns: u64,
    prev: [Prev; 3],
    /// Intervals closed so far.
    pub out: Vec<Interval>,
}

impl Ticker {
    /// A ticker of `interval_ms` starting at `start_ns`; `None` interval
    /// never ticks.
    pub fn new(interval_ms: Option<u64>, start_ns: u64) -> Ticker {
        // Saturating: a huge interval never ticks (it must not wrap to a
        // tiny one that fills memory with empty intervals).
        let interval_ns = interval_ms.map_or(u64::MAX, |ms| ms.max(1).saturating_mul(1_000_000));
        Ticker {
            enabled: interval_ms.is_some(),
            interval_ns,
            start_ns,
            next_ns: start_ns.saturating_add(interval_ns),
            prev: Default::default(),
            out: Vec::new(),
        }
    }

    /// Closes every interval that ended by `now` (call when `now >= next_ns`).
    pub fn tick(&mut self, now: u64, recs: &[DirRecorders; 3]) {
        while now >= self.next_ns {
            let end = self.next_ns;
            self.close(end, self.interval_ns, recs);
            self.next_ns = self.next_ns.saturating_add(self.interval_ns);
            // Only the first interval after a stall holds its I/Os; the
            // rest are empty.
        }
    }

    /// Closes the last, partial interval at `now`.
    pub fn finish(&mut self, now: u64, recs: &[DirRecorders; 3]) {
        if !self.enabled {
            return;
        }
        let begin = if self.next_ns == u64::MAX {
            self.start_ns // a huge interval: none closed before
        } else {
            self.next_ns - self.interval_ns
        };
        if now <= begin {
            return;
        }
        self.close(now, now - begin, recs);
        let n = self.out.len();
        let last = &self.out[n - 1];
        if last.dirs.iter().all(|d| d.ios == 0) {
            self.out.pop();
        } else if n >= 2 && last.end_ms <= self.out[n - 2].end_ms {
            // A sliver under 1 ms after the last boundary: part of the
            // interval before it.
            let last = self.out.pop().expect("n >= 2");
            let prev = &mut self.out[n - 2];
            for (a, b) in prev.dirs.iter_mut().zip(&last.dirs) {
                a.add(b);
            }
        }
    }

    fn close(&mut self, end: u64, len: u64, recs: &[DirRecorders; 3]) {
        let mut iv = Interval {
            end_ms: (end - self.start_ns) / 1_000_000,
            len_ms: (len / 1_000_000).max(1),
            ..Interval::default()
        };
        for (d, r) in recs.iter().enumerate() {
            let p = &mut self.prev[d];
            let o = &mut iv.dirs[d];
            o.ios = r.lat.count() - p.ios;
            o.bytes = r.bytes - p.bytes;
            o.lat_sum = r.lat.sum() - p.lat_sum;
            o.clat_sum = r.clat.sum() - p.clat_sum;
            o.slat_sum = r.slat.sum() - p.slat_sum;
            r.completion()
                .delta_since(&mut p.counts, &mut o.clat_buckets);
            p.ios = r.lat.count();
            p.bytes = r.bytes;
            p.lat_sum = r.lat.sum();
            p.clat_sum = r.clat.sum();
            p.slat_sum = r.slat.sum();
        }
        self.out.push(iv);
    }
}
