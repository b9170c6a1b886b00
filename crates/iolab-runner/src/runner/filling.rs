//! How a new or extended file gets its bytes: random non-zero data (for a
//! job that reads it), or space without data for a file that its jobs only
//! write, as fio makes it
//! (`extend_file` with its `fallocate` mode): fio writes a new file's data
//! only for a job that reads it or sets `overwrite`, and iolab does the
//! same, so a write job's first pass writes into fresh blocks, not over
//! pages it laid out and evicted (which cost reads of the pages a small
//! write only partly covers).

use super::StopFlag;
use crate::error::{Error, Result};
use crate::job::groups::files::Allocate;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
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

/// Writes random non-zero bytes into `[from, to)` and syncs them.
pub fn fill(file: &File, path: &Path, from: u64, to: u64, stop: &StopFlag) -> Result<()> {
    const CHUNK: usize = 1 << 20;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(from ^ 0x10_1ab);
    let mut buf = vec![0u8; CHUNK];
    let mut off = from;
    while off < to {
        if stop.is_set() {
            return Err(crate::Error::interrupted(stop));
        }
        for w in buf.chunks_exact_mut(8) {
            // Set the low bit of every byte so no byte is zero.
            let v = rng.next_u64() | 0x0101_0101_0101_0101;
            w.copy_from_slice(&v.to_le_bytes());
        }
        let n = ((to - off) as usize).min(CHUNK);
        file.write_all_at(&buf[..n], off)
            .map_err(|e| Error::io(format!("cannot lay out {}", path.display()), e))?;
        off += n as u64;
    }
    file.sync_data()
        .map_err(|e| Error::io(format!("cannot sync {}", path.display()), e))?;
    Ok(())
}
