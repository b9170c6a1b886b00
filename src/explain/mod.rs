//! `iolab explain`: why a run went as it did, from its own stored evidence
//! ([`evidence::Evidence`]) held against this machine's ceilings
//! ([`ceilings`], measured by [`calibrate`]). Each rule of
//! [`rules::RULES`] that sees its limit at work returns a finding with the
//! share of the run it accounts for; the largest names the dominant limit.
//! A comparison ([`diff`]) says which evidence changed most between two
//! runs. Returns data; `cli/explain.rs` renders it.

pub mod calibrate;
pub mod ceilings;
pub mod diff;
pub mod evidence;
pub mod finding;
pub mod rules;

use crate::store::{Store, StoredRun};
use ceilings::Found;
use evidence::Evidence;
pub use finding::Finding;
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

/// Explains `e` against the ceilings `found`.
pub fn explain(e: Evidence, found: Found, run: Option<i64>) -> Explanation {
    let c = found.ceilings.as_ref();
    let mut findings: Vec<Finding> = (rules::RULES.iter())
        .filter_map(|r| r.item.judge(&e, c, found.device))
        .collect();
    // Stable: ties keep the registry's order.
    findings.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    let (limit, rule) = match findings.first() {
        Some(f) if f.weight > 0.0 => (f.limit.to_string(), f.rule.to_string()),
        _ => (String::new(), String::new()),
    };
    Explanation {
        run,
        name: run.map_or_else(|| "the run".into(), |i| format!("run {i}")),
        limit,
        rule,
        findings,
        ceilings: found,
        evidence: e,
    }
}

impl Explanation {
    /// The same, called `name` in sentences.
    pub fn named(mut self, name: impl Into<String>) -> Explanation {
        self.name = name.into();
        self
    }
}

/// The evidence of a stored `iolab run`, or why it has none.
pub fn evidence_of(run: &StoredRun) -> crate::Result<Evidence> {
    match run.kind.as_str() {
        crate::store::kind::RUN => Ok(Evidence::of_run(&run.result()?, &run.env)),
        crate::store::kind::TREE => Ok(Evidence::of_tree(&run.tree_result()?, &run.env)),
        crate::store::kind::EXEC => {
            Ok(Evidence::of_exec(&crate::exec::store::load(run)?, &run.env))
        }
        k => Err(crate::Error::usage(
            format!("run {}", run.id),
            format!(
                "it is a stored {k}: explain reads the evidence of `iolab run`, `tree` and `exec` \
                 results (and the labs' runs), which a {k} does not have"
            ),
        )),
    }
}

/// Explains stored run `id` against the ceilings stored for its machine.
pub fn explain_stored(store: &Store, id: i64) -> crate::Result<Explanation> {
    let run = store.run(id)?;
    let e = evidence_of(&run)?;
    let found = ceilings::find(store, &run.env)?;
    Ok(explain(e, found, Some(id)))
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
