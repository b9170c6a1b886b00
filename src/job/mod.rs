//! The job description: fio job files and command lines (`ini`, `cmdline`),
//! values with fio's suffixes and arithmetic (`units`, `expr`), the table
//! of options (`options`), and the resolved, validated [`JobSpec`]
//! (`spec`, built by `apply`, checked by `validate`). Errors name the job
//! file and line or the argument, the option and what was expected.

pub mod apply;
pub mod cmdline;
pub mod error;
pub mod expr;
pub mod ini;
pub mod options;
pub mod spec;
pub mod units;
mod validate;

pub use apply::build_jobs;
pub use error::{JobError, JobProblem, ValueError};
/// Most files one job may name: an I/O names its file by a 16-bit index
/// ([`crate::plan::IoUnit::file`]).
pub const MAX_FILES: usize = u16::MAX as usize + 1;

pub use spec::{CachePolicy, FadviseHint, JobSpec, LogSpec, Mix, Pattern};

/// Parses the job part of an `iolab run` command line (and the job files it
/// names) into validated jobs.
pub fn jobs_from_args(args: &[String]) -> Result<Vec<JobSpec>, JobError> {
    jobs_from_args_with(args, &ini::Vars::new())
}

/// [`jobs_from_args`] with variables that job files' `${VAR}` see ahead of
/// the environment (a sweep point).
pub fn jobs_from_args_with(args: &[String], vars: &ini::Vars) -> Result<Vec<JobSpec>, JobError> {
    let cl = cmdline::parse(args)?;
    build_jobs(&cl, vars)
}
