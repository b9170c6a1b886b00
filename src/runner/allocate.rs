//! Space without data for a file that its jobs only write, as fio makes it
//! (`extend_file` with its `fallocate` mode): fio writes a new file's data
//! only for a job that reads it or sets `overwrite`, and iolab does the
//! same, so a write job's first pass writes into fresh blocks, not over
//! pages it laid out and evicted (which cost reads of the pages a small
//! write only partly covers).

use crate::error::{Error, Result};
use crate::job::groups::files::Allocate;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Gives `file` the bytes `[from, to)` as `mode` says (nothing for
/// [`Allocate::None`]). A file system without `fallocate` falls back to
/// nothing, as fio, which only logs it.
pub fn allocate(file: &File, path: &Path, mode: Allocate, (from, to): (u64, u64)) -> Result<()> {
    let len = to.saturating_sub(from);
    if len == 0 {
        return Ok(());
    }
    let fail = |e: std::io::Error| Error::io(format!("cannot allocate {}", path.display()), e);
    match mode {
        Allocate::None => Ok(()),
        Allocate::Truncate => file.set_len(to).map_err(fail),
        Allocate::Native | Allocate::Keep => {
            let flags = if mode == Allocate::Keep {
                libc::FALLOC_FL_KEEP_SIZE
            } else {
                0
            };
            match fallocate(file, flags, from, len) {
                Err(e) if unsupported(&e) => Ok(()),
                r => r.map_err(fail),
            }
        }
        Allocate::Posix => {
            // SAFETY: the call takes a descriptor and two integers.
            let rc = unsafe {
                libc::posix_fallocate(file.as_raw_fd(), from as libc::off_t, len as libc::off_t)
            };
            match rc {
                0 => Ok(()),
                e => Err(fail(std::io::Error::from_raw_os_error(e))),
            }
        }
    }
}

/// `fallocate(2)` on `file`.
fn fallocate(file: &File, flags: libc::c_int, from: u64, len: u64) -> std::io::Result<()> {
    // SAFETY: the call takes a descriptor and integers; no memory is passed.
    let rc = unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            flags,
            from as libc::off_t,
            len as libc::off_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// True when the file system has no `fallocate` (fio goes on without).
fn unsupported(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOSYS))
}
