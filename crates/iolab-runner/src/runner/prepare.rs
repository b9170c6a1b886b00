//! Checking and laying out the files a run needs, safe against a path that
//! changes under iolab: every check is made on an open descriptor (`fstat`,
//! `fgetxattr`), each file is remembered by its identity (device, inode)
//! and every later open must find that same file. Nothing is written before
//! every file is checked and the free space is known to suffice; a layout
//! that fails removes what it made.

use super::StopFlag;
use super::filling::{allocate, fill};
use crate::error::{Error, Result};
use crate::job::JobError;
use crate::job::groups::files::Allocate;
use crate::sys::fs::{FileId, free_space, kind_of, open_file};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Extended attribute iolab puts on files it lays out.
pub const MARK_XATTR: &str = "user.iolab.layout";
const MARK_VALUE: &[u8] = b"1";

/// What a file must offer the jobs that use it.
#[derive(Debug, Clone)]
pub struct Need {
    /// The file.
    pub path: PathBuf,
    /// Bytes needed (offset + region), or `None`: use what is there.
    pub len: Option<u64>,
    /// Some job writes to it.
    pub writes: bool,
    /// Name of a job using it, for messages.
    pub job: String,
    /// It may be created when missing (fio's `allow_file_create`, in
    /// every job that uses it).
    pub may_create: bool,
    /// Its missing parent directories are made, as fio does for a
    /// `filename` (not for `directory`, which must exist).
    pub make_parents: bool,
    /// When made or extended: only space, as this `fallocate` mode gives
    /// it (the first job using it only writes, as fio's layout);
    /// `None`: data written.
    pub space_only: Option<Allocate>,
}

/// A file ready for the run.
#[derive(Debug)]
pub struct Prepared {
    /// The file.
    pub path: PathBuf,
    /// Its size after preparation.
    pub size: u64,
    /// Which file it is: every later open must find this one.
    pub id: FileId,
    /// True when this run created it.
    pub created: bool,
    /// For a block device the run writes: a descriptor opened with
    /// `O_EXCL`, held for the run, so the device cannot be mounted meanwhile.
    pub claim: Option<File>,
}

/// What has to be done to a checked file.
enum Step {
    /// Use it as it is.
    Use,
    /// Create it with `len` bytes (only space, as `space` says, or data).
    Create { len: u64, space: Option<Allocate> },
    /// Extend it (through `file`) from `from` to `to` bytes (only space,
    /// as `space` says, or data).
    Extend {
        file: File,
        from: u64,
        to: u64,
        space: Option<Allocate>,
    },
}

/// A file checked on its descriptor, nothing written yet.
struct Checked {
    path: PathBuf,
    id: FileId,
    size: u64,
    step: Step,
    claim: Option<File>,
    /// Where the bytes to write go: the file, or the directory it is made in.
    space_on: Option<File>,
}

/// Checks every file, then lays out what is missing. Refusals and a lack
/// of space are found before anything is written; on any later error (or
/// Ctrl-C) the files made so far are removed and extended ones cut back.
pub fn prepare_all(
    needs: &[Need],
    allow_overwrite: bool,
    stop: &StopFlag,
) -> Result<Vec<Prepared>> {
    let checked = needs
        .iter()
        .map(|n| check(n, allow_overwrite))
        .collect::<Result<Vec<_>>>()?;
    check_space(&checked)?;
    let mut done: Vec<Prepared> = Vec::new();
    let mut extended: Vec<(File, u64)> = Vec::new();
    for c in checked {
        match lay_out_one(c, stop, &mut extended) {
            Ok(p) => done.push(p),
            Err(e) => {
                for (file, size) in extended {
                    let _ = file.set_len(size);
                }
                remove_created(
                    done.iter()
                        .filter(|p| p.created)
                        .map(|p| (p.path.as_path(), p.id)),
                );
                return Err(e);
            }
        }
    }
    Ok(done)
}

/// Removes files this run created, each only while its path still names
/// the file that was made.
pub fn remove_created<'a>(files: impl IntoIterator<Item = (&'a Path, FileId)>) {
    let files: Vec<(&Path, FileId)> = files.into_iter().collect();
    crate::sys::par::map(&files, |&(path, id)| {
        if std::fs::symlink_metadata(path).is_ok_and(|m| FileId::of(&m) == id) {
            let _ = std::fs::remove_file(path);
        }
    });
}

/// Checks the safety rules on the opened file and works out what to write.
fn check(need: &Need, allow_overwrite: bool) -> Result<Checked> {
    let path = &need.path;
    let file = match open_file(path, false, 0) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return to_create(need),
        Err(e) => return Err(Error::io(format!("cannot open {}", path.display()), e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| Error::io(format!("cannot stat {}", path.display()), e))?;
    let id = FileId::of(&meta);
    if meta.file_type().is_block_device() {
        return check_block_device(need, allow_overwrite, &file, id);
    }
    if null_or_zero(&meta) {
        // fio's examples read /dev/zero and write /dev/null: nothing is
        // stored, so any size the job names is there.
        return Ok(Checked {
            path: path.clone(),
            id,
            size: need.len.unwrap_or(0),
            step: Step::Use,
            claim: None,
            space_on: None,
        });
    }
    if !meta.is_file() {
        return Err(JobError::invalid(
            &need.job,
            format!(
                "{} is not a regular file or block device (it is {})",
                path.display(),
                kind_of(&meta)
            ),
        )
        .into());
    }
    let ours = crate::sys::xattr::has_fd(file.as_fd(), MARK_XATTR);
    if need.writes && !ours && !allow_overwrite {
        return Err(Error::refused(
            path,
            format!(
                "refusing to write to {} (job '{}'): it exists and was not laid out by iolab; pass --allow-overwrite to write over it",
                path.display(),
                need.job
            ),
        ));
    }
    let size = meta.len();
    let step = match need.len {
        Some(len) if len > size => {
            if !ours && !allow_overwrite {
                return Err(Error::refused(
                    path,
                    format!(
                        "job '{}': {} has {size} bytes but the job needs {len}; iolab does not extend files it did not lay out (pass --allow-overwrite, or a smaller size=)",
                        need.job,
                        path.display()
                    ),
                ));
            }
            let w = reopen_same(path, true, 0, id)?;
            Step::Extend {
                file: w,
                from: size,
                to: len,
                space: need.space_only,
            }
        }
        _ => Step::Use,
    };
    let space_on = matches!(step, Step::Extend { .. }).then_some(file);
    Ok(Checked {
        path: path.clone(),
        id,
        size: need.len.map_or(size, |l| l.max(size)),
        step,
        claim: None,
        space_on,
    })
}

/// True for /dev/null and /dev/zero (character device 1:3, 1:5).
fn null_or_zero(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let rdev = meta.rdev();
    meta.file_type().is_char_device()
        && libc::major(rdev) == 1
        && matches!(libc::minor(rdev), 3 | 5)
}

/// A file that does not exist yet: it is made if the job gives its size.
fn to_create(need: &Need) -> Result<Checked> {
    let path = &need.path;
    if !need.may_create {
        return Err(JobError::invalid(
            &need.job,
            format!(
                "file {} does not exist (allow_file_create=0)",
                path.display()
            ),
        )
        .into());
    }
    let Some(len) = need.len else {
        return Err(JobError::invalid(
            &need.job,
            format!(
                "file {} does not exist and no size= is given to create it",
                path.display()
            ),
        )
        .into());
    };
    let dir = parent(path);
    if need.make_parents && !dir.exists() {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::io(
                format!(
                    "cannot make directory {} for {}",
                    dir.display(),
                    path.display()
                ),
                e,
            )
        })?;
    }
    let d = File::open(dir).map_err(|e| {
        Error::io(
            format!(
                "cannot create {} (in directory {})",
                path.display(),
                dir.display()
            ),
            e,
        )
    })?;
    Ok(Checked {
        path: path.clone(),
        id: FileId::default(),
        size: len,
        step: Step::Create {
            len,
            space: need.space_only,
        },
        claim: None,
        space_on: Some(d),
    })
}

/// A block device: written only with --allow-overwrite, and then claimed
/// with `O_EXCL` (the kernel refuses a device that is mounted or in use).
fn check_block_device(
    need: &Need,
    allow_overwrite: bool,
    file: &File,
    id: FileId,
) -> Result<Checked> {
    let path = &need.path;
    if need.writes && !allow_overwrite {
        return Err(Error::refused(
            path,
            format!(
                "refusing to write to block device {} (job '{}'): pass --allow-overwrite to destroy its data",
                path.display(),
                need.job
            ),
        ));
    }
    let size = block_device_size(file).map_err(|e| {
        Error::io(
            format!("cannot get the size of block device {}", path.display()),
            e,
        )
    })?;
    if let Some(len) = need.len.filter(|&l| l > size) {
        return Err(JobError::invalid(
            &need.job,
            format!(
                "block device {} has {size} bytes, the job needs {len}",
                path.display()
            ),
        )
        .into());
    }
    let claim = if need.writes {
        Some(reopen_same(path, true, libc::O_EXCL, id).map_err(|e| match e {
            Error::Io { source, .. } if source.raw_os_error() == Some(libc::EBUSY) => {
                Error::refused(
                    path,
                    format!(
                        "refusing to write to block device {}: it is in use (mounted, or held by another program); iolab opens a device it writes with O_EXCL",
                        path.display()
                    ),
                )
            }
            other => other,
        })?)
    } else {
        None
    };
    Ok(Checked {
        path: path.clone(),
        id,
        size,
        step: Step::Use,
        claim,
        space_on: None,
    })
}

/// Opens `path` again (for writing when `write`) and requires it to be
/// the file `id` that was checked: a path swapped in between is refused.
pub fn reopen_same(path: &Path, write: bool, extra: libc::c_int, id: FileId) -> Result<File> {
    let f = open_file(path, write, extra)
        .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
    let now = f
        .metadata()
        .map_err(|e| Error::io(format!("cannot stat {}", path.display()), e))?;
    if FileId::of(&now) != id {
        return Err(Error::refused(
            path,
            format!(
                "refusing to use {}: it is not the file iolab checked (the path was replaced or a link swapped in since)",
                path.display()
            ),
        ));
    }
    Ok(f)
}

/// Refuses a layout the file systems have no room for, before writing.
fn check_space(checked: &[Checked]) -> Result<()> {
    let mut per_fs: BTreeMap<u64, (u64, &Checked)> = BTreeMap::new();
    for c in checked {
        let (bytes, on) = match (&c.step, &c.space_on) {
            (Step::Create { len, .. }, Some(on)) => (*len, on),
            (Step::Extend { from, to, .. }, Some(on)) => (to - from, on),
            _ => continue,
        };
        let dev = on.metadata().map(|m| m.dev()).unwrap_or(0);
        let e = per_fs.entry(dev).or_insert((0, c));
        e.0 = e.0.saturating_add(bytes);
    }
    for (need, c) in per_fs.values() {
        let on = c.space_on.as_ref().expect("only files with space to find");
        let Ok(free) = free_space(on) else { continue };
        if *need > free {
            return Err(Error::NotEnoughSpace {
                what: "lay out the job's files",
                at: parent(&c.path).to_path_buf(),
                need: *need,
                free,
            });
        }
    }
    Ok(())
}

/// Writes what `c` needs; an extended file is remembered in `extended`
/// with its old size, to be cut back if a later file fails.
fn lay_out_one(c: Checked, stop: &StopFlag, extended: &mut Vec<(File, u64)>) -> Result<Prepared> {
    let (id, created) = match c.step {
        Step::Use => (c.id, false),
        Step::Create { len, space } => (create(&c.path, (len, space), stop)?, true),
        Step::Extend {
            file,
            from,
            to,
            space,
        } => {
            let filled = match space {
                Some(mode) => allocate(&file, &c.path, mode, (from, to)),
                None => fill(&file, &c.path, from, to, stop),
            };
            extended.push((file, from));
            filled?;
            (c.id, false)
        }
    };
    Ok(Prepared {
        path: c.path,
        size: c.size,
        id,
        created,
        claim: c.claim,
    })
}

/// Makes a new file (never following a link at `path`), marks it as
/// iolab's and fills it with `len` bytes of data, or gives it only the
/// space of `space`; returns its identity.
fn create(path: &Path, (len, space): (u64, Option<Allocate>), stop: &StopFlag) -> Result<FileId> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| {
            Error::io(
                format!(
                    "cannot create {} (in directory {})",
                    path.display(),
                    parent(path).display()
                ),
                e,
            )
        })?;
    let id = file
        .metadata()
        .map(|m| FileId::of(&m))
        .map_err(|e| Error::io(format!("cannot stat {}", path.display()), e))?;
    // Mark first: if layout is interrupted the partial file is still ours.
    let marked = crate::sys::xattr::set_fd(file.as_fd(), MARK_XATTR, MARK_VALUE).map_err(|e| {
        Error::io(
            format!(
                "cannot mark {} as laid out by iolab (xattr {MARK_XATTR}); this file system needs user xattrs",
                path.display()
            ),
            e,
        )
    });
    let made = marked.and_then(|_| match space {
        Some(mode) => allocate(&file, path, mode, (0, len)),
        None => fill(&file, path, 0, len, stop),
    });
    if let Err(e) = made {
        drop(file);
        remove_created([(path, id)]);
        return Err(e);
    }
    Ok(id)
}

/// Size of the open block device `f` in bytes.
fn block_device_size(f: &File) -> std::io::Result<u64> {
    let mut size: u64 = 0;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    // SAFETY: the ioctl writes one u64 into `size`.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size)
}

/// The directory `path` is in (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}
