//! `JobSpec`: one fully resolved, validated job, built from job-file sections
//! and command-line options with fio's inheritance rules.

use super::cmdline::CommandLine;
use super::ini::{self, Entry};
use super::options::{self, Kind};
use super::units;
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
    fn defaults(name: &str) -> JobSpec {
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

    /// Builds a job from its entries (globals first, then the section's).
    pub fn from_entries(name: &str, entries: &[Entry]) -> Result<JobSpec, String> {
        let mut job = JobSpec::defaults(name);
        let mut cache_given = false;
        let mut bsrange_given = false;
        for e in entries {
            let def = options::lookup(&e.key)
                .ok_or_else(|| format!("{}: {}", e.origin, options::unknown_message(&e.key)))?;
            let raw = e.value.clone().unwrap_or_default();
            if e.value.is_none() && !matches!(def.kind, Kind::Bool | Kind::StrOrFlag) {
                return Err(format!(
                    "{}: option '{}' needs a value ({}=VALUE)",
                    e.origin, e.key, e.key
                ));
            }
            let wrap = |msg: String| format!("{}: option '{}': {msg}", e.origin, e.key);
            if let Kind::Choice(list) = def.kind
                && !list.contains(&raw.as_str())
            {
                return Err(wrap(format!("'{raw}' is not one of {}", list.join(", "))));
            }
            job.apply(def.name, &raw, &mut cache_given, &mut bsrange_given)
                .map_err(wrap)?;
            job.options.retain(|(k, _)| k != def.name);
            job.options.push((def.name.to_string(), raw));
        }
        if !cache_given {
            job.cache = if job.invalidate {
                CachePolicy::Cold
            } else {
                CachePolicy::Keep
            };
        }
        job.validate()
            .map_err(|m| format!("job '{}': {m}", job.name))?;
        Ok(job)
    }

    /// This job with `key=value` set on top of its options (a sweep
    /// point), validated again. The error names the option.
    pub fn with_option(&self, key: &str, value: &str) -> Result<JobSpec, String> {
        let origin = ini::Origin::CommandLine(0);
        let mut entries: Vec<Entry> = self
            .options
            .iter()
            .map(|(k, v)| Entry {
                key: k.clone(),
                value: (!v.is_empty()).then(|| v.clone()),
                origin: origin.clone(),
            })
            .collect();
        entries.push(Entry {
            key: key.to_string(),
            value: Some(value.to_string()),
            origin,
        });
        JobSpec::from_entries(&self.name, &entries)
    }

    /// A job as another tool described it (fio's JSON "job options"):
    /// options iolab knows are applied, the rest kept only as written; no
    /// validation, since the files may live on another machine. Returns the
    /// job and the options that were not understood.
    pub fn from_foreign_options(name: &str, opts: &[(String, String)]) -> (JobSpec, Vec<String>) {
        let mut job = JobSpec::defaults(name);
        let mut ignored = Vec::new();
        let (mut c, mut b) = (false, false);
        for (k, v) in opts {
            let applied = options::lookup(k).is_some_and(|def| {
                let mut trial = job.clone();
                trial.apply(def.name, v, &mut c, &mut b).is_ok() && {
                    job = trial;
                    true
                }
            });
            if !applied {
                ignored.push(k.clone());
            }
            job.options.push((k.clone(), v.clone()));
        }
        (job, ignored)
    }

    fn apply(
        &mut self,
        key: &str,
        v: &str,
        cache_given: &mut bool,
        bsrange: &mut bool,
    ) -> Result<(), String> {
        use units::{parse_bool as b, parse_int as int, parse_size as size};
        match key {
            "name" => self.name = v.to_string(),
            "filename" => {
                self.filenames = v
                    .split(':')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect();
                if self.filenames.is_empty() {
                    return Err("empty filename".into());
                }
                if self.filenames.len() > crate::plan::MAX_FILES {
                    return Err(format!(
                        "{} files in one filename list (at most {})",
                        self.filenames.len(),
                        crate::plan::MAX_FILES
                    ));
                }
            }
            "directory" => self.directory = Some(PathBuf::from(v)),
            "size" => self.size = Some(size(v)?),
            "offset" => self.offset = size(v)?,
            "rw" => {
                (self.pattern, self.mix) = match v {
                    "read" => (Pattern::Sequential, Mix::Read),
                    "write" => (Pattern::Sequential, Mix::Write),
                    "rw" | "readwrite" => (Pattern::Sequential, Mix::Mixed),
                    "randread" => (Pattern::Random, Mix::Read),
                    "randwrite" => (Pattern::Random, Mix::Write),
                    _ => (Pattern::Random, Mix::Mixed),
                }
            }
            "rwmixread" => self.rwmixread = int(v)? as u32,
            "bs" => {
                if v.contains(',') {
                    return Err(format!(
                        "per-direction block sizes ('{v}') are not supported; give one size"
                    ));
                }
                if !*bsrange {
                    self.bs_min = size(v)?;
                    self.bs_max = self.bs_min;
                }
            }
            "blocksize_range" => {
                if v.contains(',') {
                    return Err(format!(
                        "per-direction ranges ('{v}') are not supported; give one range"
                    ));
                }
                (self.bs_min, self.bs_max) = units::parse_size_range(v)?;
                *bsrange = true;
            }
            "loops" => self.loops = int(v)?,
            "number_ios" => self.number_ios = Some(int(v)?).filter(|n| *n > 0),
            "runtime" => self.runtime_us = Some(units::parse_time_us(v)?).filter(|t| *t > 0),
            "time_based" => self.time_based = b(v)?,
            "numjobs" => self.numjobs = int(v)? as u32,
            "thread" => {
                b(v)?;
            }
            "group_reporting" => self.group_reporting = b(v)?,
            "ioengine" => {
                self.engine = match v {
                    "psync" => EngineKind::Psync,
                    "sync" => EngineKind::Sync,
                    "io_uring" => EngineKind::IoUring,
                    "libaio" => EngineKind::Libaio,
                    "mmap" => EngineKind::Mmap,
                    _ => EngineKind::Null,
                }
            }
            "direct" => self.direct = b(v)?,
            "invalidate" => self.invalidate = b(v)?,
            "fadvise_hint" => {
                self.fadvise_hint = match v {
                    "0" => FadviseHint::None,
                    "1" => FadviseHint::ByPattern,
                    "sequential" => FadviseHint::Sequential,
                    "random" => FadviseHint::Random,
                    _ => FadviseHint::NoReuse,
                }
            }
            "randrepeat" => self.randrepeat = b(v)?,
            "randseed" => self.randseed = int(v)?,
            "fsync" => self.fsync = int(v)?,
            "unlink" => self.unlink = b(v)?,
            "prefetch" => self.prefetch = int(v)?,
            "cache" => {
                *cache_given = true;
                self.cache = match v {
                    "cold" => CachePolicy::Cold,
                    "warm" => CachePolicy::Warm,
                    _ => CachePolicy::Keep,
                }
            }
            "repeat" => self.repeat = int(v)? as u32,
            "iodepth" => self.iodepth = int(v)? as u32,
            "iodepth_batch_submit" => self.iodepth_batch_submit = int(v)? as u32,
            "iodepth_batch_complete_min" => self.iodepth_batch_complete_min = int(v)? as u32,
            "fixedbufs" => self.fixedbufs = b(v)?,
            "registerfiles" => self.registerfiles = b(v)?,
            "sqthread_poll" => self.sqthread_poll = b(v)?,
            "hipri" => self.hipri = b(v)?,
            "write_bw_log" => self.logs.bw = Some(log_prefix(v, &self.name)),
            "write_lat_log" => self.logs.lat = Some(log_prefix(v, &self.name)),
            "write_iops_log" => self.logs.iops = Some(log_prefix(v, &self.name)),
            "write_hist_log" => self.logs.hist = Some(log_prefix(v, &self.name)),
            "log_avg_msec" => self.logs.avg_msec = int(v)?,
            "log_hist_msec" => self.logs.hist_msec = int(v)?,
            other => unreachable!("option table and apply() disagree on '{other}'"),
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), String> {
        if self.bs_min == 0 {
            return Err("bs must be at least 1 byte".into());
        }
        if self.bs_min > self.bs_max {
            return Err(format!(
                "blocksize_range minimum {} is larger than its maximum {}",
                self.bs_min, self.bs_max
            ));
        }
        if self.bs_max > u32::MAX as u64 {
            return Err(format!("bs {} is too large (at most 4 GiB)", self.bs_max));
        }
        if let Some(size) = self.size {
            if size == 0 {
                return Err("size must be larger than 0".into());
            }
            if self.bs_min > size {
                return Err(format!("bs ({}) is larger than size ({size})", self.bs_min));
            }
        }
        if self.rwmixread > 100 {
            return Err(format!(
                "rwmixread={} is not a percentage (0-100)",
                self.rwmixread
            ));
        }
        if self.numjobs == 0 {
            return Err("numjobs must be at least 1".into());
        }
        if self.repeat == 0 {
            return Err("repeat must be at least 1".into());
        }
        if self.loops == 0 {
            return Err("loops must be at least 1".into());
        }
        if self.iodepth == 0 || self.iodepth > 32768 {
            return Err(format!(
                "iodepth={} must be between 1 and 32768",
                self.iodepth
            ));
        }
        if self.iodepth_batch_submit == 0 {
            return Err("iodepth_batch_submit must be at least 1".into());
        }
        if self.iodepth_batch_complete_min == 0 {
            return Err("iodepth_batch_complete_min must be at least 1".into());
        }
        for (on, name) in [
            (self.fixedbufs, "fixedbufs"),
            (self.registerfiles, "registerfiles"),
            (self.sqthread_poll, "sqthread_poll"),
            (self.hipri, "hipri"),
        ] {
            if on && self.engine != EngineKind::IoUring {
                return Err(format!(
                    "option '{name}' applies to ioengine=io_uring only (this job uses ioengine={})",
                    self.engine.name()
                ));
            }
        }
        if self.hipri && !self.direct {
            return Err("option 'hipri' (polled completions) works only with direct=1".into());
        }
        if self.logs.hist.is_some() && self.logs.hist_msec == 0 {
            return Err("write_hist_log needs log_hist_msec (e.g. log_hist_msec=1000)".into());
        }
        if self.time_based && self.runtime_us.is_none() {
            return Err("time_based needs a runtime (e.g. runtime=10s)".into());
        }
        if self.direct
            && (!self.bs_min.is_multiple_of(512)
                || !self.bs_max.is_multiple_of(512)
                || !self.offset.is_multiple_of(512))
        {
            return Err(format!(
                "direct=1 needs bs and offset in multiples of 512 bytes (bs {}-{}, offset {})",
                self.bs_min, self.bs_max, self.offset
            ));
        }
        Ok(())
    }
}

/// fio's log prefix: the value, or the job name for a bare flag.
fn log_prefix(v: &str, job: &str) -> String {
    if v.is_empty() {
        job.to_string()
    } else {
        v.to_string()
    }
}

/// Builds every job: command-line globals are defaults for all jobs, job
/// files' `[global]` sections apply to the job sections after them, and jobs
/// started with `--name` come after those of the job files (as in fio).
pub fn build_jobs(cl: &CommandLine) -> Result<Vec<JobSpec>, String> {
    let mut jobs = Vec::new();
    for file in &cl.files {
        let sections = ini::parse_file(file)?;
        let mut globals = cl.globals.clone();
        for s in sections {
            if s.name == "global" {
                globals.extend(s.entries);
            } else {
                let mut entries = globals.clone();
                entries.extend(s.entries);
                jobs.push(JobSpec::from_entries(&s.name, &entries)?);
            }
        }
    }
    for s in &cl.jobs {
        let mut entries = cl.globals.clone();
        entries.extend(s.entries.iter().cloned());
        jobs.push(JobSpec::from_entries(&s.name, &entries)?);
    }
    if jobs.is_empty() {
        return Err(
            "no job given: pass a job file or start one with --name=NAME (e.g. iolab run --name=t --filename=F --size=64M --rw=randread)"
                .into(),
        );
    }
    Ok(jobs)
}
