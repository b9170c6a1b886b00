//! `JobSpec`: one fully resolved, validated job, and the small types it is
//! made of. How options become a job is in [`super::apply`], the rules
//! between options in [`super::validate`].

use crate::engine::{EngineConfig, EngineDef, EngineFlags};
use serde::{Deserialize, Deserializer, Serialize};
use std::path::PathBuf;

/// Order of the offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pattern {
    /// Sequential from the start of the region.
    Sequential,
    /// Uniformly random, each block once per loop.
    Random,
}

/// Which directions a job issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mix {
    /// Reads only.
    Read,
    /// Writes only.
    Write,
    /// Reads and writes, `rwmixread` percent reads.
    Mixed,
    /// Trims only (fio's `trim`, `randtrim`); they plan as reads would.
    Trim,
    /// Each block trimmed, then written (fio's `trimwrite`,
    /// `randtrimwrite`); they plan as writes, each preceded by its trim.
    TrimWrite,
}

/// Page-cache state wanted before each repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CachePolicy {
    /// Evict the file's pages (and verify).
    Cold,
    /// Read the whole region first.
    Warm,
    /// Leave the cache as it is.
    Keep,
}

impl CachePolicy {
    /// Name as written in job files.
    pub fn name(self) -> &'static str {
        match self {
            CachePolicy::Cold => "cold",
            CachePolicy::Warm => "warm",
            CachePolicy::Keep => "keep",
        }
    }
}

/// The `posix_fadvise` hint given once when a file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FadviseHint {
    /// No hint.
    None,
    /// SEQUENTIAL or RANDOM according to the pattern (fio's default, `1`).
    ByPattern,
    /// POSIX_FADV_SEQUENTIAL.
    Sequential,
    /// POSIX_FADV_RANDOM.
    Random,
    /// POSIX_FADV_NOREUSE.
    NoReuse,
}

/// A validated job.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobSpec {
    /// Job name.
    pub name: String,
    /// The name of its job-file section (or `--name` on the command line),
    /// which fio names generated files after even when `name=` (say in
    /// `[global]`) renames the job. Empty in runs stored before it existed.
    #[serde(default)]
    pub section: String,
    /// Files given by `filename` (split at ':'); empty means generated names.
    pub filenames: Vec<String>,
    /// `directory`, for relative or generated file names.
    pub directory: Option<PathBuf>,
    /// Bytes per loop; `None`: the existing file's size.
    pub size: Option<u64>,
    /// Start of the region in each file.
    pub offset: u64,
    /// Sequential or random.
    pub pattern: Pattern,
    /// Read, write or mixed.
    pub mix: Mix,
    /// Percentage of reads for mixed jobs.
    pub rwmixread: u32,
    /// Smallest I/O size.
    pub bs_min: u64,
    /// Largest I/O size.
    pub bs_max: u64,
    /// Passes over the region.
    pub loops: u64,
    /// Stop after this many I/Os.
    pub number_ios: Option<u64>,
    /// Stop after this many microseconds.
    pub runtime_us: Option<u64>,
    /// Repeat the region until `runtime` has passed.
    pub time_based: bool,
    /// Clones, one thread each.
    pub numjobs: u32,
    /// Report the clones as one job.
    pub group_reporting: bool,
    /// fio's `description`: free text, shown as `desc` in the JSON.
    #[serde(default)]
    pub description: Option<String>,
    /// The options it has from `[global]` sections or the command line's
    /// globals (fio's "global options"); the others are its own.
    #[serde(default)]
    pub global_options: Vec<(String, String)>,
    /// The file set and how its files are opened and synced (`nrfiles`,
    /// `filesize`, `sync`, `end_fsync`, ...).
    #[serde(default)]
    pub files: super::groups::files::FileSet,
    /// Which percentiles the reports show (`percentile_list`, ...).
    #[serde(default)]
    pub report: super::groups::report::Report,
    /// How its threads are scheduled (`nice`, `prio`, `cpus_allowed`, ...).
    #[serde(default)]
    pub process: super::groups::process::Process,
    /// Data verification and what written buffers hold (`verify`,
    /// `verify_*`, `buffer_pattern`, `refill_buffers`, ...).
    #[serde(default)]
    pub verify: super::groups::verify::Verify,
    /// Where the I/Os go and how large they are, beyond the core options
    /// (`bssplit`, `norandommap`, `random_distribution`, zones, ...).
    #[serde(default)]
    pub access: super::groups::access::Access,
    /// Where its I/O buffers live (`iomem`, `iomem_align`).
    #[serde(default)]
    pub memory: super::groups::memory::Memory,
    /// When it starts and what ends it (`startdelay`, `wait_for`,
    /// `new_group`, `exitall`, `exit_what`, `steadystate`, ...).
    #[serde(default)]
    pub lifecycle: super::groups::lifecycle::Lifecycle,
    /// Per-I/O priorities (`cmdprio_*`).
    #[serde(default)]
    pub cmdprio: crate::engine::cmdprio::CmdprioSpec,
    /// The engine options that carry values (`donorname`, `program`, ...).
    #[serde(default)]
    pub engine_opts: super::groups::engine_opts::EngineOpts,
    /// When each I/O may start and which times are taken (`rate*`,
    /// `thinktime*`, `ramp_time`, `flow*`, `latency_target`, `gtod_reduce`).
    #[serde(default)]
    pub pacing: super::groups::pacing::Pacing,
    /// fio's `stonewall`: this job starts once every job before it ended
    /// (in each repetition). Absent from runs stored before it existed.
    #[serde(default)]
    pub stonewall: bool,
    /// The engine's name in [`crate::engine::ENGINES`]; for a result
    /// imported from fio, as fio wrote it (iolab may not have that engine).
    #[serde(deserialize_with = "engine_name")]
    pub engine: String,
    /// O_DIRECT.
    pub direct: bool,
    /// fio's `invalidate` (used when `cache` is not given).
    pub invalidate: bool,
    /// Hint at open.
    pub fadvise_hint: FadviseHint,
    /// Same sequence every run.
    pub randrepeat: bool,
    /// Seed of the random sequence.
    pub randseed: u64,
    /// fsync every N writes (0: never).
    pub fsync: u64,
    /// Remove laid-out files afterwards.
    pub unlink: bool,
    /// WILLNEED advice this many I/Os ahead (0: none).
    pub prefetch: u64,
    /// Cache state before each repetition.
    pub cache: CachePolicy,
    /// Repetitions.
    pub repeat: u32,
    /// I/Os in flight (async engines).
    pub iodepth: u32,
    /// Submit when this many I/Os are queued (fio's `iodepth_batch_submit`).
    pub iodepth_batch_submit: u32,
    /// Wait for at least this many completions at a time.
    pub iodepth_batch_complete_min: u32,
    /// Take at most this many completions at a time (fio's
    /// `iodepth_batch_complete_max`; unset: `iodepth_batch_complete_min`,
    /// fio's default).
    #[serde(default)]
    pub iodepth_batch_complete_max: Option<u32>,
    /// Once the queue is full, reap until this many are in flight (fio's
    /// `iodepth_low`; unset, 0 or over `iodepth`: `iodepth`).
    #[serde(default)]
    pub iodepth_low: Option<u32>,
    /// Engine options (`fixedbufs`, `hipri`, `nowait`, ...).
    #[serde(flatten)]
    pub flags: EngineFlags,
    /// Logs to write: fio's `write_*_log` prefixes.
    pub logs: LogSpec,
    /// How the logs are written (`log_offset`, `per_job_logs`,
    /// `log_compression`, `log_store_compressed`).
    #[serde(default)]
    pub log_format: super::groups::logs::LogFormat,
    /// The options as written (canonical names), for reports.
    pub options: Vec<(String, String)>,
}

/// fio's per-job log files (`write_bw_log` and friends).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogSpec {
    /// `write_bw_log` prefix.
    pub bw: Option<String>,
    /// `write_lat_log` prefix (lat, clat and slat logs).
    pub lat: Option<String>,
    /// `write_iops_log` prefix.
    pub iops: Option<String>,
    /// `write_hist_log` prefix.
    pub hist: Option<String>,
    /// Averaging interval in ms; 0 logs every I/O (`log_avg_msec`).
    pub avg_msec: u64,
    /// Histogram log interval in ms (`log_hist_msec`).
    pub hist_msec: u64,
    /// `write_iolog` file: fio's iolog v3 of every I/O.
    #[serde(default)]
    pub iolog: Option<String>,
}

impl LogSpec {
    /// True when any per-I/O log is asked for (`log_avg_msec=0`, or
    /// `write_iolog`).
    pub fn per_io(&self) -> bool {
        self.per_io_dir().is_some()
    }

    /// Where the per-I/O logs go (the directory of the first log prefix),
    /// when any is asked for: their entries spill there while the job runs.
    pub fn per_io_dir(&self) -> Option<std::path::PathBuf> {
        let averaged = self.avg_msec != 0;
        let prefix = (self.lat.as_ref())
            .or(self.bw.as_ref())
            .or(self.iops.as_ref())
            .filter(|_| !averaged)
            .or(self.iolog.as_ref())?;
        let dir = std::path::Path::new(prefix)
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        Some(dir.to_path_buf())
    }
}

/// fio's default seed when `randrepeat=1` and no `randseed` is given.
pub const DEFAULT_SEED: u64 = 0x89ab_cdef_0123_4567;

impl JobSpec {
    /// fio's defaults for a job called `name`.
    pub(super) fn defaults(name: &str) -> JobSpec {
        JobSpec {
            name: name.to_string(),
            section: name.to_string(),
            filenames: Vec::new(),
            directory: None,
            size: None,
            offset: 0,
            pattern: Pattern::Sequential,
            mix: Mix::Read,
            rwmixread: 50,
            bs_min: 4096,
            bs_max: 4096,
            loops: 1,
            number_ios: None,
            runtime_us: None,
            time_based: false,
            numjobs: 1,
            group_reporting: false,
            stonewall: false,
            global_options: Vec::new(),
            files: Default::default(),
            report: Default::default(),
            process: Default::default(),
            verify: Default::default(),
            access: Default::default(),
            memory: Default::default(),
            lifecycle: Default::default(),
            cmdprio: Default::default(),
            engine_opts: Default::default(),
            pacing: Default::default(),
            description: None,
            engine: "psync".into(),
            direct: false,
            invalidate: true,
            fadvise_hint: FadviseHint::ByPattern,
            randrepeat: true,
            randseed: DEFAULT_SEED,
            fsync: 0,
            unlink: false,
            prefetch: 0,
            cache: CachePolicy::Cold,
            repeat: 1,
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: None,
            iodepth_low: None,
            flags: EngineFlags::default(),
            logs: LogSpec::default(),
            log_format: Default::default(),
            options: Vec::new(),
        }
    }

    /// The registry's definition of the job's engine (`None` only for an
    /// imported result whose engine iolab does not have).
    pub fn engine_def(&self) -> Option<&'static EngineDef> {
        crate::engine::find(&self.engine).map(|e| e.item)
    }

    /// True when the engine lays out and opens no file before the run
    /// (`null`, `filecreate`: [`crate::engine::Engine::DISKLESS`]).
    pub fn diskless(&self) -> bool {
        self.engine_def().is_some_and(|d| d.diskless)
    }

    /// True when the engine keeps several I/Os in flight.
    pub fn queued(&self) -> bool {
        self.engine_def().is_some_and(|d| d.queued)
    }

    /// The I/O slots of a clone's queue and the depth a full queue is
    /// reaped down to (fio's `iodepth_low`): fio's io_uring engine rounds
    /// `iodepth` up to a power of two for its ring and its pool of I/Os, so
    /// a full queue holds that many and is reaped down to `iodepth`.
    pub fn queue_depths(&self) -> (u32, u32) {
        if !self.queued() {
            return (1, 1);
        }
        let depth = self.iodepth.max(1);
        let low = match self.iodepth_low {
            Some(l) if l > 0 && l <= depth => l,
            _ => depth,
        };
        let slots = match crate::engine::find(&self.engine).map(|e| e.name) {
            Some("io_uring") => depth.next_power_of_two(),
            _ => depth,
        };
        (slots, low)
    }

    /// What the engine needs to know of this job.
    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            iodepth: self.iodepth,
            direct: self.direct,
            writes: self.writes(),
            reads: self.mix == Mix::Read || (self.mix == Mix::Mixed && self.rwmixread > 0),
            trims: self.trims(),
            flags: self.flags,
            cmdprio: crate::engine::cmdprio::CmdprioSpec {
                seed: self.randseed,
                ..self.cmdprio
            },
            bs_min: self.bs_min,
            syncs: self.fsync > 0 || self.files.fdatasync > 0,
            args: std::sync::Arc::new(crate::engine::EngineArgs {
                e4defrag: self.engine_opts.e4defrag.clone(),
                exec: self.engine_opts.exec.clone(),
                cpuio: self.engine_opts.cpuio.clone(),
                name: self.name.clone(),
                directory: self.directory.clone(),
                offset: self.offset,
                filesize_high: self.files.filesize.map_or(0, |(_, hi)| hi),
                runtime_us: self.runtime_us,
            }),
        }
    }

    /// What generated file names start with (`$jobname`): the section's
    /// name, as fio, not a `name=` given to the job.
    pub fn file_stem(&self) -> &str {
        if self.section.is_empty() {
            &self.name
        } else {
            &self.section
        }
    }

    /// True when the job writes (`verify_only` writes nothing).
    pub fn writes(&self) -> bool {
        !matches!(self.mix, Mix::Read | Mix::Trim) && !self.verify.only
    }

    /// True when the job's own I/O reads (fio's `td_read`): `rw` reads or
    /// mixes; a write job's verify reads are not its own.
    pub fn reads(&self) -> bool {
        matches!(self.mix, Mix::Read | Mix::Mixed)
    }

    /// True when the job trims (`rw=trim`, `randtrim`, `trimwrite`, ...).
    pub fn trims(&self) -> bool {
        matches!(self.mix, Mix::Trim | Mix::TrimWrite)
    }

    /// True when the job changes its files: it writes, or its engine's
    /// reads need a writable file ([`crate::engine::Engine::WRITES_ON_READ`]).
    /// Its files are then opened read-write and the safety rules for
    /// writes apply.
    pub fn changes_files(&self) -> bool {
        self.writes() || self.trims() || self.engine_def().is_some_and(|d| d.writes_on_read)
    }

    /// The value of `rw` as fio spells it.
    pub fn rw_name(&self) -> &'static str {
        match (self.pattern, self.mix) {
            (Pattern::Sequential, Mix::Read) => "read",
            (Pattern::Sequential, Mix::Write) => "write",
            (Pattern::Sequential, Mix::Mixed) => "rw",
            (Pattern::Random, Mix::Read) => "randread",
            (Pattern::Random, Mix::Write) => "randwrite",
            (Pattern::Random, Mix::Mixed) => "randrw",
            (Pattern::Sequential, Mix::Trim) => "trim",
            (Pattern::Random, Mix::Trim) => "randtrim",
            (Pattern::Sequential, Mix::TrimWrite) => "trimwrite",
            (Pattern::Random, Mix::TrimWrite) => "randtrimwrite",
        }
    }
}

/// Reads an engine name; results stored before the engine registry named
/// engines by their Rust variant (`"IoUring"`).
fn engine_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let name = String::deserialize(d)?;
    Ok(match name.as_str() {
        "Psync" => "psync".into(),
        "Sync" => "sync".into(),
        "Null" => "null".into(),
        "IoUring" => "io_uring".into(),
        "Libaio" => "libaio".into(),
        "Mmap" => "mmap".into(),
        _ => name,
    })
}
