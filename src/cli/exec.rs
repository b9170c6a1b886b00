//! Running jobs for the commands that run several (`sweep`, `compare`):
//! a stop flag on Ctrl-C, and one quiet run of a job command line.

use iolab::runner::{self, RunOptions, RunResult, StopFlag};
use iolab::{Error, job};

/// A stop flag raised by SIGINT and SIGTERM.
pub fn stop_on_signals() -> Result<StopFlag, String> {
    let stop = StopFlag::new();
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.atomic())
            .map_err(|e| format!("cannot install signal handler: {e}"))?;
    }
    Ok(stop)
}

/// Why a run did not give a result: message and exit code.
pub type Failure = (String, i32);

/// Runs already-built jobs; warnings go to stderr. An interrupted run is a
/// failure with exit code 130.
pub fn run_jobs(jobs: Vec<job::JobSpec>, stop: &StopFlag) -> Result<RunResult, Failure> {
    let opts = RunOptions::default();
    let r = match runner::run(jobs, &opts, stop) {
        Ok(r) => r,
        Err(Error::Interrupted) => return Err(("interrupted".into(), 130)),
        Err(e @ (Error::Input(_) | Error::Refused(_))) => return Err((e.to_string(), 2)),
        Err(e) => return Err((e.to_string(), 1)),
    };
    for w in &r.warnings {
        eprintln!("iolab: warning: {w}");
    }
    if r.interrupted {
        return Err(("interrupted".into(), 130));
    }
    if let Some(e) = r.errors().into_iter().next() {
        return Err((e, 1));
    }
    Ok(r)
}
