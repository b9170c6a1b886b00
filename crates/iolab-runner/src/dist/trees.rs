//! `iolab tree` on many ranks (under MPI), mdtest's two modes: each rank
//! in a directory of its own (`DIR/rank.R`, mdtest `-u`), or all ranks in
//! one shared tree (`--shared-dir`: every rank makes the same directories
//! and its own files, named `fN.R`). The ranks' results are made one:
//! phase by phase, operations merged exactly, counts added up.

use super::DistError;
use super::merge::{HostRun, start_skew_ns};
use super::mpi::ranked::{Ranked, first_error};
use crate::sys::environment::Environment;
use crate::tree::TreeResult;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Where rank `rank` works: `DIR/rank.R`, or DIR itself when shared.
pub fn rank_dir(dir: &Path, rank: u32, shared: bool) -> PathBuf {
    match shared {
        true => dir.to_path_buf(),
        false => dir.join(format!("rank.{rank}")),
    }
}

/// A tree command over several ranks.
#[derive(Debug, Clone)]
pub struct DistTree {
    /// The ranks' results made one.
    pub tree: TreeResult,
    /// Per rank.
    pub hosts: Vec<HostRun>,
}

impl DistTree {
    /// The spread of the ranks' start times (ns).
    pub fn start_skew_ns(&self) -> u64 {
        start_skew_ns(&self.hosts)
    }
}

/// What a rank sends: its tree result, and where it ran.
pub type RankTree = (TreeResult, Environment);

/// Rank 0 makes one tree result of every rank's, for `dir` (an error when
/// no rank has one).
pub fn gather(
    ranks: Vec<Ranked<RankTree>>,
    dir: &Path,
) -> Result<(DistTree, Option<DistError>), DistError> {
    let failed = first_error(&ranks);
    let mut hosts = Vec::new();
    let mut trees = Vec::new();
    for (r, k) in ranks.into_iter().enumerate() {
        let mut h = k.host(r);
        if let Ok((t, env)) = &k.outcome {
            h.tree_finished(t, Some(env.clone()));
        }
        hosts.push(h);
        trees.push(k.outcome.ok().map(|(t, _)| t));
    }
    let names: Vec<&str> = hosts.iter().map(|h| h.hostname.as_str()).collect();
    match merge(&trees, &names) {
        Some(mut tree) => {
            tree.dir = dir.to_path_buf();
            Ok((DistTree { tree, hosts }, failed))
        }
        None => Err(failed.unwrap_or_else(|| DistError::Usage {
            what: "MPI".into(),
            problem: "no rank sent results".into(),
        })),
    }
}

/// The ranks' results (rank order; `None`: a rank that has none) made one:
/// phase i of each rank added into phase i (operations merged bucket by
/// bucket, counts and CPU added, the longest time kept), the kernel's
/// counters once per machine (`hostnames`, by rank).
pub fn merge(trees: &[Option<TreeResult>], hostnames: &[&str]) -> Option<TreeResult> {
    let mut out = trees.iter().flatten().next()?.clone();
    out.threads = 0;
    for p in &mut out.phases {
        *p = crate::tree::Phase {
            name: p.name.clone(),
            ..Default::default()
        };
    }
    let mut machines = HashSet::new();
    for (r, t) in trees.iter().enumerate() {
        let Some(t) = t else { continue };
        let new_machine = machines.insert(hostnames.get(r).copied().unwrap_or_default());
        out.threads += t.threads;
        out.started_unix = out.started_unix.min(t.started_unix);
        for (into, p) in out.phases.iter_mut().zip(&t.phases) {
            for (op, h) in &p.ops {
                into.ops.entry(op.clone()).or_default().merge(h);
            }
            into.dirs += p.dirs;
            into.files += p.files;
            into.inodes_created += p.inodes_created;
            into.inodes_removed += p.inodes_removed;
            into.bytes += p.bytes;
            into.elapsed_ns = into.elapsed_ns.max(p.elapsed_ns);
            into.cpu.user_us += p.cpu.user_us;
            into.cpu.sys_us += p.cpu.sys_us;
            into.cpu.ctx += p.cpu.ctx;
            into.cpu.majf += p.cpu.majf;
            into.cpu.minf += p.cpu.minf;
            if new_machine {
                into.counters.add(&p.counters);
            }
            if into.stopped.is_none() {
                into.stopped = p.stopped.clone();
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::LatencyHistogram;
    use crate::tree::Phase;

    fn tree(ns: &[u64], elapsed: u64) -> TreeResult {
        let mut h = LatencyHistogram::new();
        ns.iter().for_each(|&n| h.record(n));
        TreeResult {
            command: "create".into(),
            threads: 1,
            phases: vec![Phase {
                name: "file create".into(),
                ops: [("create".to_string(), h)].into(),
                files: ns.len() as u64,
                inodes_created: ns.len() as u64,
                elapsed_ns: elapsed,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn phases_add_up_and_histograms_merge_exactly() {
        let a = tree(&[1_000, 2_000, 50_000], 10);
        let b = tree(&[2_000, 900_000], 30);
        let m = merge(&[Some(a.clone()), None, Some(b.clone())], &["x", "y", "x"]).unwrap();
        let p = &m.phases[0];
        assert_eq!((p.files, p.inodes_created, p.elapsed_ns), (5, 5, 30));
        assert_eq!(m.threads, 2);
        let mut want = a.phases[0].ops["create"].clone();
        want.merge(&b.phases[0].ops["create"]);
        assert_eq!(p.ops["create"].bins(), want.bins());
        assert_eq!(
            p.ops["create"].sum(),
            1_000 + 2_000 + 50_000 + 2_000 + 900_000
        );
    }
}
