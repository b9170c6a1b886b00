//! fio's "Run status group" block of the normal output: per reporting
//! group (`stonewall`, `new_group`), each direction's aggregate bandwidth,
//! the range of its entries' bandwidths, the bytes moved and the range of
//! runtimes, as fio's `show_group_stats`.

use crate::metrics::format::{bytes_iec, bytes_si};
use crate::runner::{OpStats, ReportEntry, Totals};
use std::fmt::Write;

/// One direction of the totals.
type Direction = fn(&Totals) -> &OpStats;

/// The block of reporting group `groupid`, whose entries are `entries`.
pub fn run_status(groupid: u32, entries: &[&ReportEntry]) -> String {
    let mut out = format!("\nRun status group {groupid} (all jobs):\n");
    let dirs: [(&str, Direction); 2] = [("   READ", |t| &t.read), ("  WRITE", |t| &t.write)];
    for (name, dir) in dirs {
        // Each entry that moved bytes this way: (bytes, runtime in ms,
        // rounded up as fio's update_runtime).
        let ran: Vec<(u64, u64)> = (entries.iter())
            .map(|e| (dir(&e.total).bytes, e.total.runtime_ns.div_ceil(1_000_000)))
            .filter(|(b, _)| *b > 0)
            .collect();
        let Some(max_run) = ran.iter().map(|r| r.1).max().filter(|m| *m > 0) else {
            continue;
        };
        let min_run = ran.iter().map(|r| r.1).min().unwrap_or(0);
        let io: u64 = ran.iter().map(|r| r.0).sum();
        let bw = |bytes: u64, ms: u64| (bytes * 1000).checked_div(ms).unwrap_or(0) as f64;
        let bws = ran.iter().map(|&(b, ms)| bw(b, ms));
        let min_bw = bws.clone().fold(f64::INFINITY, f64::min);
        let max_bw = bws.fold(0.0, f64::max);
        let agg = bw(io, max_run);
        let _ = writeln!(
            out,
            "{name}: bw={}/s ({}/s), {}/s-{}/s ({}/s-{}/s), io={} ({}), run={min_run}-{max_run}msec",
            bytes_iec(agg),
            bytes_si(agg),
            bytes_iec(min_bw),
            bytes_iec(max_bw),
            bytes_si(min_bw),
            bytes_si(max_bw),
            bytes_iec(io as f64),
            bytes_si(io as f64),
        );
    }
    out
}
