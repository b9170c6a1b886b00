//! dtrace's `quantize()` picture of a histogram: one row per power of two,
//! 40 `@` for the whole population.

use crate::metrics::LatencyHistogram;
use std::fmt::Write;

/// Renders `h` under the title `title` (e.g. "read latency (ns)").
pub fn render(title: &str, h: &LatencyHistogram) -> String {
    buckets(title, &h.log2_buckets())
}

/// Renders log2 buckets given as (lower bound, count) under `title`.
pub fn buckets(title: &str, buckets: &[(u64, u64)]) -> String {
    let mut out = String::new();
    if buckets.is_empty() {
        return out;
    }
    let total: u64 = buckets.iter().map(|b| b.1).sum();
    let _ = writeln!(out, "  {title}");
    let _ = writeln!(
        out,
        "  {:>14}  ------------- Distribution ------------- count",
        "value"
    );
    for &(value, count) in buckets {
        let n = if total == 0 {
            0
        } else {
            ((count as f64 * 40.0 / total as f64).round() as usize).min(40)
        };
        let _ = writeln!(out, "  {:>14} |{:<40} {}", value, "@".repeat(n), count);
    }
    out
}
