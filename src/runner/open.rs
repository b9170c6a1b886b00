//! Step 3 of a repetition: a clone's files opened once, with the job's
//! flags and `fadvise_hint`, checked here so a problem is an error before
//! any thread starts (the clone takes these very descriptors over).

use super::layout::CloneFile;
use crate::error::{Error, Result};
use crate::job::{FadviseHint, JobError, JobSpec, Pattern};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// How a job opens its files.
#[derive(Debug, Clone, Copy)]
pub struct OpenSpec {
    /// Open read-write (the job writes).
    pub writable: bool,
    /// O_DIRECT.
    pub direct: bool,
    /// `posix_fadvise` advice given right after open.
    pub hint: Option<libc::c_int>,
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
            writable: job.writes(),
            direct: job.direct,
            hint,
        }
    }

    /// Opens `path` and gives the hint.
    pub fn open(&self, path: &Path) -> std::io::Result<File> {
        let mut o = OpenOptions::new();
        o.read(true).write(self.writable);
        if self.direct {
            o.custom_flags(libc::O_DIRECT);
        }
        let f = o.open(path)?;
        if let Some(a) = self.hint {
            // SAFETY: advice on an open descriptor; no memory is passed.
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, a) };
        }
        Ok(f)
    }
}

/// Opens the files of one clone of `job`; the error names the job, the
/// file and, for O_DIRECT, that the file system does not support it.
pub fn open_clone(job: &JobSpec, files: &[CloneFile]) -> Result<Vec<File>> {
    let spec = OpenSpec::of(job);
    files
        .iter()
        .map(|f| {
            spec.open(&f.path).map_err(|e| {
                if job.direct && e.raw_os_error() == Some(libc::EINVAL) {
                    JobError::invalid(
                        &job.name,
                        format!(
                            "the file system of {} does not support O_DIRECT (direct=1)",
                            f.path.display()
                        ),
                    )
                    .into()
                } else {
                    Error::io(
                        format!("job '{}': cannot open {}", job.name, f.path.display()),
                        e,
                    )
                }
            })
        })
        .collect()
}
