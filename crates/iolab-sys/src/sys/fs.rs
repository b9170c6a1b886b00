//! Files, safely: output files written through a fresh temporary file
//! renamed into place (a reader never sees half a file, an interrupted
//! write leaves the old one, a symlink or device at the target is never
//! written through), files opened without blocking on FIFOs or taking a
//! terminal, the identity of an open file, free space.

use crate::error::{Error, Result};
use std::fs::{File, Metadata, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Refuses `path` as an output when something other than a regular file
/// is there (a symlink, directory, FIFO or device): iolab replaces only
/// regular files. Checked again right before the rename.
pub fn replaceable(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => Err(Error::refused(
            path,
            format!(
                "refusing to write {}: it exists and is not a regular file ({}); iolab replaces only regular files",
                path.display(),
                kind_of(&m)
            ),
        )),
        _ => Ok(()),
    }
}

/// The first of `STEM.EXT`, `STEM-2.EXT`, `STEM-3.EXT`... that does not
/// exist yet: a default output name that never collides with an earlier
/// one (two traces started in the same second).
pub fn unused_name(stem: &str, ext: &str) -> std::path::PathBuf {
    (1..)
        .map(|n| match n {
            1 => format!("{stem}.{ext}"),
            n => format!("{stem}-{n}.{ext}"),
        })
        .map(std::path::PathBuf::from)
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .expect("some name is free")
}

/// Writes `bytes` to `path` through a fresh, unpredictably named temporary
/// file in the same directory (created with `O_EXCL`), renamed over
/// `path`; see [`replaceable`] for what may be replaced.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |tmp| {
        let mut f = tmp.as_file();
        f.write_all(bytes).and_then(|_| f.flush())
    })
}

/// [`write_atomic`] for a writer that needs the temporary file (a picture
/// library that writes by path: `tmp.path()` ends like `path`).
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&tempfile::NamedTempFile) -> std::io::Result<()>,
) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let shown = || format!("cannot write {}", path.display());
    replaceable(path)?;
    let suffix = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    // Mode 0666 less the umask, as any new file (tempfile's own is 0600).
    let tmp = tempfile::Builder::new()
        .prefix(".iolab-")
        .suffix(&suffix)
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(|e| Error::io(shown(), e))?;
    write(&tmp).map_err(|e| Error::io(shown(), e))?;
    replaceable(path)?;
    tmp.persist(path).map_err(|e| Error::io(shown(), e.error))?;
    Ok(())
}

/// What kind of file `m` describes, in words.
pub fn kind_of(m: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a regular file"
    }
}

/// The identity of a file: its device and inode. Two opens of a path name
/// the same file exactly when their identities are equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FileId {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

impl FileId {
    /// The identity of the file `m` describes (from `fstat`).
    pub fn of(m: &Metadata) -> FileId {
        FileId {
            dev: m.dev(),
            ino: m.ino(),
        }
    }
}

/// Opens `path` for reading (and writing when `write`), with `extra`
/// flags (`O_DIRECT`, `O_EXCL`): never blocking on a FIFO swapped in
/// (`O_NONBLOCK` while opening, cleared after) nor taking a terminal
/// (`O_NOCTTY`). What the caller checks next is on this descriptor.
pub fn open_file(path: &Path, write: bool, extra: libc::c_int) -> std::io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(extra | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    clear_nonblock(&f)?;
    Ok(f)
}

/// Clears `O_NONBLOCK` on `f`, keeping its other status flags.
fn clear_nonblock(f: &File) -> std::io::Result<()> {
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a descriptor `f` owns; F_GETFL/F_SETFL take no pointers.
    let rc = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            flags
        } else {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK)
        }
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Bytes free on the file system of the open file or directory `f`: for
/// root all free blocks, for others those not reserved.
pub fn free_space(f: &File) -> std::io::Result<u64> {
    // SAFETY: fstatvfs fills the zeroed struct for a descriptor `f` owns.
    let s = unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        if libc::fstatvfs(f.as_raw_fd(), &mut s) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        s
    };
    let blocks = if super::machine::is_root() {
        s.f_bfree
    } else {
        s.f_bavail
    };
    Ok(blocks.saturating_mul(s.f_frsize))
}

/// The name of the file system holding `path` when it keeps files only in
/// memory (tmpfs, ramfs), so their pages cannot be evicted.
pub fn memory_only(path: &Path) -> Option<&'static str> {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: a NUL-terminated path and a buffer of the right type.
    if unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: statfs succeeded, so it filled the buffer.
    let f_type = unsafe { st.assume_init() }.f_type;
    // f_type is i64 here, a narrower integer on other architectures.
    #[allow(clippy::unnecessary_cast)]
    match f_type as i64 {
        TMPFS_MAGIC => Some("tmpfs"),
        RAMFS_MAGIC => Some("ramfs"),
        _ => None,
    }
}

/// The block layer's discard of `len` bytes at `offset` (fio's `os_trim`:
/// `ioctl(BLKDISCARD)`); a regular file has no such ioctl (ENOTTY).
pub fn discard(fd: std::os::fd::RawFd, offset: u64, len: u64) -> std::io::Result<()> {
    /// `_IO(0x12, 119)`.
    const BLKDISCARD: libc::c_ulong = 0x1277;
    let range = [offset, len];
    // SAFETY: BLKDISCARD reads two u64s from `range`, which outlives the call.
    if unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Makes a FIFO (named pipe) at `path`, mode 0600.
pub fn mkfifo(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
