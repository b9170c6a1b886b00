//! The file set of a job and how its files are opened, created and synced:
//! fio's `nrfiles`, `filesize`, `filename_format`, `openfiles`,
//! `file_service_type`, `create_on_open`, `allow_file_create`,
//! `fallocate`, `overwrite`, `pre_read`, `buffered`, `sync`, `fdatasync`,
//! `end_fsync`, `fsync_on_close`.

use crate::job::error::{JobProblem, ValueError};
use crate::job::option_def::OptionGroup;
use crate::job::option_def::num as number;
use crate::job::option_def::{Kind, OptDef, Range, opt};
use crate::job::range::POSITIVE;
use crate::job::spec::JobSpec;
use crate::job::units::{parse_bool, plain_text};
use serde::{Deserialize, Serialize};

/// Most generated files of one job, all its clones together (`nrfiles` ×
/// `numjobs`): each is a path in memory and a descriptor while it runs.
pub const MAX_JOB_FILES: u64 = 1 << 20;

/// How writes reach storage: fio's `sync` (open flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SyncMode {
    /// Buffered writes (`sync=0`, `none`).
    #[default]
    None,
    /// `O_SYNC` (`sync=1`, `sync`).
    Sync,
    /// `O_DSYNC` (`sync=dsync`).
    Dsync,
}

/// The settings of this group in a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileSet {
    /// Files per clone when their names are generated (fio's `nrfiles`).
    pub nrfiles: u32,
    /// Size of each file, or the range each file's size is drawn from.
    pub filesize: Option<(u64, u64)>,
    /// How generated files are named (`$jobname`, `$jobnum`, `$filenum`).
    pub filename_format: Option<String>,
    /// fio's `openfiles`: accepted; iolab opens every file of a clone once,
    /// before timing starts.
    pub openfiles: Option<u32>,
    /// Open flags for writes.
    pub sync: SyncMode,
    /// `fdatasync` every N writes (0: never).
    pub fdatasync: u64,
    /// fsync every file once the clone's I/O is done, inside its runtime.
    pub end_fsync: bool,
    /// fsync every file as the clone closes it (after its I/O).
    pub fsync_on_close: bool,
    /// fio's `create_on_open`: accepted (iolab lays files out before the
    /// run either way; the files end up the same).
    pub create_on_open: bool,
    /// fio's `allow_file_create`: false refuses a job whose file is missing.
    pub allow_file_create: bool,
    /// fio's `fallocate` as written: how a new file that the job only
    /// writes is made ([`FileSet::allocate`]).
    pub fallocate: String,
    /// fio's `overwrite`: a new file a write job uses gets data written
    /// first, not only space.
    pub overwrite: bool,
    /// Read the files into the page cache before the job (`cache=warm`).
    pub pre_read: bool,
    /// fio's `fill_device`: write until the file system is full (ENOSPC or
    /// EDQUOT ends the job without an error); without `size`, no end but that.
    pub fill_device: bool,
}

impl Default for FileSet {
    fn default() -> FileSet {
        FileSet {
            nrfiles: 1,
            filesize: None,
            filename_format: None,
            openfiles: None,
            sync: SyncMode::None,
            fdatasync: 0,
            end_fsync: false,
            fsync_on_close: false,
            create_on_open: false,
            allow_file_create: true,
            fallocate: "native".into(),
            overwrite: false,
            pre_read: false,
            fill_device: false,
        }
    }
}

/// How a file that a job only writes is made (fio's `fallocate`): space,
/// not data (fio writes data only for a job that reads, or with `overwrite`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocate {
    /// Nothing: the file is made empty and grows as it is written.
    None,
    /// `fallocate(fd, 0, ...)` (fio's default on Linux).
    Native,
    /// `posix_fallocate`.
    Posix,
    /// `fallocate(FALLOC_FL_KEEP_SIZE)`: blocks reserved, the size still 0.
    Keep,
    /// `ftruncate` to the size: sparse.
    Truncate,
}

impl FileSet {
    /// fio's `fallocate` mode.
    pub fn allocate(&self) -> Allocate {
        match self.fallocate.as_str() {
            "none" | "0" => Allocate::None,
            "posix" | "1" => Allocate::Posix,
            "keep" => Allocate::Keep,
            "truncate" => Allocate::Truncate,
            _ => Allocate::Native,
        }
    }

    /// The name of generated file `file` of clone `clone` of job `job`
    /// (fio's `filename_format`, default `$jobname.$jobnum.$filenum`).
    pub fn generated_name(&self, job: &str, clone: u32, file: u32) -> String {
        let format = (self.filename_format.as_deref()).unwrap_or("$jobname.$jobnum.$filenum");
        format
            .replace("$jobname", job)
            .replace("$jobnum", &clone.to_string())
            .replace("$filenum", &file.to_string())
            .replace("$clientuid", "0")
    }

    /// The open flags `sync` asks for.
    pub fn open_flags(&self) -> libc::c_int {
        match self.sync {
            SyncMode::None => 0,
            SyncMode::Sync => libc::O_SYNC,
            SyncMode::Dsync => libc::O_DSYNC,
        }
    }
}

const UINT: Range = Range {
    min: 0,
    max: u32::MAX as u64,
};

/// This group's rows of the option table.
pub const OPTIONS: &[OptDef] = &[
    OptDef {
        aliases: &["nr_files"],
        ..opt(
            "nrfiles",
            Kind::Int(Range {
                min: 1,
                max: crate::job::range::MAX_FILES as u64,
            }),
            "files per clone when names are generated (NAME.CLONE.FILE)",
        )
    },
    opt(
        "filesize",
        Kind::SizeRange(POSITIVE),
        "size of each file, or LOW-HIGH: each file's size drawn from the range",
    ),
    opt(
        "filename_format",
        Kind::Str,
        "names of generated files: $jobname, $jobnum, $filenum",
    ),
    opt(
        "openfiles",
        Kind::Int(Range {
            min: 1,
            max: u32::MAX as u64,
        }),
        "accepted: iolab opens every file of a clone once, before timing",
    ),
    opt(
        "file_service_type",
        Kind::Str,
        "how I/Os go over a clone's files: roundrobin (each I/O to the next file)",
    ),
    opt(
        "create_on_open",
        Kind::Bool,
        "accepted: iolab lays files out before the run either way",
    ),
    opt(
        "allow_file_create",
        Kind::Bool,
        "0: refuse a job whose file does not exist (default 1)",
    ),
    opt(
        "fallocate",
        Kind::Choice(&["none", "native", "posix", "keep", "truncate", "0", "1"]),
        "how a new file that the job only writes is made (default native: fallocate); a job that reads gets data written",
    ),
    opt(
        "overwrite",
        Kind::Bool,
        "1: a new file a write job uses is laid out with data first, not only allocated",
    ),
    opt(
        "pre_read",
        Kind::Bool,
        "read the files into the page cache before the job (cache=warm)",
    ),
    opt(
        "buffered",
        Kind::Bool,
        "0: O_DIRECT (the opposite of direct)",
    ),
    opt(
        "sync",
        Kind::Choice(&["0", "1", "none", "sync", "dsync"]),
        "open for synchronous writes: 1/sync O_SYNC, dsync O_DSYNC",
    ),
    opt(
        "fdatasync",
        Kind::Int(UINT),
        "fdatasync after every N writes (timed as fsync, fio's sync)",
    ),
    opt(
        "end_fsync",
        Kind::Bool,
        "fsync each file when the clone's I/O is done",
    ),
    opt(
        "fsync_on_close",
        Kind::Bool,
        "fsync each file as the clone closes it",
    ),
    OptDef {
        aliases: &["fill_fs"],
        ..opt(
            "fill_device",
            Kind::Bool,
            "write until the file system is full: ENOSPC ends the job, without an error",
        )
    },
    opt(
        "create_serialize",
        Kind::Bool,
        "accepted: iolab lays out every file before the run, one after another",
    ),
];

/// Applies one of [`OPTIONS`].
fn apply(job: &mut JobSpec, def: &OptDef, v: &str) -> Result<(), JobProblem> {
    let f = &mut job.files;
    match def.name {
        "nrfiles" => f.nrfiles = number(def, v)?,
        "filesize" => f.filesize = Some(def.kind.number_pair(v)?),
        "filename_format" => {
            plain_text("filename_format", v)?;
            if v.trim().is_empty() {
                return Err(ValueError::Empty("filename_format").into());
            }
            f.filename_format = Some(v.to_string());
        }
        "openfiles" => f.openfiles = Some(number(def, v)?),
        "file_service_type" => match v {
            "roundrobin" | "roundrobin:1" => {}
            other => {
                return Err(JobProblem::Invalid(format!(
                    "file_service_type={other} is not supported by iolab yet (iolab sends \
                     each I/O to the next file: roundrobin)"
                )));
            }
        },
        "create_on_open" => f.create_on_open = parse_bool(v)?,
        "allow_file_create" => f.allow_file_create = parse_bool(v)?,
        "fallocate" => f.fallocate = v.to_string(),
        "overwrite" => f.overwrite = parse_bool(v)?,
        "pre_read" => f.pre_read = parse_bool(v)?,
        "buffered" => job.direct = !parse_bool(v)?,
        "sync" => {
            f.sync = match v {
                "0" | "none" => SyncMode::None,
                "1" | "sync" => SyncMode::Sync,
                _ => SyncMode::Dsync,
            }
        }
        "fdatasync" => f.fdatasync = number(def, v)?,
        "end_fsync" => f.end_fsync = parse_bool(v)?,
        "fsync_on_close" => f.fsync_on_close = parse_bool(v)?,
        "fill_device" => f.fill_device = parse_bool(v)?,
        "create_serialize" => {
            parse_bool(v)?;
        }
        other => unreachable!("files group and its table disagree on '{other}'"),
    }
    Ok(())
}

/// The rules between this group's options.
fn validate(job: &JobSpec) -> Result<(), JobProblem> {
    let f = &job.files;
    if let Some((lo, hi)) = f.filesize {
        if lo > hi {
            return Err(JobProblem::Invalid(format!(
                "filesize minimum {lo} is larger than its maximum {hi}"
            )));
        }
        if job.offset >= lo {
            return Err(JobProblem::Invalid(format!(
                "offset ({}) is not inside the smallest file (filesize {lo})",
                job.offset
            )));
        }
    }
    let files = u64::from(f.nrfiles) * u64::from(job.numjobs);
    if job.filenames.is_empty() && files > MAX_JOB_FILES {
        return Err(JobProblem::Invalid(format!(
            "nrfiles ({}) × numjobs ({}) is more than {MAX_JOB_FILES} files",
            f.nrfiles, job.numjobs
        )));
    }
    let only_writes = job.writes() && !job.reads() && !job.trims();
    if f.fill_device && (!only_writes || job.pattern != crate::job::spec::Pattern::Sequential) {
        return Err(JobProblem::Invalid(
            "fill_device=1 is supported for sequential writes (rw=write) only".into(),
        ));
    }
    if f.fdatasync > 0 && job.fsync > 0 {
        return Err(JobProblem::Invalid(
            "fsync and fdatasync both given; give one".into(),
        ));
    }
    Ok(())
}

/// The group.
pub const GROUP: OptionGroup = OptionGroup {
    name: "Files",
    options: OPTIONS,
    apply,
    validate,
};
