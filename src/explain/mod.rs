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

#[cfg(test)]
mod tests {
    use super::*;

    /// The evidence of tests/explain.rs's tiny cached reads on a machine
    /// where another process read from the disk during the run: the file
    /// was wholly cached, so those reads were not the run's (its rule had
    /// been "readahead", 100 device reads "for" 200,000 cached reads).
    #[test]
    fn device_reads_of_others_during_a_cached_run_are_not_its_own() {
        let e = Evidence {
            engine: "psync".into(),
            io_size: 50.0,
            iodepth: 1,
            threads: 1,
            cpus: 2,
            reads: 200_000,
            read_bytes: 10_000_000,
            runtime_s: 0.15,
            iops: 1_333_744.0,
            lat_mean_us: 0.48,
            lat_p50_us: 0.375,
            depth_achieved: 0.64,
            dev_reads: 100,
            dev_read_bytes: 868_352,
            dev_read_wait_us: 660.0,
            dev_writes: 22,
            dev_busy_s: 0.004,
            cached_before: Some(1.0),
            cpu_user_s: 0.058,
            cpu_sys_s: 0.087,
            ..Evidence::default()
        };
        assert!(e.device_reads_foreign());
        let x = explain(e.clone(), Found::default(), None);
        assert_eq!(x.rule, "per-call", "{x:?}");
        // Without the whole file cached they could be its own.
        let partly = Evidence {
            cached_before: Some(0.5),
            ..e
        };
        assert!(!partly.device_reads_foreign());
        assert_ne!(explain(partly, Found::default(), None).rule, "per-call");
    }
}
