//! Step 1 of a run: the files of every job clone, checked and laid out
//! before timing starts ([`super::prepare`]: random non-zero data, never
//! sparse, checks on descriptors), each with the region the clone works on.

use super::StopFlag;
use super::prepare::{self, Need, Prepared};
use crate::error::{Error, Result};
use crate::job::groups::files::Allocate;
use crate::job::{JobError, JobSpec};
use crate::plan::{Region, access};
use crate::sys::fs::FileId;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

pub use prepare::MARK_XATTR;

/// A clone's file with its region.
#[derive(Debug, Clone)]
pub struct CloneFile {
    /// The file.
    pub path: PathBuf,
    /// Which file it is: the clone's open must find this one.
    pub id: FileId,
    /// The part of it the clone works on.
    pub region: Region,
    /// Not on disk: the engine uses no file (`null`).
    pub diskless: bool,
    /// Its region is worked out when the clone starts, from the file's size
    /// then: a job without `size` whose file a `fill_device` job fills
    /// first (fio sets each job's files up as the job starts).
    pub at_start: bool,
}

/// The region of a `fill_device` job without `size`: fio's `size=-1`, no
/// end but a full file system (no file system holds 4 EiB).
pub const FILL_LEN: u64 = 1 << 62;

/// Every clone's files, and what the layout holds for the run.
#[derive(Debug)]
pub struct Layout {
    /// job → clone → files.
    pub clones: Vec<Vec<Vec<CloneFile>>>,
    /// Files this run created, with their identities.
    pub created: Vec<(PathBuf, FileId)>,
    /// Block devices the run writes, held with `O_EXCL` until it ends.
    _claims: Vec<File>,
}

impl Layout {
    /// Removes the files this run created (a run that failed before it
    /// measured leaves nothing behind).
    pub fn remove_created(&self) {
        prepare::remove_created(self.created.iter().map(|(p, id)| (p.as_path(), *id)));
    }

    /// Distinct (path, region) pairs of job `j` over all its clones (none
    /// for an engine that uses no file).
    pub fn job_regions(&self, j: usize) -> Vec<(PathBuf, Region)> {
        let mut m: BTreeMap<PathBuf, Region> = BTreeMap::new();
        for cf in self.clones[j].iter().flatten().filter(|f| !f.diskless) {
            m.entry(cf.path.clone()).or_insert(cf.region);
        }
        m.into_iter().collect()
    }

    /// The identity of every file of job `j` (those on disk).
    pub fn job_ids(&self, j: usize) -> BTreeMap<PathBuf, FileId> {
        self.clones[j]
            .iter()
            .flatten()
            .filter(|f| !f.diskless)
            .map(|cf| (cf.path.clone(), cf.id))
            .collect()
    }

    /// Every file on disk, once per clone that uses it.
    pub fn all_paths(&self) -> Vec<PathBuf> {
        self.clones
            .iter()
            .flatten()
            .flatten()
            .filter(|f| !f.diskless)
            .map(|f| f.path.clone())
            .collect()
    }

    /// The paths, job → clone → files (as a result reports them).
    pub fn paths(&self) -> Vec<Vec<Vec<PathBuf>>> {
        self.clones
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

/// What every file of the jobs must offer them: its length, whether it is
/// written, whether it may be created; one entry per file. A job whose
/// engine uses no file (`null`) needs none.
pub fn needs(jobs: &[JobSpec]) -> Vec<Need> {
    let mut needs: BTreeMap<PathBuf, Need> = BTreeMap::new();
    for job in jobs.iter().filter(|j| !j.diskless()) {
        for c in 0..job.numjobs {
            let paths = clone_paths(job, c);
            let per_file = job.size.map(|s| s / paths.len() as u64);
            for (i, p) in paths.into_iter().enumerate() {
                let n = needs.entry(p.clone()).or_insert(Need {
                    path: p,
                    len: None,
                    writes: false,
                    job: job.name.clone(),
                    may_create: true,
                    make_parents: !job.filenames.is_empty() && job.directory.is_none(),
                    space_only: space_only(job),
                });
                if fills(job) {
                    // fio's fallocate_file and extend_file leave it as it is.
                    n.space_only = Some(Allocate::None);
                }
                let len = match file_len(job, c, i, per_file) {
                    None if fills(job) => Some(0),
                    len => len,
                };
                if let Some(len) = len {
                    n.len = Some(n.len.unwrap_or(0).max(len));
                }
                n.writes |= job.changes_files();
                n.may_create &= job.files.allow_file_create;
            }
        }
    }
    needs.into_values().collect()
}

/// True when `job` fills its files to ENOSPC without a `size` to stop at.
fn fills(job: &JobSpec) -> bool {
    job.files.fill_device && job.size.is_none() && job.files.filesize.is_none()
}

/// The paths some `fill_device` job of `jobs` fills.
fn filled_paths(jobs: &[JobSpec]) -> std::collections::BTreeSet<PathBuf> {
    (jobs.iter().filter(|j| fills(j)))
        .flat_map(|j| (0..j.numjobs).flat_map(move |c| clone_paths(j, c)))
        .collect()
}

/// `files` of clone `clone` of `job`, with the regions of those sized at
/// the clone's start worked out from the files' sizes now (the others as
/// they are).
pub fn sized_now(job: &JobSpec, clone: u32, files: &[CloneFile]) -> Result<Vec<CloneFile>> {
    let mut out = files.to_vec();
    let per_file = job.size.map(|s| s / files.len().max(1) as u64);
    for f in out.iter_mut().filter(|f| f.at_start) {
        let fsize = std::fs::metadata(&f.path)
            .map_err(|e| Error::io(format!("cannot stat {}", f.path.display()), e))?
            .len();
        let start = access::region_start(job, clone, fsize).min(fsize);
        let len = access::region_len(job, start, fsize, per_file);
        if job.bs_min > len {
            return Err(JobError::invalid(
                &job.name,
                format!(
                    "bs ({}) is larger than {} once filled ({fsize} bytes)",
                    job.bs_min,
                    f.path.display()
                ),
            )
            .into());
        }
        f.region = Region { start, len };
    }
    Ok(out)
}

/// How the files `job` is the first to use are made when missing: only
/// space (fio's `fallocate` mode) when it writes or trims without reading
/// them, as fio's `extend_file`; data when it reads, sets `overwrite`, or
/// its engine cannot extend a file (mmap).
fn space_only(job: &JobSpec) -> Option<Allocate> {
    let data = job.reads() || job.files.overwrite || job.engine == "mmap";
    (!data && (job.writes() || job.trims())).then(|| job.files.allocate())
}

/// The length file `i` of clone `c` must have: its `filesize`, or the
/// end of the clone's share of `size`; `None`: the file's own.
fn file_len(job: &JobSpec, c: u32, i: usize, per_file: Option<u64>) -> Option<u64> {
    match job.files.filesize {
        Some(range) => Some(file_size(job, c, i, range)),
        None => per_file.map(|pf| access::region_start(job, c, 0) + pf),
    }
}

/// Lays out every job's files (checking the safety rules) and works out
/// every clone's regions.
pub fn lay_out(jobs: &[JobSpec], allow_overwrite: bool, stop: &StopFlag) -> Result<Layout> {
    let needs = needs(jobs);
    let prepared = prepare::prepare_all(&needs, allow_overwrite, stop)?;
    let files: BTreeMap<PathBuf, &Prepared> =
        prepared.iter().map(|p| (p.path.clone(), p)).collect();
    let mut layout = Layout {
        clones: Vec::new(),
        created: prepared
            .iter()
            .filter(|p| p.created)
            .map(|p| (p.path.clone(), p.id))
            .collect(),
        _claims: Vec::new(),
    };
    let filled = filled_paths(jobs);
    for job in jobs {
        let clones = (0..job.numjobs)
            .map(|c| clone_files(job, c, &files, &filled))
            .collect::<Result<Vec<_>>>();
        match clones {
            Ok(c) => layout.clones.push(c),
            Err(e) => {
                layout.remove_created();
                return Err(e);
            }
        }
    }
    layout._claims = prepared.into_iter().filter_map(|p| p.claim).collect();
    Ok(layout)
}

/// The files and regions of clone `c` of `job`, given the files' sizes.
fn clone_files(
    job: &JobSpec,
    c: u32,
    files: &BTreeMap<PathBuf, &Prepared>,
    filled: &std::collections::BTreeSet<PathBuf>,
) -> Result<Vec<CloneFile>> {
    let paths = clone_paths(job, c);
    let per_file = job.size.map(|s| s / paths.len() as u64);
    let mut out = Vec::new();
    for (i, p) in paths.into_iter().enumerate() {
        let bad = |why: String| -> Error { JobError::invalid(&job.name, why).into() };
        let (fsize, id) = if job.diskless() {
            // fio's diskless engines: the file is as large as the job says.
            let len = file_len(job, c, i, per_file).ok_or_else(|| {
                bad(format!(
                    "ioengine={} uses no file: give size= or filesize= (as fio)",
                    job.engine
                ))
            })?;
            (len, FileId::default())
        } else if fills(job) {
            (FILL_LEN, files[&p].id)
        } else if job.size.is_none() && job.files.filesize.is_none() && filled.contains(&p) {
            out.push(CloneFile {
                id: files[&p].id,
                path: p,
                region: Region { start: 0, len: 0 },
                diskless: false,
                at_start: true,
            });
            continue;
        } else {
            (files[&p].size, files[&p].id)
        };
        let start = access::region_start(job, c, fsize);
        if start >= fsize {
            return Err(bad(format!(
                "offset {start} is beyond the end of {} ({fsize} bytes)",
                p.display()
            )));
        }
        // `size` split over the files, within each (fio: with `filesize`,
        // `size` bounds the I/O but the files keep their own sizes).
        // A region smaller than a block gets no I/O (fio's too): only the
        // regions together must hold one (below).
        let len = access::region_len(job, start, fsize, per_file);
        out.push(CloneFile {
            path: p,
            id,
            region: Region { start, len },
            diskless: job.diskless(),
            at_start: false,
        });
    }
    // fio's setup_files: the job's size (its regions together) must hold
    // its smallest block ("blocksize is larger than data set range").
    let total: u64 = out.iter().map(|f| f.region.len).sum();
    if out.iter().any(|f| !f.at_start) && job.bs_min > total {
        let why = format!(
            "bs ({}) is larger than the job's regions ({total} bytes in all; fio: \"blocksize is larger than data set range\")",
            job.bs_min
        );
        return Err(JobError::invalid(&job.name, why).into());
    }
    Ok(out)
}

/// The paths of clone `clone` of `job` (fio's naming for generated files:
/// `NAME.CLONE.FILE`, or `filename_format`, in `directory` or the current
/// directory; `nrfiles` of them).
pub fn clone_paths(job: &JobSpec, clone: u32) -> Vec<PathBuf> {
    let dir = job.directory.clone().unwrap_or_else(|| PathBuf::from("."));
    if job.filenames.is_empty() {
        let fs = &job.files;
        return (0..fs.nrfiles)
            .map(|i| dir.join(fs.generated_name(job.file_stem(), clone, i)))
            .collect();
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

/// The size of file `i` of clone `c` for `filesize=LOW-HIGH`: drawn from
/// the range, a multiple of the smallest block (as fio does), the same in
/// every run with the same seed. fio's own draw differs.
fn file_size(job: &JobSpec, c: u32, i: usize, (lo, hi): (u64, u64)) -> u64 {
    if lo == hi {
        return lo;
    }
    let seed = crate::plan::clone_seed(job, c) ^ (i as u64).wrapping_mul(0xa076_1d64_78bd_642f);
    let size = lo + crate::plan::draws::Draws::new(seed).below(hi - lo + 1);
    (size - size % job.bs_min.max(1)).max(lo)
}

/// True when iolab's mark is on the file at `path`.
pub fn has_mark(path: &Path) -> bool {
    crate::sys::xattr::has(path, MARK_XATTR)
}

/// Removes a file iolab laid out, while `path` still names the file `id`
/// the run used; returns a warning for the user when it kept or could not
/// remove it.
pub fn unlink_if_ours(path: &Path, id: FileId) -> Option<String> {
    let same = std::fs::symlink_metadata(path).is_ok_and(|m| FileId::of(&m) == id);
    if !same || !has_mark(path) {
        return Some(format!(
            "unlink: kept {} because iolab did not lay it out",
            path.display()
        ));
    }
    std::fs::remove_file(path)
        .err()
        .map(|e| format!("unlink: cannot remove {}: {e}", path.display()))
}
