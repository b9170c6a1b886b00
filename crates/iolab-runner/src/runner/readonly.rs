//! fio's `--readonly`: a safety net that refuses, before anything is
//! opened, every job that would change a file: a direction that writes or
//! trims, an
//! engine that changes files even to read (`filedelete`, `ftruncate`,
//! `falloc`), a file to lay out or extend, `unlink`, and the syncs (`fsync`,
//! `fdatasync`, `end_fsync`, `fsync_on_close`).

use super::layout;
use crate::error::{Error, Result};
use crate::job::JobSpec;

/// Refuses the first job (or file) of `jobs` that would write, naming the
/// job and the option, or the file and what would be done to it.
pub fn check(jobs: &[JobSpec]) -> Result<()> {
    for job in jobs {
        if let Some(option) = writing_option(job) {
            let path = layout::clone_paths(job, 0).into_iter().next();
            return Err(Error::refused(
                path.unwrap_or_default(),
                format!(
                    "job '{}': option '{option}' writes, and --readonly refuses every write (as fio)",
                    job.name
                ),
            ));
        }
    }
    for need in layout::needs(jobs) {
        let done = match std::fs::metadata(&need.path) {
            Err(_) => "lay out (create) the missing file",
            Ok(m) if m.is_file() && need.len.is_some_and(|l| l > m.len()) => {
                "extend the file to the job's size"
            }
            Ok(_) => continue,
        };
        return Err(Error::refused(
            need.path.clone(),
            format!(
                "job '{}': --readonly refuses to {done} {} (as fio); lay it out without --readonly first",
                need.job,
                need.path.display()
            ),
        ));
    }
    Ok(())
}

/// The option that makes `job` write (`rw=write`, `unlink`, `fsync`, ...).
fn writing_option(job: &JobSpec) -> Option<String> {
    let f = &job.files;
    [
        (job.writes() || job.trims(), format!("rw={}", job.rw_name())),
        // Engines whose reads change the file (falloc, ftruncate, filedelete).
        (job.changes_files(), format!("ioengine={}", job.engine)),
        (job.unlink, "unlink".into()),
        (job.fsync > 0, format!("fsync={}", job.fsync)),
        (f.fdatasync > 0, format!("fdatasync={}", f.fdatasync)),
        (f.end_fsync, "end_fsync".into()),
        (f.fsync_on_close, "fsync_on_close".into()),
    ]
    .into_iter()
    .find_map(|(on, name)| on.then_some(name))
}
