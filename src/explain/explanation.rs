//! What `explain` says of a run: its dominant limit, every finding, the
//! ceilings used and the evidence read.

use super::ceilings::Found;
use super::evidence::Evidence;
use super::finding::Finding;
use serde::Serialize;

/// Why a run went as it did.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// The stored run explained.
    pub run: Option<i64>,
    /// What it is called in sentences (`run 12`, `pass 1`).
    pub name: String,
    /// The dominant limit, in words (`device latency`); "" when no rule
    /// applies.
    pub limit: String,
    /// Its rule (`device-latency`).
    pub rule: String,
    /// Every finding, the dominant first.
    pub findings: Vec<Finding>,
    /// The ceilings used and what was left out.
    pub ceilings: Found,
    /// The evidence the rules read.
    pub evidence: Evidence,
}

impl Explanation {
    /// The explanation in a few sentences: the dominant limit's claim, the
    /// other findings that account for a fifth of the run or more, and
    /// what was left out.
    pub fn sentences(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self.findings.first() {
            Some(f) => out.push(format!("Dominant limit: {}.", capital(&f.text))),
            None => out
                .push("No rule applies: the run did no I/O that the rules can account for.".into()),
        }
        for f in self.findings.iter().skip(1).filter(|f| f.weight >= 0.2) {
            out.push(format!("Also: {}.", f.text));
        }
        out.extend(self.ceilings.notes.iter().map(|n| format!("Note: {n}.")));
        out
    }

    /// One sentence: what it is called and its dominant limit's claim.
    pub fn headline(&self) -> String {
        match self.findings.first() {
            Some(f) => format!("{}: {}.", capital(&self.name), f.text),
            None => format!("{}: no rule applies.", capital(&self.name)),
        }
    }

    /// The finding of `rule`, if it applied.
    pub fn finding(&self, rule: &str) -> Option<&Finding> {
        self.findings.iter().find(|f| f.rule == rule)
    }
}

impl Explanation {
    /// The same, called `name` in sentences.
    pub fn named(mut self, name: impl Into<String>) -> Explanation {
        self.name = name.into();
        self
    }
}

/// `s` with its first letter in capitals.
pub fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
