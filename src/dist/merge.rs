//! The ranks' results made one run: every rank's clones side by side (a
//! job of `numjobs=N` on R ranks reports as N x R clones), histograms
//! merged exactly by the report as it merges clones, and a summary per
//! host.

use crate::runner::{RunResult, Totals};
use serde::{Deserialize, Serialize};

/// One host's (rank's) part of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostRun {
    /// Its rank (0-based, in the order of `--hosts`).
    pub rank: u32,
    /// The host as given to `--hosts`.
    pub host: String,
    /// Its host name, as it said.
    pub hostname: String,
    /// Its clock minus the coordinator's (ns; the midpoint estimate).
    pub clock_offset_ns: i64,
    /// When its timed part started, on the coordinator's clock (ns).
    pub started_ns: u64,
    /// All its clones and repetitions combined (`None`: it sent nothing).
    pub totals: Option<Totals>,
    /// How it ended when it did not send results.
    pub failed: Option<String>,
}

/// A run over several hosts.
#[derive(Debug, Clone)]
pub struct DistRun {
    /// The merged run (every rank's clones).
    pub run: RunResult,
    /// Per host, in rank order.
    pub hosts: Vec<HostRun>,
}

impl DistRun {
    /// The spread of the ranks' start times (ns): latest minus earliest,
    /// on the coordinator's clock.
    pub fn start_skew_ns(&self) -> u64 {
        let starts = self
            .hosts
            .iter()
            .filter(|h| h.totals.is_some())
            .map(|h| h.started_ns);
        match (starts.clone().min(), starts.max()) {
            (Some(a), Some(b)) => b - a,
            _ => 0,
        }
    }
}

/// Merges the ranks' runs (rank order; `None` for a rank that sent
/// nothing) into one: rank r's clone c of a job with N clones becomes
/// clone r x N + c. All runs come from one job, so their jobs agree.
pub fn merge(runs: &[Option<RunResult>]) -> Option<RunResult> {
    let ranks = runs.len() as u32;
    let first = runs.iter().flatten().next()?;
    let mut out = first.clone();
    out.interrupted = runs
        .iter()
        .any(|r| r.as_ref().is_none_or(|r| r.interrupted));
    for (j, job) in out.jobs.iter_mut().enumerate() {
        let n = first.jobs[j].numjobs;
        job.numjobs = n * ranks;
        out.files[j] = (0..ranks as usize)
            .flat_map(|r| match &runs[r] {
                Some(run) => run.files[j].clone(),
                None => vec![Vec::new(); n as usize],
            })
            .collect();
    }
    out.warnings = Vec::new();
    for rep in &mut out.repetitions {
        rep.clones.clear();
    }
    for (r, run) in runs.iter().enumerate() {
        let Some(run) = run else { continue };
        for w in &run.warnings {
            out.warnings.push(format!("rank {r}: {w}"));
        }
        for (i, rep) in run.repetitions.iter().enumerate() {
            let Some(into) = out.repetitions.get_mut(i) else {
                continue;
            };
            for c in &rep.clones {
                let mut c = c.clone();
                c.clone += r as u32 * first.jobs[c.job].numjobs;
                into.clones.push(c);
            }
        }
    }
    Some(out)
}

/// One rank's clones and repetitions combined.
pub fn totals(run: &RunResult) -> Totals {
    let mut all = Totals::default();
    for rep in &run.repetitions {
        let mut t = Totals::default();
        for c in &rep.clones {
            t.add_parallel(&c.totals);
        }
        all.add_sequential(&t);
    }
    all
}
