//! `JobSpec`: one fully resolved, validated job, and the small types it is
//! made of. How options become a job is in [`super::apply`], the rules
//! between options in [`super::validate`].

use serde::{Deserialize, Serialize};
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
}

/// How I/O is issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EngineKind {
    /// `pread`/`pwrite`.
    Psync,
    /// `lseek` then `read`/`write`.
    Sync,
    /// No I/O at all: measures iolab's own overhead.
    Null,
    /// io_uring, `iodepth` I/Os in flight.
    IoUring,
    /// Kernel AIO (`io_submit`), `iodepth` I/Os in flight.
    Libaio,
    /// Copies from and to a shared mapping.
    Mmap,
}

impl EngineKind {
    /// fio's name of the engine.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Psync => "psync",
            EngineKind::Sync => "sync",
            EngineKind::Null => "null",
            EngineKind::IoUring => "io_uring",
            EngineKind::Libaio => "libaio",
            EngineKind::Mmap => "mmap",
        }
    }

    /// True for engines that keep several I/Os in flight.
    pub fn is_async(self) -> bool {
        matches!(self, EngineKind::IoUring | EngineKind::Libaio)
    }
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
    /// Engine.
    pub engine: EngineKind,
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
    /// io_uring: registered buffers.
    pub fixedbufs: bool,
    /// io_uring: registered files.
    pub registerfiles: bool,
    /// io_uring: kernel submission polling thread.
    pub sqthread_poll: bool,
    /// io_uring: polled completions.
    pub hipri: bool,
    /// Logs to write: fio's `write_*_log` prefixes.
    pub logs: LogSpec,
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
}

impl LogSpec {
    /// True when any per-I/O log is asked for (`log_avg_msec=0`).
    pub fn per_io(&self) -> bool {
        self.avg_msec == 0 && (self.bw.is_some() || self.lat.is_some() || self.iops.is_some())
    }
}

/// fio's default seed when `randrepeat=1` and no `randseed` is given.
pub const DEFAULT_SEED: u64 = 0x89ab_cdef_0123_4567;

impl JobSpec {
    /// fio's defaults for a job called `name`.
    pub(super) fn defaults(name: &str) -> JobSpec {
        JobSpec {
            name: name.to_string(),
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
            engine: EngineKind::Psync,
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
            fixedbufs: false,
            registerfiles: false,
            sqthread_poll: false,
            hipri: false,
            logs: LogSpec::default(),
            options: Vec::new(),
        }
    }

    /// True when the job writes.
    pub fn writes(&self) -> bool {
        self.mix != Mix::Read
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
        }
    }
}
