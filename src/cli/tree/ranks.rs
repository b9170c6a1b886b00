//! `mpirun iolab tree ...`: every rank runs the tree command, in its own
//! directory (DIR/rank.R) or in one shared tree (`--shared-dir`); rank 0
//! shows and stores the merged result with a row per rank.

use super::args::{TreeArgs, TreeCmd};
use iolab::tree::create::CreateOptions;
use iolab::{Error, Result};

/// Runs `a` as one MPI rank of those `who` started.
pub fn execute(
    a: &TreeArgs,
    create: (Option<CreateOptions>, Option<u64>),
    who: &str,
) -> Result<()> {
    let shared = a.common.shared_dir;
    if shared && matches!(a.cmd, TreeCmd::Copy { .. }) {
        return Err(Error::usage(
            "--shared-dir",
            "tree copy runs a copy per rank (SRC/rank.R to DST/rank.R): leave out --shared-dir",
        ));
    }
    let stop = crate::cli::stop_on_signals()?;
    ranks(a, create, who, &stop)
}

#[cfg(not(feature = "mpi"))]
fn ranks(
    _: &TreeArgs,
    _: (Option<CreateOptions>, Option<u64>),
    who: &str,
    _: &iolab::runner::StopFlag,
) -> Result<()> {
    Err(iolab::dist::mpi::not_built(who).into())
}

#[cfg(feature = "mpi")]
fn ranks(
    a: &TreeArgs,
    (create, time_limit): (Option<CreateOptions>, Option<u64>),
    _who: &str,
    stop: &iolab::runner::StopFlag,
) -> Result<()> {
    use iolab::dist::trees::{self, rank_dir};
    use iolab::sys::environment::Environment;
    use iolab::tree::{self, TreeResult};
    use std::path::Path;
    let shared = a.common.shared_dir;
    let top = match &a.cmd {
        TreeCmd::Create { dir, .. }
        | TreeCmd::Walk { dir }
        | TreeCmd::Read { dir, .. }
        | TreeCmd::Remove { dir, .. } => dir.clone(),
        TreeCmd::Copy { src, .. } => src.clone(),
    };
    let ranks = iolab::dist::mpi::run_ranks(false, stop, |me, gate| {
        let at = |d: &Path| rank_dir(d, me.rank, shared);
        let mut create = create;
        if let (TreeCmd::Create { dir, .. }, true) = (&a.cmd, shared) {
            // Rank 0 prepares the shared top before the barrier; the others
            // make nothing in a directory that is not iolab's tree.
            if me.rank == 0 {
                tree::create::prepare_top(dir)?;
            }
            create = create.map(|o| CreateOptions {
                shared_rank: Some(me.rank),
                ..o
            });
        }
        gate.timed_start()?;
        if shared && !tree::mark::is_ours(&top) && matches!(a.cmd, TreeCmd::Create { .. }) {
            return Err(iolab::error::RunError::usage(
                "--shared-dir",
                format!("{} is not a tree rank 0 prepared", top.display()),
            ));
        }
        let t = match (&a.cmd, shared && me.rank != 0) {
            // One remover for a shared tree: rank 0.
            (TreeCmd::Remove { .. }, true) => TreeResult {
                command: "remove".into(),
                dir: top.clone(),
                ..Default::default()
            },
            _ => super::work::work(&a.cmd, &at, (create.as_ref(), time_limit), stop)?,
        };
        Ok((
            t,
            Environment::capture(&[at(&top)], iolab::disk::state::injected_at),
        ))
    })?;
    let Some(ranks) = ranks else { return Ok(()) };
    let (dist, failed) = trees::gather(ranks, &top)?;
    let c = &a.common;
    let text = iolab::render::hosts::tree(&dist, &c.output_format)?;
    crate::cli::write_out(&text, None)?;
    let stored = c
        .store
        .open()?
        .map(|mut st| {
            let id =
                st.insert_dist_tree(&dist, &crate::cli::db::command_line(), c.store.label())?;
            Ok(format!("stored as run {id} in {}", st.path().display()))
        })
        .transpose();
    match failed {
        Some(e) => Err(e.into()),
        None => super::work::conclude(&dist.tree, stored, stop),
    }
}
