//! Turning results into stored runs: the environment captured for their
//! files, the key figures computed, the result serialised.

use super::{NewRun, Status, Store, StoreError, StoreResult, kind};
use crate::dist::trees::DistTree;
use crate::dist::{DistRun, HostRun};
use crate::runner::RunResult;
use crate::sys::environment::Environment;
use crate::tree::{Stopped, TreeResult};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A sweep's id and the point's parameters.
type SweepPoint<'a> = (i64, &'a BTreeMap<String, String>);

impl Store {
    /// Stores an `iolab run` result (optionally as a sweep point); returns its id.
    pub fn insert_run(
        &mut self,
        result: &RunResult,
        command: &str,
        label: Option<&str>,
        sweep: Option<(i64, &BTreeMap<String, String>)>,
    ) -> StoreResult<i64> {
        self.insert_ranks(result, &[], command, (label, sweep))
    }

    /// Stores a run over many hosts (`run --hosts`, MPI): the merged run,
    /// and a row per host in `run_hosts`; returns its id.
    pub fn insert_dist_run(
        &mut self,
        d: &DistRun,
        command: &str,
        label: Option<&str>,
    ) -> StoreResult<i64> {
        self.insert_ranks(&d.run, &d.hosts, command, (label, None))
    }

    fn insert_ranks(
        &mut self,
        result: &RunResult,
        hosts: &[HostRun],
        command: &str,
        (label, sweep): (Option<&str>, Option<SweepPoint>),
    ) -> StoreResult<i64> {
        let files: Vec<PathBuf> = result.files.iter().flatten().flatten().cloned().collect();
        let env = Environment::capture(&files, crate::disk::state::injected_at);
        let summary = result.summary();
        let names: Vec<&str> = result.jobs.iter().map(|j| j.name.as_str()).collect();
        let json = serde_json::to_string(result).map_err(|e| encode("run result", e))?;
        self.insert(&NewRun {
            kind: kind::RUN,
            label,
            name: names.join(","),
            command: command.to_string(),
            env: &env,
            result_json: json,
            summary: &summary,
            sweep,
            source_json: None,
            hosts,
            status: match (result.interrupted, result.errors().is_empty()) {
                (true, _) => Status::Interrupted,
                (false, false) => Status::Failed,
                (false, true) => Status::Complete,
            },
        })
    }

    /// Stores an `iolab tree` result; returns its id.
    pub fn insert_tree(
        &mut self,
        t: &TreeResult,
        command: &str,
        label: Option<&str>,
    ) -> StoreResult<i64> {
        self.insert_tree_ranks(t, &[], command, label)
    }

    /// Stores an `iolab tree` result of many ranks (MPI), with a row per
    /// rank in `run_hosts`; returns its id.
    pub fn insert_dist_tree(
        &mut self,
        d: &DistTree,
        command: &str,
        label: Option<&str>,
    ) -> StoreResult<i64> {
        self.insert_tree_ranks(&d.tree, &d.hosts, command, label)
    }

    fn insert_tree_ranks(
        &mut self,
        t: &TreeResult,
        hosts: &[HostRun],
        command: &str,
        label: Option<&str>,
    ) -> StoreResult<i64> {
        let mut paths = vec![t.dir.clone()];
        paths.extend(t.dest.clone());
        let env = Environment::capture(&paths, crate::disk::state::injected_at);
        let summary = t.summary();
        let json = serde_json::to_string(t).map_err(|e| encode("tree result", e))?;
        self.insert(&NewRun {
            kind: kind::TREE,
            hosts,
            label,
            name: format!("tree {}", t.command),
            command: command.to_string(),
            env: &env,
            result_json: json,
            summary: &summary,
            sweep: None,
            source_json: None,
            status: Status::interrupted_if(matches!(t.stopped(), Some(Stopped::Interrupted))),
        })
    }
}

fn encode(what: &'static str, e: serde_json::Error) -> StoreError {
    StoreError::Encode {
        what,
        problem: e.to_string(),
    }
}
