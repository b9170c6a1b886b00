//! How a replay copies a traced file: only its data (holes stay holes,
//! found with `SEEK_DATA`/`SEEK_HOLE`) and only up to the end of what the
//! trace read; and how many bytes the copies and the trace's writes need,
//! known before anything is written.

use super::TraceResult as Result;
use super::calls::Class;
use super::model::Trace;
use crate::runner::StopFlag;
use iolab_runner::Error;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The largest piece read or written at once.
const CHUNK: usize = 1 << 20;

/// The ranges `[start, end)` of `f` (of `len` bytes) that hold data,
/// below `limit`. Where the file system cannot tell, the whole of it.
pub fn data_ranges(f: &File, len: u64, limit: u64) -> Vec<(u64, u64)> {
    let end = len.min(limit);
    let mut out = Vec::new();
    let mut at = 0u64;
    while at < end {
        let Some(start) = seek(f, at, libc::SEEK_DATA) else {
            break; // ENXIO: no data after `at`
        };
        if start >= end {
            break;
        }
        let stop = seek(f, start, libc::SEEK_HOLE).unwrap_or(end).min(end);
        out.push((start, stop));
        at = stop.max(start + 1);
    }
    out
}

/// `lseek(f, at, whence)`, `None` on failure (ENXIO past the last data).
fn seek(f: &File, at: u64, whence: libc::c_int) -> Option<u64> {
    // SAFETY: lseek on a descriptor `f` owns; no memory is passed.
    let r = unsafe { libc::lseek(f.as_raw_fd(), at as libc::off_t, whence) };
    (r >= 0).then_some(r as u64)
}

/// The bytes in `ranges`.
pub fn bytes(ranges: &[(u64, u64)]) -> u64 {
    ranges.iter().map(|(a, b)| b - a).sum()
}

/// Copies `ranges` of `src` into `out` at the same offsets (read and
/// written here, not reflinked, so the copy has its own blocks); the bytes
/// copied. A read that fails part way keeps what was copied.
pub fn copy_ranges(
    src: &File,
    out: &File,
    ranges: &[(u64, u64)],
    to: &Path,
    stop: &StopFlag,
) -> Result<u64> {
    let mut buf = vec![0u8; CHUNK];
    let mut n = 0u64;
    for &(start, end) in ranges {
        let mut at = start;
        while at < end {
            if stop.is_set() {
                return Err(Error::interrupted(stop).into());
            }
            let want = (end - at).min(CHUNK as u64) as usize;
            let got = match src.read_at(&mut buf[..want], at) {
                Ok(0) => return Ok(n),
                Ok(g) => g,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return Ok(n),
            };
            out.write_all_at(&buf[..got], at)
                .map_err(|e| Error::io(format!("cannot write {}", to.display()), e))?;
            at += got as u64;
            n += got as u64;
        }
    }
    Ok(n)
}

/// Writes bytes from `from` to `to_len` (not a sparse hole: reads of it
/// reach the disk as reads of the original did).
pub fn fill(out: &File, from: u64, to_len: u64, to: &Path, stop: &StopFlag) -> Result<()> {
    let buf = vec![0x5au8; CHUNK];
    let mut at = from;
    while at < to_len {
        if stop.is_set() {
            return Err(Error::interrupted(stop).into());
        }
        let n = (to_len - at).min(buf.len() as u64) as usize;
        out.write_all_at(&buf[..n], at)
            .map_err(|e| Error::io(format!("cannot write {}", to.display()), e))?;
        at += n as u64;
    }
    Ok(())
}

/// What the replay makes for one path the trace used.
pub enum Plan {
    /// Nothing: the program creates it (O_CREAT with O_EXCL or O_TRUNC,
    /// mkdir).
    Made,
    /// A directory.
    Dir,
    /// Not replayed, and why.
    Not(&'static str),
    /// Nothing: only named where it did not exist.
    Absent,
    /// A file of this size without data: only named (stat, unlink).
    Sized(u64),
    /// A copy of the original's data in `ranges` (those below the end of
    /// what the trace read or wrote), at the original's length, then
    /// filled up to `need` if the trace read past it.
    Copy {
        /// The original's length.
        len: u64,
        /// Its data ranges to copy.
        ranges: Vec<(u64, u64)>,
        /// The end of the furthest read.
        need: u64,
    },
    /// A file of written bytes up to `need` (the original is gone or
    /// unreadable).
    Fill(u64),
}

impl Plan {
    /// The bytes it writes.
    pub fn bytes(&self) -> u64 {
        match self {
            Plan::Copy { len, ranges, need } => {
                bytes(ranges).saturating_add(need.saturating_sub(*len))
            }
            Plan::Fill(need) => *need,
            _ => 0,
        }
    }
}

/// The bytes the trace's writes and allocations may add (each counted
/// whole: the room the replay can need at most).
pub fn written(t: &Trace) -> u64 {
    (t.events.iter())
        .map(|e| match (e.class(), e.name()) {
            (Class::Write, "fallocate") => e.len,
            (Class::Write, _) => e.result.max(0) as u64,
            _ => 0,
        })
        .fold(0u64, u64::saturating_add)
}

/// Refuses the replay before anything is written when the file system of
/// `root` has less room than `need` bytes.
pub fn check_space(root: &Path, need: u64) -> Result<()> {
    let Ok(free) = File::open(root).and_then(|d| crate::sys::fs::free_space(&d)) else {
        return Ok(()); // unknown: the writes will say ENOSPC if it comes
    };
    if need > free {
        return Err(iolab_runner::Error::NotEnoughSpace {
            what: "hold the replay's copies and the trace's writes",
            at: root.to_path_buf(),
            need,
            free,
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparse_file_has_only_its_data_ranges_below_the_limit() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s");
        let f = (std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true))
        .open(&p)
        .unwrap();
        f.set_len(64 << 20).unwrap();
        f.write_all_at(&[1u8; 4096], 8 << 20).unwrap();
        f.write_all_at(&[2u8; 4096], 40 << 20).unwrap();
        f.sync_all().unwrap();
        let all = data_ranges(&f, 64 << 20, u64::MAX);
        // Block-granular on every file system; at most one range a write.
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(
            all[0].0 <= 8 << 20 && all[0].1 >= (8 << 20) + 4096,
            "{all:?}"
        );
        assert!(bytes(&all) < 1 << 20, "{all:?}");
        let below = data_ranges(&f, 64 << 20, 16 << 20);
        assert_eq!(below.len(), 1, "{below:?}");
        let out_p = d.path().join("o");
        let out = (std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true))
        .open(&out_p)
        .unwrap();
        let n = copy_ranges(&f, &out, &all, &out_p, &StopFlag::new()).unwrap();
        assert_eq!(n, bytes(&all));
        let mut b = [0u8; 1];
        out.read_exact_at(&mut b, 40 << 20).unwrap();
        assert_eq!(b, [2]);
    }
}
