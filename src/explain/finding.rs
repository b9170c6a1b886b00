//! What a rule found, and the number formats the claims use.

use serde::Serialize;
use std::collections::BTreeMap;

/// One rule's finding: the limit it names, how much of the run it
/// accounts for, the claim with its figures.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Finding {
    /// The rule (`device-latency`).
    pub rule: &'static str,
    /// The limit in words (`device latency`).
    pub limit: &'static str,
    /// How much of the run it accounts for: the share of the threads'
    /// time (0-1), above 1 for limits that override the others (an error,
    /// a rate the job set, saturated CPUs).
    pub weight: f64,
    /// The claim, with its figures.
    pub text: String,
    /// The figures the claim cites, by name.
    pub figures: BTreeMap<&'static str, f64>,
}

impl Finding {
    /// A finding of `rule`.
    pub fn new(rule: &'static str, limit: &'static str, weight: f64, text: String) -> Finding {
        Finding {
            rule,
            limit,
            weight,
            text,
            figures: BTreeMap::new(),
        }
    }

    /// With one more figure.
    pub fn with(mut self, name: &'static str, v: f64) -> Finding {
        self.figures.insert(name, v);
        self
    }
}

/// A count or rate with thousands grouped, 3 significant figures below 100.
pub fn fig(v: f64) -> String {
    crate::render::table::fig(v)
}

/// Microseconds: 3 significant figures.
pub fn us(v: f64) -> String {
    match v {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v if v >= 1.0 => format!("{v:.2}"),
        v => format!("{v:.3}"),
    }
}

/// A share as a percentage, no decimals (one under 10%).
pub fn pct(share: f64) -> String {
    let p = share * 100.0;
    match p < 10.0 {
        true => format!("{p:.1}"),
        false => format!("{p:.0}"),
    }
}

/// Bytes per second in MiB/s.
pub fn mib(bytes_per_s: f64) -> String {
    us(bytes_per_s / 1048576.0)
}
