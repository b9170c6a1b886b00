//! One scan of log-scan and what is read from its result: the job
//! ([`scan_job`]), its bandwidth ([`bw`]) and iostat's columns.

use crate::lab::arg;
use crate::runner::RunResult;

/// MiB/s of repetition `rep` of `r`.
pub(super) fn bw(r: &RunResult, rep: usize) -> f64 {
    let t = r.rep_totals(rep);
    t.bw_bytes(&t.read) / (1 << 20) as f64
}

/// A scan of `files` (`each` bytes each) with `bs` buffers, buffered or
/// O_DIRECT, twice: cold, then whatever the first pass left cached.
pub(super) fn scan_job(
    name: String,
    files: &[String],
    each: u64,
    bs: &str,
    direct: bool,
) -> Vec<String> {
    vec![
        arg("name", name),
        arg("filename", files.join(":")),
        arg("size", each * files.len() as u64),
        "--rw=read".into(),
        arg("bs", bs),
        arg("direct", u8::from(direct)),
        "--cache=keep".into(),
        "--repeat=2".into(),
    ]
}

/// iostat's columns the tables show, as the help promises.
pub(super) const IOSTAT_COLUMNS: [&str; 4] = ["r/s", "rareq-sz", "r_await", "%util"];

/// `v` with two decimals, as iostat prints.
pub(super) fn two(v: f64) -> String {
    format!("{v:.2}")
}

/// iostat's `key` for the first disk of the cold pass of `r`.
pub(super) fn iostat_value(r: &RunResult, key: &str) -> Option<f64> {
    r.repetitions[0]
        .counters
        .disks
        .first()
        .and_then(|d| d.iostat().get(key).copied())
}

/// iostat's `key` for the cold pass of `r`, two decimals (`-`: no disk).
pub(super) fn iostat(r: &RunResult, key: &str) -> String {
    iostat_value(r, key).map_or_else(|| "-".into(), two)
}
