//! `e4defrag`: no data moves; each write swaps its range's blocks with a
//! donor file's, `ioctl(EXT4_IOC_MOVE_EXT)`, as fio's engines/e4defrag.c
//! simulates defragmentation. Each clone opens (creating it, mode 0644)
//! the donor `donorname`, in `directory` when given as fio does (`DIR/NAME`
//! even for an absolute name). With `inplace=0` the donor's space is
//! allocated once, `fallocate(2)` from `offset` to the high end of
//! `filesize` (fio fails without `filesize`: iolab refuses the job); with
//! `inplace=1` each write allocates the donor's range first and truncates
//! the donor to 0 after. The extents moved are in the donor's block size
//! (`st_blksize`); a move of fewer bytes than the I/O is a short write, of
//! none an EINVAL. Reads and trims fail with EINVAL in fio, so a job that
//! reads or trims is refused. The donor is left behind, as fio leaves it.

use super::{Engine, EngineConfig, EngineError, IoUnit, Queued};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::PathBuf;

/// The options of ioengine=e4defrag (`None`: not given).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct E4defragOptions {
    /// fio's `donorname`: the donor file.
    pub donorname: Option<String>,
    /// fio's `inplace`: the donor's space allocated and freed at each I/O
    /// (default 0: once, before the run).
    pub inplace: Option<bool>,
}

impl E4defragOptions {
    /// The donor's path as fio makes it: `DIR/NAME` with a `directory`
    /// (even for an absolute name), else the name.
    pub fn donor_path(&self, directory: Option<&std::path::Path>) -> Option<PathBuf> {
        let name = self.donorname.as_deref().filter(|n| !n.is_empty())?;
        Some(match directory {
            Some(d) => PathBuf::from(format!("{}/{name}", d.display())),
            None => PathBuf::from(name),
        })
    }
}

/// fio's `struct move_extent` (linux/ext4.h).
#[repr(C)]
#[derive(Debug, Default)]
struct MoveExtent {
    reserved: u32,
    donor_fd: u32,
    orig_start: u64,
    donor_start: u64,
    len: u64,
    moved_len: u64,
}

/// `_IOWR('f', 15, struct move_extent)`.
const EXT4_IOC_MOVE_EXT: u64 =
    (3 << 30) | ((std::mem::size_of::<MoveExtent>() as u64) << 16) | ((b'f' as u64) << 8) | 15;

/// Extent moves from a donor file.
#[derive(Debug)]
pub struct E4defragEngine {
    donor: File,
    /// The donor's block size, the unit of the moves.
    bsz: u64,
    inplace: bool,
}

/// Why a job cannot run with e4defrag, as an [`EngineError`].
fn refuse(what: &str, why: &str) -> Result<(), EngineError> {
    Err(EngineError::new(what, why))
}

impl Engine for E4defragEngine {
    const MOVES_DATA: bool = false;
    const OPTIONS: &'static [&'static str] = &["donorname", "inplace"];

    fn check(cfg: &EngineConfig) -> Result<(), EngineError> {
        let a = &cfg.args;
        if a.e4defrag.donor_path(None).is_none() {
            return refuse(
                "donorname",
                "ioengine=e4defrag needs a donor file (fio: 'donorname' options required)",
            );
        }
        if cfg.reads || cfg.trims {
            return refuse(
                "ioengine",
                "e4defrag only writes (fio fails every read and trim with EINVAL); use rw=write or rw=randwrite",
            );
        }
        if !a.e4defrag.inplace.unwrap_or(false) && a.filesize_high <= a.offset {
            return refuse(
                "inplace",
                "with inplace=0 the donor is allocated from offset to the end of filesize before the run, as fio, and fio's e4defrag fails without filesize (fallocate, EINVAL): give filesize= or inplace=1",
            );
        }
        Ok(())
    }

    fn hint(err: &io::Error, _cfg: &EngineConfig) -> Option<&'static str> {
        match err.raw_os_error() {
            Some(libc::ENOTTY | libc::EOPNOTSUPP) => Some(
                "EXT4_IOC_MOVE_EXT needs the job's files and the donor on one ext4 file system",
            ),
            Some(libc::EINVAL) => Some(
                "EXT4_IOC_MOVE_EXT moved nothing (a range past the donor's or the file's end, or a read, which e4defrag fails as fio)",
            ),
            _ => None,
        }
    }

    fn build(cfg: &EngineConfig) -> Result<Self, EngineError> {
        let a = &cfg.args;
        let path = (a.e4defrag.donor_path(a.directory.as_deref()))
            .ok_or_else(|| EngineError::new("donorname", "not given"))?;
        let failed = |what: &str, e: io::Error| {
            EngineError::new("donorname", format!("{what} {}: {e}", path.display()))
        };
        let donor = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .open(&path)
            .map_err(|e| failed("cannot open donor file", e))?;
        let inplace = a.e4defrag.inplace.unwrap_or(false);
        if !inplace {
            let len = a.filesize_high.saturating_sub(a.offset);
            fallocate(donor.as_raw_fd(), a.offset, len)
                .map_err(|e| failed("cannot allocate the space of donor file", e))?;
        }
        let meta = donor.metadata().map_err(|e| failed("cannot stat", e))?;
        Ok(E4defragEngine {
            donor,
            bsz: meta.blksize().max(1),
            inplace,
        })
    }

    fn queue(&mut self, _tag: u32, fd: RawFd, unit: IoUnit, _buf: &mut [u8]) -> io::Result<Queued> {
        if !unit.write {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let (donor, len) = (self.donor.as_raw_fd(), u64::from(unit.len));
        if self.inplace {
            fallocate(donor, unit.offset, len)?;
        }
        let start = unit.offset / self.bsz;
        let mut me = MoveExtent {
            donor_fd: donor as u32,
            orig_start: start,
            donor_start: start,
            len: (unit.offset + len).div_ceil(self.bsz) - start,
            ..MoveExtent::default()
        };
        let moved = move_ext(fd, &mut me);
        let bytes = me.moved_len.saturating_mul(self.bsz).min(len);
        let result = match moved {
            Err(e) => Err(e),
            // fio: nothing moved is an access beyond the file's end.
            Ok(()) if bytes == 0 => Err(io::Error::from_raw_os_error(libc::EINVAL)),
            Ok(()) => Ok(Queued::Done(bytes as usize)),
        };
        if self.inplace {
            let truncated = ftruncate0(donor);
            if result.is_ok() {
                truncated?;
            }
        }
        result
    }

    /// fio's e4defrag fails a trim as any I/O that is not a write.
    fn trim(&mut self, _fd: RawFd, _unit: IoUnit) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::EINVAL))
    }
}

/// `fallocate(fd, 0, offset, len)`.
///
/// # Safety
///
/// Sound for any descriptor: the call takes integers only, and a bad
/// descriptor is an error (EBADF), not undefined behaviour.
fn fallocate(fd: RawFd, offset: u64, len: u64) -> io::Result<()> {
    let (off, len) = (offset as libc::off_t, len as libc::off_t);
    // SAFETY: fallocate on an open descriptor; no memory is passed.
    if unsafe { libc::fallocate(fd, 0, off, len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `ftruncate(fd, 0)`.
///
/// # Safety
///
/// Sound for any descriptor: the call takes integers only.
fn ftruncate0(fd: RawFd) -> io::Result<()> {
    // SAFETY: ftruncate on an open descriptor; no memory is passed.
    if unsafe { libc::ftruncate(fd, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `ioctl(fd, EXT4_IOC_MOVE_EXT, me)`; the kernel sets `me.moved_len`.
///
/// # Safety
///
/// Sound for any descriptor: `me` is a live, exclusively borrowed
/// `struct move_extent` of the size the request encodes, which the kernel
/// reads and writes only during the call; the descriptors in it are
/// integers the kernel checks.
fn move_ext(fd: RawFd, me: &mut MoveExtent) -> io::Result<()> {
    // SAFETY: see `# Safety` above.
    let rc = unsafe { libc::ioctl(fd, EXT4_IOC_MOVE_EXT as _, me as *mut MoveExtent) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
