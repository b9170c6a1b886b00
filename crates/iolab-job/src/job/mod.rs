//! The job description: fio job files and command lines (`ini`, `cmdline`),
//! values with fio's suffixes and arithmetic (`units`, `expr`), the table
//! of options (`options`, its types in `option_def`; groups of options in `groups/`), and the resolved, validated [`JobSpec`]
//! (`spec`, built by `apply`, checked by `validate`). Errors name the job
//! file and line or the argument, the option and what was expected.

pub mod apply;
pub mod cmdline;
pub mod error;
pub mod expr;
pub mod fio_names;
pub mod groups;
pub mod ini;
pub mod option_def;
pub mod options;
pub mod range;
pub mod spec;
pub mod units;
mod validate;

pub use apply::{build_jobs, check_clones, jobs_of_sections};
pub use error::{JobError, JobProblem, ValueError};
pub use range::{MAX_FILES, MAX_JOBS_LIMIT};

/// Most clones (threads) of all jobs together unless `iolab run
/// --max-jobs` says otherwise: fio's limit (`REAL_MAX_JOBS`).
pub const MAX_JOBS: u32 = 4096;

pub use spec::{CachePolicy, FadviseHint, JobSpec, LogSpec, Mix, Pattern};

/// Parses the job part of an `iolab run` command line (and the job files it
/// names) into validated jobs, with at most [`MAX_JOBS`] clones in all.
pub fn jobs_from_args(args: &[String]) -> Result<Vec<JobSpec>, JobError> {
    jobs_from_args_max(args, MAX_JOBS)
}

/// [`jobs_from_args`] with at most `max_jobs` clones in all (`--max-jobs`).
pub fn jobs_from_args_max(args: &[String], max_jobs: u32) -> Result<Vec<JobSpec>, JobError> {
    jobs_from_args_in(args, max_jobs, &[])
}

/// [`jobs_from_args_max`] with only the job sections named in `sections`
/// (all when empty), as fio's `--section`: `[global]` sections still
/// apply; a name no job has is an error.
pub fn jobs_from_args_in(
    args: &[String],
    max_jobs: u32,
    sections: &[String],
) -> Result<Vec<JobSpec>, JobError> {
    let mut cl = cmdline::parse(args)?;
    cl.sections = sections.to_vec();
    build_jobs(&cl, &ini::Vars::new(), max_jobs)
}

/// The lines fio's `--debug=parse` prints for the options of a command
/// line and the job files it names (those iolab prints: the steady-state
/// thresholds), in the order written.
pub fn parse_debug(args: &[String]) -> Result<Vec<String>, JobError> {
    let cl = cmdline::parse(args)?;
    let mut entries: Vec<ini::Entry> = cl.globals.clone();
    for file in &cl.files {
        for s in ini::parse_file(file, &ini::Vars::new())? {
            entries.extend(s.entries);
        }
    }
    entries.extend(cl.jobs.iter().flat_map(|s| s.entries.iter().cloned()));
    let pairs = entries
        .iter()
        .map(|e| (e.key.as_str(), e.value.as_deref().unwrap_or("")));
    Ok(groups::lifecycle::parse_debug(pairs))
}

/// [`jobs_from_args`] with variables that job files' `${VAR}` see ahead of
/// the environment (a sweep point).
pub fn jobs_from_args_with(args: &[String], vars: &ini::Vars) -> Result<Vec<JobSpec>, JobError> {
    let cl = cmdline::parse(args)?;
    build_jobs(&cl, vars, MAX_JOBS)
}
