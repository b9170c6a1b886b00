//! `iolab run --hosts` and `mpirun iolab run`: the job on every host (rank)
//! at once; the merged run shown and stored like any run, with a table per
//! host.

use super::args::RunArgs;
use crate::cli::{Stderr, db, write_out};
use iolab::dist::{Coordinator, DistError, DistRun, Launch};
use iolab::runner::Progress;
use iolab::runner::StopFlag;
use iolab::store::Store;
use iolab::{Error, Result, render};
use std::time::Duration;

/// Runs the job on `args.hosts`; what they measured is printed and stored
/// even when a host failed (then the run is partial and the host's error
/// is the command's).
pub fn execute(
    args: &RunArgs,
    job_args: &[String],
    formats: &[&str],
    store: Option<&mut Store>,
    stop: &StopFlag,
) -> Result<()> {
    let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    let worker = match &args.worker_cmd {
        Some(w) => words(w),
        None => {
            let exe = std::env::current_exe()
                .map_err(|e| Error::io("cannot find iolab's own path for the worker", e))?;
            vec![exe.to_string_lossy().into_owned(), "worker".into()]
        }
    };
    if worker.is_empty() {
        return Err(Error::usage("--worker-cmd", "is empty"));
    }
    let launch = Launch {
        hosts: args.hosts.clone(),
        launcher: words(&args.launcher),
        worker,
        timeout: Duration::from_secs(120),
        silence: Duration::from_secs(10),
        stonewall: args.stonewall_ranks,
    };
    let (dist, failed) = Coordinator::start(launch)?.run(job_args, stop)?;
    show_and_store(args, formats, store, (dist, failed), stop)
}

/// `iolab run` started by an MPI launcher (`who`): every rank runs the job;
/// rank 0 alone shows and stores the merged run.
pub fn under_mpi(args: &RunArgs, job_args: &[String], formats: &[&str], who: &str) -> Result<()> {
    if !args.hosts.is_empty() {
        return Err(Error::usage(
            "--hosts",
            format!("this iolab was started by {who}: MPI starts the ranks, not --hosts"),
        ));
    }
    let stop = crate::cli::stop_on_signals()?;
    mpi_run(args, job_args, formats, who, &stop)
}

#[cfg(feature = "mpi")]
fn mpi_run(
    args: &RunArgs,
    job_args: &[String],
    formats: &[&str],
    _who: &str,
    stop: &StopFlag,
) -> Result<()> {
    match iolab::dist::mpi::run(job_args, args.stonewall_ranks, stop)? {
        Some((dist, failed)) => {
            let mut store = args.store.open()?;
            show_and_store(args, formats, store.as_mut(), (dist, failed), stop)
        }
        None => Ok(()),
    }
}

#[cfg(not(feature = "mpi"))]
fn mpi_run(_: &RunArgs, _: &[String], _: &[&str], who: &str, _: &StopFlag) -> Result<()> {
    Err(iolab::dist::mpi::not_built(who).into())
}

/// Prints the merged run and its hosts table, and stores it with a row per
/// host; a failed host's error is the command's.
fn show_and_store(
    args: &RunArgs,
    formats: &[&str],
    store: Option<&mut Store>,
    (dist, failed): (DistRun, Option<DistError>),
    stop: &StopFlag,
) -> Result<()> {
    let here = crate::cli::here_showing(formats, || Ok(render::here::run_files(&dist.run)))?;
    let text = formats
        .iter()
        .map(|f| render::hosts::run(&dist, f, &here))
        .collect::<Result<String>>()?;
    write_out(&text, args.output.as_deref())?;
    if let Some(st) = store {
        let id = st.insert_dist_run(&dist, &db::command_line(), args.store.label())?;
        if args.verbose || failed.is_some() {
            Stderr.step(&format!("stored as run {id} in {}", st.path().display()));
        }
    }
    match failed {
        Some(e) => Err(e.into()),
        None => Ok(dist.run.complete(stop).map(|_| ())?),
    }
}
