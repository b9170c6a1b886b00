//! Options onto a job: each `key=value` applied with fio's meaning, in the
//! order written (globals first), then the job checked as a whole.

use super::cmdline::CommandLine;
use super::error::{JobError, JobProblem};
use super::ini::{self, Entry};
use super::options::{self, Kind};
use super::spec::{CachePolicy, FadviseHint, JobSpec, Mix, Pattern};
use super::units;
use crate::engine::EngineFlags;
use std::path::PathBuf;

impl JobSpec {
    /// Builds a job from its entries (globals first, then the section's).
    pub fn from_entries(name: &str, entries: &[Entry]) -> Result<JobSpec, JobError> {
        let mut job = JobSpec::defaults(name);
        let mut cache_given = false;
        let mut bsrange_given = false;
        for e in entries {
            let at = |p: JobProblem| JobError::at(&e.origin, &e.key, p);
            let def = options::lookup(&e.key).ok_or_else(|| at(JobProblem::UnknownOption))?;
            let raw = e.value.clone().unwrap_or_default();
            if e.value.is_none() && !matches!(def.kind, Kind::Bool | Kind::StrOrFlag) {
                return Err(at(JobProblem::NeedsValue));
            }
            if let Kind::Choice(list) = def.kind
                && !list.contains(&raw.as_str())
            {
                return Err(at(JobProblem::NotOneOf {
                    value: raw,
                    choices: list.to_vec(),
                }));
            }
            job.apply(def.name, &raw, &mut cache_given, &mut bsrange_given)
                .map_err(at)?;
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
        job.validate()?;
        Ok(job)
    }

    /// This job with `key=value` set on top of its options (a sweep
    /// point), validated again. The error names the option.
    pub fn with_option(&self, key: &str, value: &str) -> Result<JobSpec, JobError> {
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
            if k == "ioengine" {
                // Kept as written, whether iolab has that engine or not.
                job.engine = v.clone();
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
    ) -> Result<(), JobProblem> {
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
                    return Err(JobProblem::Invalid("empty filename".into()));
                }
                if self.filenames.len() > super::MAX_FILES {
                    return Err(JobProblem::Invalid(format!(
                        "{} files in one filename list (at most {})",
                        self.filenames.len(),
                        super::MAX_FILES
                    )));
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
                    "randrw" => (Pattern::Random, Mix::Mixed),
                    other => return Err(not_one_of(key, other)),
                }
            }
            "rwmixread" => self.rwmixread = int(v)? as u32,
            "bs" => {
                if v.contains(',') {
                    return Err(JobProblem::Invalid(format!(
                        "per-direction block sizes ('{v}') are not supported; give one size"
                    )));
                }
                if !*bsrange {
                    self.bs_min = size(v)?;
                    self.bs_max = self.bs_min;
                }
            }
            "blocksize_range" => {
                if v.contains(',') {
                    return Err(JobProblem::Invalid(format!(
                        "per-direction ranges ('{v}') are not supported; give one range"
                    )));
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
                let e = crate::engine::find(v)
                    .ok_or_else(|| JobProblem::Invalid(crate::engine::registry::unknown(v)))?;
                self.engine = e.name.to_string();
            }
            "direct" => self.direct = b(v)?,
            "invalidate" => self.invalidate = b(v)?,
            "fadvise_hint" => {
                self.fadvise_hint = match v {
                    "0" => FadviseHint::None,
                    "1" => FadviseHint::ByPattern,
                    "sequential" => FadviseHint::Sequential,
                    "random" => FadviseHint::Random,
                    "noreuse" => FadviseHint::NoReuse,
                    other => return Err(not_one_of(key, other)),
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
                    "keep" => CachePolicy::Keep,
                    other => return Err(not_one_of(key, other)),
                }
            }
            "repeat" => self.repeat = int(v)? as u32,
            "iodepth" => self.iodepth = int(v)? as u32,
            "iodepth_batch_submit" => self.iodepth_batch_submit = int(v)? as u32,
            "iodepth_batch_complete_min" => self.iodepth_batch_complete_min = int(v)? as u32,
            k if EngineFlags::NAMES.contains(&k) => {
                self.flags.set(k, b(v)?);
            }
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
}

/// The error for a word the option does not take, listing the ones it does
/// (from the option table, so the list is written once).
fn not_one_of(key: &str, value: &str) -> JobProblem {
    let choices = match options::lookup(key).map(|d| d.kind) {
        Some(Kind::Choice(list)) => list.to_vec(),
        _ => Vec::new(),
    };
    JobProblem::NotOneOf {
        value: value.to_string(),
        choices,
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
/// `vars` are seen by `${VAR}` in the job files ahead of the environment.
pub fn build_jobs(cl: &CommandLine, vars: &ini::Vars) -> Result<Vec<JobSpec>, JobError> {
    let mut jobs = Vec::new();
    for file in &cl.files {
        let sections = ini::parse_file(file, vars)?;
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
        return Err(JobError::plain(JobProblem::NoJob));
    }
    Ok(jobs)
}
