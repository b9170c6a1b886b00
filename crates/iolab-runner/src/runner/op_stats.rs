//! What one direction (reads, writes or trims) measured: latencies, bytes,
//! runtime, and latencies per I/O priority.

use crate::metrics::LatencyHistogram;
use serde::{Deserialize, Serialize};

/// Latencies and bytes of one direction.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OpStats {
    /// Total latency of every I/O (queued to completed; for synchronous
    /// engines this is also the completion latency).
    pub lat: LatencyHistogram,
    /// Completion latency (submitted to completed); empty for synchronous
    /// engines.
    pub clat: LatencyHistogram,
    /// Submission latency (queued to submitted); empty for synchronous
    /// engines.
    pub slat: LatencyHistogram,
    /// Bytes transferred.
    pub bytes: u64,
    /// fio's runtime of this direction in ns (the passes that issued it; for
    /// reads also the verify phases); `None` in older runs: the whole one.
    #[serde(default)]
    pub busy_ns: Option<u64>,
    /// Latencies per I/O priority, with `cmdprio_*` (fio's `prios`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prios: Vec<super::prios::PrioStats>,
}

impl OpStats {
    /// Number of I/Os.
    pub fn ios(&self) -> u64 {
        self.lat.count()
    }

    /// fio's `clat_ns`: the completion latency, which is the total latency
    /// for synchronous engines.
    pub fn clat_or_lat(&self) -> &LatencyHistogram {
        if self.clat.count() > 0 {
            &self.clat
        } else {
            &self.lat
        }
    }

    /// Adds `o`'s I/Os (another clone's, or another direction's).
    pub fn merge(&mut self, o: &OpStats) {
        self.lat.merge(&o.lat);
        self.clat.merge(&o.clat);
        self.slat.merge(&o.slat);
        self.bytes += o.bytes;
        super::prios::merge(&mut self.prios, &o.prios);
    }
}
