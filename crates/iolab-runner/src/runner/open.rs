//! Step 3 of a repetition: a clone's files opened once, with the job's
//! flags and `fadvise_hint`, checked here so a problem is an error before
//! any thread starts (the clone takes these very descriptors over).

use super::layout::CloneFile;
use super::prepare::reopen_same;
use crate::error::{Error, Result};
use crate::job::{FadviseHint, JobError, JobSpec, Pattern};
use std::fs::File;
use std::os::fd::AsRawFd;

/// How a job opens its files.
#[derive(Debug, Clone, Copy)]
pub struct OpenSpec {
    /// Open read-write (the job writes).
    pub writable: bool,
    /// O_DIRECT.
    pub direct: bool,
    /// `posix_fadvise` advice given right after open.
    pub hint: Option<libc::c_int>,
    /// `O_SYNC` or `O_DSYNC` for a job that writes (fio's `sync`).
    pub sync: libc::c_int,
}

impl OpenSpec {
    /// The open flags and hint of `job`.
    pub fn of(job: &JobSpec) -> OpenSpec {
        let hint = match (job.fadvise_hint, job.pattern) {
            (FadviseHint::None, _) => None,
            (FadviseHint::ByPattern, Pattern::Random) | (FadviseHint::Random, _) => {
                Some(libc::POSIX_FADV_RANDOM)
            }
            (FadviseHint::ByPattern, Pattern::Sequential) | (FadviseHint::Sequential, _) => {
                Some(libc::POSIX_FADV_SEQUENTIAL)
            }
            (FadviseHint::NoReuse, _) => Some(libc::POSIX_FADV_NOREUSE),
        };
        OpenSpec {
            writable: job.changes_files(),
            direct: job.direct,
            hint,
            sync: if job.writes() {
                job.files.open_flags()
            } else {
                0
            },
        }
    }

    /// The open flags beyond read/write.
    fn flags(&self) -> libc::c_int {
        (if self.direct { libc::O_DIRECT } else { 0 }) | self.sync
    }

    /// Gives the hint on the open file `f`.
    fn advise(&self, f: &File) {
        if let Some(a) = self.hint {
            // SAFETY: advice on an open descriptor; no memory is passed.
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, a) };
        }
    }
}

/// Opens the files of one clone of `job`, each required to be the very
/// file the layout checked; the error names the job, the file and, for
/// O_DIRECT, that the file system does not support it.
pub fn open_clone(job: &JobSpec, files: &[CloneFile]) -> Result<Vec<File>> {
    let spec = OpenSpec::of(job);
    if job.diskless() {
        // The engine makes the files by name: one descriptor stands in for
        // all of them (the clone repeats it per file), so a job of many
        // files needs no descriptor per file.
        let null = File::open("/dev/null").map_err(|e| Error::io("cannot open /dev/null", e))?;
        return Ok(if files.is_empty() {
            Vec::new()
        } else {
            vec![null]
        });
    }
    files
        .iter()
        .map(|f| {
            if f.diskless {
                // An engine that uses no file gets a harmless descriptor.
                return File::open("/dev/null").map_err(|e| Error::io("cannot open /dev/null", e));
            }
            let opened = reopen_same(&f.path, spec.writable, spec.flags(), f.id);
            opened.inspect(|file| spec.advise(file)).map_err(|e| {
                let errno = match &e {
                    Error::Io { source, .. } => source.raw_os_error(),
                    _ => None,
                };
                if errno == Some(libc::EMFILE) {
                    return JobError::invalid(
                        &job.name,
                        format!(
                            "cannot open {}: too many open files; iolab keeps every file of a clone open for the run ({} here; fio's openfiles, which would reopen them, is not honoured), so the limit on open files (ulimit -Hn) must cover every running clone's files",
                            f.path.display(),
                            files.len()
                        ),
                    )
                    .into();
                }
                if job.direct && errno == Some(libc::EINVAL) {
                    JobError::invalid(
                        &job.name,
                        format!(
                            "the file system of {} does not support O_DIRECT (direct=1)",
                            f.path.display()
                        ),
                    )
                    .into()
                } else {
                    match e {
                        Error::Io { source, .. } => Error::io(
                            format!("job '{}': cannot open {}", job.name, f.path.display()),
                            source,
                        ),
                        other => other,
                    }
                }
            })
        })
        .collect()
}
