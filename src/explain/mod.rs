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
pub mod explanation;
pub mod finding;
pub mod rules;

use crate::store::{Store, StoredRun};
use ceilings::Found;
use evidence::Evidence;
pub use explanation::Explanation;
pub use finding::Finding;

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
