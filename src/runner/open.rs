//! Opening a job's files with the job's flags and `fadvise_hint`.

use crate::job::{FadviseHint, JobSpec, Pattern};
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
