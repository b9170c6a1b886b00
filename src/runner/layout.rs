//! Step 1 of a run: the files of every job clone, laid out before timing
//! starts (random non-zero data, never sparse), each with the region the
//! clone works on. Also the iolab mark that makes re-runs safe and the
//! write-safety rules.

use super::stop::StopFlag;
use crate::error::{Error, Result};
use crate::job::{JobError, JobSpec};
use crate::plan::Region;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Extended attribute iolab puts on files it lays out.
pub const MARK_XATTR: &str = "user.iolab.layout";
const MARK_VALUE: &[u8] = b"1";

/// A clone's file with its region.
#[derive(Debug, Clone)]
pub struct CloneFile {
    /// The file.
    pub path: PathBuf,
    /// The part of it the clone works on.
    pub region: Region,
}

/// Every clone's files: job → clone → files.
#[derive(Debug, Clone)]
pub struct Layout(pub Vec<Vec<Vec<CloneFile>>>);

impl Layout {
    /// Distinct (path, region) pairs of job `j` over all its clones.
    pub fn job_regions(&self, j: usize) -> Vec<(PathBuf, Region)> {
        let mut m: BTreeMap<PathBuf, Region> = BTreeMap::new();
        for cf in self.0[j].iter().flatten() {
            m.entry(cf.path.clone()).or_insert(cf.region);
        }
        m.into_iter().collect()
    }

    /// Every file, once per clone that uses it.
    pub fn all_paths(&self) -> Vec<PathBuf> {
        self.0
            .iter()
            .flatten()
            .flatten()
            .map(|f| f.path.clone())
            .collect()
    }

    /// The paths, job → clone → files (as a result reports them).
    pub fn paths(&self) -> Vec<Vec<Vec<PathBuf>>> {
        self.0
            .iter()
            .map(|clones| {
                clones
                    .iter()
                    .map(|cf| cf.iter().map(|f| f.path.clone()).collect())
                    .collect()
            })
            .collect()
    }
}

/// Lays out every job's files (checking the safety rules) and works out
/// every clone's regions.
pub fn lay_out(jobs: &[JobSpec], allow_overwrite: bool, stop: &StopFlag) -> Result<Layout> {
    let mut needs: BTreeMap<PathBuf, Need> = BTreeMap::new();
    for job in jobs {
        for c in 0..job.numjobs {
            let paths = clone_paths(job, c);
            let per_file = job.size.map(|s| s / paths.len() as u64);
            for p in paths {
                let n = needs.entry(p.clone()).or_insert(Need {
                    path: p,
                    len: None,
                    writes: false,
                    job: job.name.clone(),
                });
                if let Some(pf) = per_file {
                    n.len = Some(n.len.unwrap_or(0).max(job.offset + pf));
                }
                n.writes |= job.writes();
            }
        }
    }
    let mut sizes = BTreeMap::new();
    for need in needs.values() {
        let p = prepare(need, allow_overwrite, stop)?;
        sizes.insert(p.path.clone(), p.size);
    }
    let mut out = Vec::new();
    for job in jobs {
        let clones = (0..job.numjobs)
            .map(|c| clone_files(job, c, &sizes))
            .collect::<Result<_>>()?;
        out.push(clones);
    }
    Ok(Layout(out))
}

/// The files and regions of clone `c` of `job`, given the files' sizes.
fn clone_files(job: &JobSpec, c: u32, sizes: &BTreeMap<PathBuf, u64>) -> Result<Vec<CloneFile>> {
    let paths = clone_paths(job, c);
    let per_file = job.size.map(|s| s / paths.len() as u64);
    let mut out = Vec::new();
    for p in paths {
        let fsize = sizes[&p];
        let bad = |why: String| -> Error { JobError::invalid(&job.name, why).into() };
        if job.offset >= fsize {
            return Err(bad(format!(
                "offset {} is beyond the end of {} ({fsize} bytes)",
                job.offset,
                p.display()
            )));
        }
        let len = per_file.unwrap_or(fsize - job.offset);
        if job.bs_min > len {
            return Err(bad(format!(
                "bs ({}) is larger than the region of {} ({len} bytes)",
                job.bs_min,
                p.display()
            )));
        }
        out.push(CloneFile {
            path: p,
            region: Region {
                start: job.offset,
                len,
            },
        });
    }
    Ok(out)
}

/// The paths of clone `clone` of `job` (fio's naming for generated files:
/// `NAME.CLONE.0` in `directory` or the current directory).
pub fn clone_paths(job: &JobSpec, clone: u32) -> Vec<PathBuf> {
    let dir = job.directory.clone().unwrap_or_else(|| PathBuf::from("."));
    if job.filenames.is_empty() {
        return vec![dir.join(format!("{}.{}.0", job.name, clone))];
    }
    job.filenames
        .iter()
        .map(|f| {
            let p = Path::new(f);
            if p.is_absolute() || job.directory.is_none() {
                p.to_path_buf()
            } else {
                dir.join(p)
            }
        })
        .collect()
}

/// True when iolab's mark is on the file at `path`.
pub fn has_mark(path: &Path) -> bool {
    crate::sys::xattr::has(path, MARK_XATTR)
}

fn set_mark(file: &File) -> std::io::Result<()> {
    crate::sys::xattr::set_fd(std::os::fd::AsFd::as_fd(file), MARK_XATTR, MARK_VALUE)
}

/// Size of a block device in bytes.
fn block_device_size(path: &Path) -> Result<u64> {
    let f =
        File::open(path).map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
    let mut size: u64 = 0;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    // SAFETY: the ioctl writes one u64 into `size`.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if rc != 0 {
        return Err(Error::io(
            format!("cannot get the size of block device {}", path.display()),
            std::io::Error::last_os_error(),
        ));
    }
    Ok(size)
}

/// What preparing a file found or did.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The file.
    pub path: PathBuf,
    /// Its size after preparation.
    pub size: u64,
    /// True for a block device.
    pub block_device: bool,
    /// True when this run created the file.
    pub created: bool,
    /// A warning to show the user, if any.
    pub warning: Option<String>,
}

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
}

/// Checks the safety rules and lays the file out if needed.
pub fn prepare(need: &Need, allow_overwrite: bool, stop: &StopFlag) -> Result<Prepared> {
    let path = &need.path;
    let meta = std::fs::metadata(path);
    let Ok(meta) = meta else {
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
        return create(path, len, stop).map(|size| Prepared {
            path: path.clone(),
            size,
            block_device: false,
            created: true,
            warning: None,
        });
    };
    let ft = meta.file_type();
    if ft.is_block_device() {
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
        let size = block_device_size(path)?;
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
        return Ok(Prepared {
            path: path.clone(),
            size,
            block_device: true,
            created: false,
            warning: None,
        });
    }
    if !ft.is_file() {
        return Err(JobError::invalid(
            &need.job,
            format!("{} is not a regular file or block device", path.display()),
        )
        .into());
    }
    let ours = has_mark(path);
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
    match need.len {
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
            extend(path, size, len, stop)?;
            Ok(Prepared {
                path: path.clone(),
                size: len,
                block_device: false,
                created: false,
                warning: None,
            })
        }
        _ => Ok(Prepared {
            path: path.clone(),
            size,
            block_device: false,
            created: false,
            warning: None,
        }),
    }
}

fn create(path: &Path, len: u64, stop: &StopFlag) -> Result<u64> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| {
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            Error::io(
                format!(
                    "cannot create {} (in directory {})",
                    path.display(),
                    dir.display()
                ),
                e,
            )
        })?;
    // Mark first: if layout is interrupted the partial file is still ours.
    let mark = set_mark(&file);
    let res = fill(&file, path, 0, len, stop);
    if res.is_err() {
        drop(file);
        let _ = std::fs::remove_file(path);
        return res.map(|_| 0);
    }
    mark.map_err(|e| {
        let _ = std::fs::remove_file(path);
        Error::io(
            format!(
                "cannot mark {} as laid out by iolab (xattr {MARK_XATTR}); this file system needs user xattrs",
                path.display()
            ),
            e,
        )
    })?;
    Ok(len)
}

fn extend(path: &Path, from: u64, to: u64, stop: &StopFlag) -> Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| Error::io(format!("cannot open {} to extend it", path.display()), e))?;
    fill(&file, path, from, to, stop)
}

/// Writes random non-zero bytes into `[from, to)` and syncs them.
fn fill(file: &File, path: &Path, from: u64, to: u64, stop: &StopFlag) -> Result<()> {
    use std::os::unix::fs::FileExt;
    const CHUNK: usize = 1 << 20;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(from ^ 0x10_1ab);
    let mut buf = vec![0u8; CHUNK];
    let mut off = from;
    while off < to {
        if stop.is_set() {
            return Err(stop.interrupted());
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
    let mut f = file;
    f.flush().ok();
    file.sync_data()
        .map_err(|e| Error::io(format!("cannot sync {}", path.display()), e))?;
    Ok(())
}

/// Removes a file iolab laid out; returns a warning for the user when it
/// kept or could not remove it.
pub fn unlink_if_ours(path: &Path) -> Option<String> {
    if !has_mark(path) {
        return Some(format!(
            "unlink: kept {} because iolab did not lay it out",
            path.display()
        ));
    }
    std::fs::remove_file(path)
        .err()
        .map(|e| format!("unlink: cannot remove {}: {e}", path.display()))
}
