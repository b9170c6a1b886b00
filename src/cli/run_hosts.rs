//! `iolab run --hosts`: the job on every host at once through a launcher;
//! the merged run shown and stored like any run, with a table per host.

use super::run::RunArgs;
use super::{Stderr, db, write_out};
use iolab::dist::{Coordinator, Launch};
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
    };
    let (dist, failed) = Coordinator::start(launch)?.run(job_args, stop)?;
    let mut text = formats
        .iter()
        .map(|f| render::run(&dist.run, f))
        .collect::<Result<String>>()?;
    if formats.contains(&"normal") {
        text.push_str(&render::hosts::hosts(&dist));
    }
    write_out(&text, args.output.as_deref())?;
    if let Some(st) = store {
        let id = st.insert_run(&dist.run, &db::command_line(), args.store.label(), None)?;
        if args.verbose || failed.is_some() {
            Stderr.step(&format!("stored as run {id} in {}", st.path().display()));
        }
    }
    match failed {
        Some(e) => Err(e.into()),
        None => dist.run.complete(stop).map(|_| ()),
    }
}
