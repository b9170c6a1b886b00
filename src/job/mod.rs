//! Job input: fio job files and command lines, expressions, validation.

pub mod cmdline;
pub mod expr;
pub mod ini;
pub mod job;
pub mod options;
pub mod units;

pub use job::{CachePolicy, EngineKind, FadviseHint, JobSpec, Mix, Pattern, build_jobs};

/// Parses the job part of an `iolab run` command line (and the job files it
/// names) into validated jobs.
pub fn jobs_from_args(args: &[String]) -> Result<Vec<JobSpec>, String> {
    let cl = cmdline::parse(args)?;
    build_jobs(&cl)
}
