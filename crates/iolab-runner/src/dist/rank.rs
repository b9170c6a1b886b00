//! One rank's part of a run on many hosts, the same under `iolab worker`
//! and under MPI: the job with the rank in its file names, its timed part
//! held at the caller's barrier, and what it measured with where it ran.

use crate::Result;
use crate::job::{self, JobSpec};
use crate::runner::{self, Observer, RunOptions, RunResult, StopFlag};
use crate::sys::environment::Environment;
use std::path::PathBuf;

/// What one rank measured, and where.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RankRun {
    /// Its run (its own clones and files).
    pub run: RunResult,
    /// Its machine and the storage of its files.
    pub env: Environment,
}

/// Runs `args` (the job arguments of `iolab run`) as rank `rank`; `barrier`
/// is told when the files are laid out and holds the timed part until
/// every rank is there.
pub fn run(
    args: &[String],
    rank: u32,
    stop: &StopFlag,
    barrier: &mut dyn Observer,
) -> Result<RankRun> {
    let jobs = with_rank(job::jobs_from_args_in(args, job::MAX_JOBS, &[])?, rank);
    let run = runner::run_with(
        jobs,
        &RunOptions::default(),
        stop,
        barrier,
        &mut runner::Quiet,
    )?;
    let files: Vec<PathBuf> = run.files.iter().flatten().flatten().cloned().collect();
    let env = Environment::capture(&files, crate::disk::state::injected_at);
    Ok(RankRun { run, env })
}

/// The warning of a rank stopped because another one finished first.
pub const STONEWALLED: &str = "stopped when the first rank finished (--stonewall-ranks): every rank measured the same interval";

/// Marks `run`, stopped early by `--stonewall-ranks`, as complete: the
/// stop was the plan, not an interruption.
pub fn stonewalled(run: &mut RunResult) {
    if run.interrupted {
        run.interrupted = false;
        run.warnings.push(STONEWALLED.into());
    }
}

/// The jobs with rank `rank` in every file name: `NAME.RANK` for given
/// files, `...$filenum.RANK` for generated ones, so ranks sharing a file
/// system never share a file.
pub fn with_rank(mut jobs: Vec<JobSpec>, rank: u32) -> Vec<JobSpec> {
    for j in &mut jobs {
        for f in &mut j.filenames {
            *f = format!("{f}.{rank}");
        }
        let format = j.files.filename_format.clone();
        let format = format.as_deref().unwrap_or("$jobname.$jobnum.$filenum");
        j.files.filename_format = Some(format!("{format}.{rank}"));
    }
    jobs
}
