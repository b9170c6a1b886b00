//! The ZFS ARC (`/proc/spl/kstat/zfs/arcstats`): hits, misses and the hit
//! ratio over an interval, for runs on ZFS (seeds 001 and 003).

use super::{Counter, Values};
use std::collections::BTreeMap;
use std::path::Path;

/// Where ZFS on Linux publishes the ARC counters.
pub const ARCSTATS: &str = "/proc/spl/kstat/zfs/arcstats";

/// Counters kept from the file.
pub const KEYS: &[&str] = &[
    "hits",
    "misses",
    "demand_data_hits",
    "demand_data_misses",
    "demand_metadata_hits",
    "demand_metadata_misses",
    "prefetch_data_hits",
    "prefetch_data_misses",
    "size",
    "c",
];

/// Parses the kstat text: a header line, a `name type data` line, then
/// one `name type value` line per counter.
pub fn parse(text: &str) -> Result<BTreeMap<String, u64>, KstatError> {
    let mut lines = text.lines();
    lines.next().ok_or(KstatError::Empty)?;
    let cols = lines.next().ok_or(KstatError::NoColumns)?;
    if !cols.split_whitespace().eq(["name", "type", "data"]) {
        return Err(KstatError::Columns(cols.to_string()));
    }
    let mut m = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() == 3 && KEYS.contains(&f[0]) {
            m.insert(
                f[0].to_string(),
                f[2].parse().map_err(|_| KstatError::Value(l.to_string()))?,
            );
        }
    }
    if !m.contains_key("hits") || !m.contains_key("misses") {
        return Err(KstatError::NoHits);
    }
    Ok(m)
}

/// Reads and parses `path`.
pub fn read(path: &Path) -> Result<BTreeMap<String, u64>, KstatError> {
    parse(&std::fs::read_to_string(path).map_err(KstatError::Read)?)
}

/// Why the kstat file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum KstatError {
    /// It cannot be read (ZFS not loaded).
    #[error("arcstats: {0}")]
    Read(std::io::Error),
    /// It is empty.
    #[error("empty arcstats")]
    Empty,
    /// The second line is missing.
    #[error("arcstats has no column line")]
    NoColumns,
    /// The second line is not `name type data`.
    #[error("arcstats: unexpected column line '{0}'")]
    Columns(String),
    /// A counter line whose value is not a number.
    #[error("arcstats: bad value in '{0}'")]
    Value(String),
    /// No `hits` or no `misses` line.
    #[error("arcstats: no hits/misses lines")]
    NoHits,
}

/// The ZFS ARC as a counter source: hits, misses and the other [`KEYS`];
/// `size` and `c` are levels. Derived: the hit ratio.
pub struct Arc;

impl Counter for Arc {
    fn label(&self) -> &'static str {
        "ZFS ARC"
    }

    fn source(&self) -> &'static str {
        ARCSTATS
    }

    fn read(&self) -> Option<Values> {
        read(Path::new(ARCSTATS)).ok()
    }

    fn levels(&self) -> &'static [&'static str] {
        &["size", "c"]
    }

    fn derived(&self, d: &Values) -> Vec<(&'static str, f64)> {
        vec![("hit_ratio", hit_ratio(d))]
    }

    fn line(&self, d: &Values) -> Option<String> {
        let g = |k: &str| d.get(k).copied().unwrap_or(0);
        Some(format!(
            "hits={}, misses={}, hit ratio {:.1}%",
            g("hits"),
            g("misses"),
            hit_ratio(d)
        ))
    }
}

/// hits / (hits + misses) in percent (0 with neither).
pub fn hit_ratio(d: &Values) -> f64 {
    let g = |k: &str| d.get(k).copied().unwrap_or(0);
    let t = g("hits") + g("misses");
    if t == 0 {
        0.0
    } else {
        100.0 * g("hits") as f64 / t as f64
    }
}
