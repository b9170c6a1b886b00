//! The ZFS ARC (`/proc/spl/kstat/zfs/arcstats`): hits, misses and the hit
//! ratio over an interval, for runs on ZFS (seeds 001 and 003).

use serde::{Deserialize, Serialize};
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

fn arcstats_source() -> &'static str {
    ARCSTATS
}

/// ARC activity over an interval.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ArcDelta {
    /// Always the arcstats path.
    #[serde(skip_deserializing, default = "arcstats_source")]
    pub source: &'static str,
    /// Hits.
    pub hits: u64,
    /// Misses.
    pub misses: u64,
    /// hits / (hits + misses), in percent.
    pub hit_ratio: f64,
    /// Deltas of the other counters (sizes: the later value).
    pub counters: BTreeMap<String, u64>,
}

/// The change from `a` to `b`.
pub fn delta(a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> ArcDelta {
    let d = |k: &str| {
        b.get(k)
            .unwrap_or(&0)
            .saturating_sub(*a.get(k).unwrap_or(&0))
    };
    let counters = b
        .iter()
        .map(|(k, v)| {
            let v = if k == "size" || k == "c" { *v } else { d(k) };
            (k.clone(), v)
        })
        .collect();
    let mut out = ArcDelta {
        source: ARCSTATS,
        hits: d("hits"),
        misses: d("misses"),
        hit_ratio: 0.0,
        counters,
    };
    out.ratio();
    out
}

impl ArcDelta {
    fn ratio(&mut self) {
        let t = self.hits + self.misses;
        self.hit_ratio = if t == 0 {
            0.0
        } else {
            100.0 * self.hits as f64 / t as f64
        };
    }

    /// Adds a later interval.
    pub fn add(&mut self, o: &ArcDelta) {
        self.hits += o.hits;
        self.misses += o.misses;
        for (k, v) in &o.counters {
            let e = self.counters.entry(k.clone()).or_insert(0);
            if k == "size" || k == "c" {
                *e = *v;
            } else {
                *e += v;
            }
        }
        self.ratio();
    }
}
