//! Explaining a comparison: which evidence changed most between a base
//! run and another, and so accounts for the difference in speed (fewer
//! device reads, a higher hit ratio, latency moved to fadvise, a deeper
//! queue, less CPU per I/O), with each side's dominant limit.

use super::explanation::{Explanation, capital};
use super::finding::{fig, pct, us};
use serde::Serialize;

/// One piece of evidence that changed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Change {
    /// What changed (`device-reads`).
    pub what: &'static str,
    /// How much it accounts for: the factor it changed by (≥ 1).
    pub factor: f64,
    /// The claim, with both figures.
    pub text: String,
}

/// Why run B went as it did against run A.
#[derive(Debug, Clone, Serialize)]
pub struct DiffExplanation {
    /// The base run's explanation.
    pub a: Explanation,
    /// The other run's.
    pub b: Explanation,
    /// B's IOPS over A's.
    pub speedup: f64,
    /// The evidence that changed, the largest change first.
    pub changes: Vec<Change>,
}

impl DiffExplanation {
    /// The comparison in a few sentences.
    pub fn sentences(&self) -> Vec<String> {
        let (a, b) = (&self.a, &self.b);
        let name = |e: &Explanation| e.name.clone();
        let mut out = vec![format!(
            "{} is {:.2}× {} ({} IOPS against {}).",
            capital(&name(b)),
            if self.speedup >= 1.0 {
                self.speedup
            } else {
                1.0 / self.speedup
            },
            if self.speedup >= 1.0 {
                "faster"
            } else {
                "slower"
            },
            fig(b.evidence.iops),
            fig(a.evidence.iops)
        )];
        if let Some(c) = self.changes.first() {
            out.push(format!("The difference: {}.", c.text));
        }
        for c in self.changes.iter().skip(1).filter(|c| c.factor >= 1.5) {
            out.push(format!("Also: {}.", c.text));
        }
        for e in [a, b] {
            if !e.limit.is_empty() {
                out.push(format!("{} is limited by {}.", capital(&name(e)), e.limit));
            }
        }
        out
    }
}

/// The factor between two positive figures (≥ 1), 1 when either is 0.
fn factor(x: f64, y: f64) -> f64 {
    if x <= 0.0 || y <= 0.0 {
        return 1.0;
    }
    (x / y).max(y / x)
}

/// Explains B against A.
pub fn explain_diff(a: Explanation, b: Explanation) -> DiffExplanation {
    let (ea, eb) = (&a.evidence, &b.evidence);
    let speedup = match ea.iops > 0.0 {
        true => eb.iops / ea.iops,
        false => 1.0,
    };
    let mut changes = Vec::new();
    // Device reads per read: the cache (or readahead) saved trips.
    let (ra, rb) = (ea.device_reads_per_read(), eb.device_reads_per_read());
    if ea.dev_reads + eb.dev_reads > 0 {
        let fewer = 1.0 - eb.dev_reads as f64 / ea.dev_reads.max(1) as f64;
        changes.push(Change {
            what: "device-reads",
            // A side with none: as if one read in the run.
            factor: factor(
                ra.max(0.5 / ea.reads.max(1) as f64),
                rb.max(0.5 / eb.reads.max(1) as f64),
            ),
            text: if eb.dev_reads <= ea.dev_reads {
                format!(
                    "{}% fewer device reads ({} → {}; {} → {} per read)",
                    pct(fewer),
                    ea.dev_reads,
                    eb.dev_reads,
                    us(ra),
                    us(rb)
                )
            } else {
                format!(
                    "{:.1}× as many device reads ({} → {}; {} → {} per read)",
                    eb.dev_reads as f64 / ea.dev_reads.max(1) as f64,
                    ea.dev_reads,
                    eb.dev_reads,
                    us(ra),
                    us(rb)
                )
            },
        });
    }
    // Prefetch: the reads' waits moved to fadvise.
    if eb.advises > 0 && ea.advises == 0 && eb.lat_p50_us > 0.0 {
        changes.push(Change {
            what: "latency-moved-to-fadvise",
            factor: factor(ea.lat_p50_us, eb.lat_p50_us) * 1.01,
            text: format!(
                "the device latency moved from pread to fadvise: pread p50 {} µs → {} µs, while \
                 fadvise(WILLNEED) calls waited {} µs at the median",
                us(ea.lat_p50_us),
                us(eb.lat_p50_us),
                us(eb.advise_p50_us)
            ),
        });
    }
    if ea.lat_mean_us > 0.0 && eb.lat_mean_us > 0.0 {
        changes.push(Change {
            what: "latency",
            // Mostly the effect of the others: first only when they moved
            // less than half as much.
            factor: factor(ea.lat_mean_us, eb.lat_mean_us) * 0.5,
            text: format!(
                "the mean latency went {} µs → {} µs",
                us(ea.lat_mean_us),
                us(eb.lat_mean_us)
            ),
        });
    }
    if ea.depth_achieved > 0.0 && eb.depth_achieved > 0.0 {
        changes.push(Change {
            what: "depth",
            factor: factor(ea.depth_achieved, eb.depth_achieved),
            text: format!(
                "the queue ran {:.1} → {:.1} deep",
                ea.depth_achieved, eb.depth_achieved
            ),
        });
    }
    let cpu_per = |e: &super::evidence::Evidence| {
        let ops = (e.reads + e.writes) as f64;
        (ops > 0.0).then(|| (e.cpu_user_s + e.cpu_sys_s) * 1e6 / ops)
    };
    if let (Some(x), Some(y)) = (cpu_per(ea), cpu_per(eb)) {
        changes.push(Change {
            what: "cpu-per-io",
            factor: factor(x, y) * 0.98,
            text: format!("CPU per I/O went {} µs → {} µs", us(x), us(y)),
        });
    }
    if let (Some(x), Some(y)) = (ea.cached_before, eb.cached_before)
        && (x - y).abs() >= 0.05
    {
        changes.push(Change {
            what: "cached-before",
            factor: factor(x.max(0.001), y.max(0.001)),
            text: format!(
                "the file was {}% → {}% cached as the run started",
                pct(x),
                pct(y)
            ),
        });
    }
    changes.sort_by(|x, y| y.factor.total_cmp(&x.factor));
    DiffExplanation {
        a,
        b,
        speedup,
        changes,
    }
}
