//! The ranks' results made one run: every rank's clones side by side (a
//! job of `numjobs=N` on R ranks reports as N x R clones), histograms
//! merged exactly by the report as it merges clones, and a summary per
//! host.

use crate::counters::CounterDelta;
use crate::metrics::figures::Figures;
use crate::runner::{RunResult, Totals};
use crate::sys::environment::Environment;
use crate::tree::TreeResult;
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
    /// What its kernel counted, per repetition (its disks, CPU, memory).
    #[serde(default)]
    pub counters: Vec<CounterDelta>,
    /// Where it ran: its machine and the storage of its files.
    #[serde(default)]
    pub env: Option<Environment>,
    /// Its key figures (`ops`, `iops`, `time_s`, ... as stored runs have).
    #[serde(default)]
    pub figures: Option<Figures>,
}

impl HostRun {
    /// A rank that has said nothing yet.
    pub fn new(rank: u32, host: &str) -> HostRun {
        HostRun {
            rank,
            host: host.into(),
            hostname: String::new(),
            clock_offset_ns: 0,
            started_ns: 0,
            totals: None,
            failed: None,
            counters: Vec::new(),
            env: None,
            figures: None,
        }
    }

    /// Keeps what the rank measured: its totals and counters, and where it ran.
    pub fn finished(&mut self, run: &RunResult, env: Option<Environment>) {
        self.totals = Some(totals(run));
        self.counters = run.repetitions.iter().map(|r| r.counters.clone()).collect();
        self.env = env;
        self.figures = Some(run.summary().total);
    }

    /// Keeps what the rank did to its tree: figures, counters per phase,
    /// and where it ran.
    pub fn tree_finished(&mut self, t: &TreeResult, env: Option<Environment>) {
        self.counters = t.phases.iter().map(|p| p.counters.clone()).collect();
        self.env = env;
        self.figures = Some(t.summary().total);
    }
}

/// Each host's start after the earliest host's (ns; `None` for a host
/// that sent no results).
pub fn start_offsets(hosts: &[HostRun]) -> Vec<Option<u64>> {
    let ok = || hosts.iter().filter(|h| h.figures.is_some());
    let first = ok().map(|h| h.started_ns).min();
    (hosts.iter())
        .map(|h| h.figures.as_ref().and(first).map(|f| h.started_ns - f))
        .collect()
}

/// The spread of the hosts' start times (ns): latest minus earliest.
pub fn start_skew_ns(hosts: &[HostRun]) -> u64 {
    start_offsets(hosts)
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0)
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
        start_skew_ns(&self.hosts)
    }
}

/// Merges the ranks' runs (rank order; `None` for a rank that sent
/// nothing) into one: rank r's clone c of a job with N clones becomes
/// clone r x N + c. All runs come from one job, so their jobs agree. The
/// kernel's counters are added up once per machine (`hostnames`, by rank):
/// ranks sharing a machine saw the same disks.
pub fn merge(runs: &[Option<RunResult>], hostnames: &[String]) -> Option<RunResult> {
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
        rep.counters = CounterDelta::default();
        rep.cache_before.iter_mut().for_each(Vec::clear);
        rep.cache_after.iter_mut().for_each(Vec::clear);
    }
    let mut machines = std::collections::HashSet::new();
    for (r, run) in runs.iter().enumerate() {
        let Some(run) = run else { continue };
        for w in &run.warnings {
            out.warnings.push(format!("rank {r}: {w}"));
        }
        let new_machine = machines.insert(hostnames.get(r).cloned().unwrap_or_default());
        for (i, rep) in run.repetitions.iter().enumerate() {
            let Some(into) = out.repetitions.get_mut(i) else {
                continue;
            };
            if new_machine {
                into.counters.add(&rep.counters);
            }
            for (j, files) in rep.cache_before.iter().enumerate() {
                if let Some(v) = into.cache_before.get_mut(j) {
                    v.extend(files.iter().cloned());
                }
            }
            for (j, files) in rep.cache_after.iter().enumerate() {
                if let Some(v) = into.cache_after.get_mut(j) {
                    v.extend(files.iter().cloned());
                }
            }
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
