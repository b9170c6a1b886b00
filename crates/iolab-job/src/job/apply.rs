//! Options onto a job: each `key=value` applied with fio's meaning, in the
//! order written (globals first), then the job checked as a whole.

use super::cmdline::CommandLine;
use super::error::{JobError, JobProblem, ValueError};
use super::groups::access_values::{per_direction, rw_step, share_of_file};
use super::ini::{self, Entry, Section};
use super::option_def::num;
use super::options::{self, Kind, OptDef};
use super::spec::{CachePolicy, FadviseHint, JobSpec, Mix, Pattern};
use super::units::{self, plain_text};
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
            let def = options::lookup(&e.key).ok_or_else(|| at(options::unknown(&e.key)))?;
            let raw = e.value.clone().unwrap_or_default();
            if e.value.is_none() && !matches!(def.kind, Kind::Bool | Kind::StrOrFlag) {
                return Err(at(JobProblem::NeedsValue));
            }
            if def.kind == Kind::Bool && e.value.as_deref() == Some("") {
                // `direct=` is neither the bare flag nor a boolean.
                return Err(at(ValueError::NotBool(raw).into()));
            }
            // fio's `rw=read:-8k`, `rw=randread:8`: the word before ':'.
            let word = match def.name {
                "rw" => raw.split_once(':').map_or(raw.as_str(), |(w, _)| w),
                _ => raw.as_str(),
            };
            if let Kind::Choice(list) = def.kind
                && !list.contains(&word)
            {
                return Err(at(JobProblem::NotOneOf {
                    value: word.to_string(),
                    choices: list.to_vec(),
                }));
            }
            job.apply(def, &raw, &mut cache_given, &mut bsrange_given)
                .map_err(at)?;
            job.options.retain(|(k, _)| k != def.name);
            job.options.push((def.name.to_string(), raw));
        }
        if !cache_given {
            job.cache = if job.files.pre_read {
                CachePolicy::Warm
            } else if job.invalidate {
                CachePolicy::Cold
            } else {
                CachePolicy::Keep
            };
        }
        job.name_bare_logs();
        super::groups::access::finish(&mut job);
        // fio: "time_based requires a runtime/timeout setting", and runs
        // without it (the runner warns).
        if job.runtime_us.is_none() {
            job.time_based = false;
        }
        super::groups::engine_opts::finish(&mut job);
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
        JobSpec::from_entries(self.file_stem(), &entries)
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
                trial.apply(def, v, &mut c, &mut b).is_ok() && {
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
        job.name_bare_logs();
        (job, ignored)
    }

    fn apply(
        &mut self,
        def: &OptDef,
        v: &str,
        cache_given: &mut bool,
        bsrange: &mut bool,
    ) -> Result<(), JobProblem> {
        use units::parse_bool as b;
        let key = def.name;
        match key {
            "name" => {
                if v.trim().is_empty() {
                    return Err(ValueError::Empty("job name").into());
                }
                plain_text("job name", v)?;
                self.name = v.to_string();
            }
            "description" => {
                plain_text("description", v)?;
                self.description = Some(v.to_string());
            }
            "filename" => {
                self.filenames = split_filenames(v);
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
                for f in &self.filenames {
                    plain_text("file name", f)?;
                }
            }
            "directory" => {
                // fio's list as for filename (`\:` a colon in the name);
                // several directories (fio deals them to the clones) are
                // not supported.
                match split_filenames(v).as_slice() {
                    [] => return Err(ValueError::Empty("directory").into()),
                    [dir] => {
                        plain_text("directory", dir)?;
                        self.directory = Some(PathBuf::from(dir));
                    }
                    more => {
                        return Err(JobProblem::Invalid(format!(
                            "directory '{}' names {} directories; iolab takes one (a ':' in its name is written '\\:')",
                            super::error::printable(v),
                            more.len()
                        )));
                    }
                }
            }
            "size" => match share_of_file(key, v)? {
                Some(p) => (self.size, self.access.size_percent) = (None, Some(p)),
                None => (self.size, self.access.size_percent) = (Some(num(def, v)?), None),
            },
            "offset" => match share_of_file(key, v)? {
                Some(p) => (self.offset, self.access.offset_percent) = (0, Some(p)),
                None => (self.offset, self.access.offset_percent) = (num(def, v)?, None),
            },
            "rw" => {
                let (word, step) = v.split_once(':').unwrap_or((v, ""));
                (self.pattern, self.mix) = match word {
                    "read" => (Pattern::Sequential, Mix::Read),
                    "write" => (Pattern::Sequential, Mix::Write),
                    "rw" | "readwrite" => (Pattern::Sequential, Mix::Mixed),
                    "randread" => (Pattern::Random, Mix::Read),
                    "randwrite" => (Pattern::Random, Mix::Write),
                    "randrw" => (Pattern::Random, Mix::Mixed),
                    "trim" => (Pattern::Sequential, Mix::Trim),
                    "randtrim" => (Pattern::Random, Mix::Trim),
                    "trimwrite" => (Pattern::Sequential, Mix::TrimWrite),
                    "randtrimwrite" => (Pattern::Random, Mix::TrimWrite),
                    other => return Err(not_one_of(key, other)),
                };
                (self.access.seq_add, self.access.seq_nr) = rw_step(self.pattern, step)?;
            }
            "rwmixread" => self.rwmixread = num(def, v)?,
            "bs" if v.contains(',') => {
                let sizes = per_direction(key, v, |t| def.kind.number(t).map(|s| (s, s)))?;
                if !*bsrange {
                    self.access.set_sizes(sizes, (self.bs_min, self.bs_max));
                    self.access.trim_bs = match v.split(',').nth(2).map(str::trim) {
                        Some(t) if !t.is_empty() => Some((num(def, t)?, num(def, t)?)),
                        _ => self.access.trim_bs,
                    };
                }
            }
            "bs" => {
                let bs = num(def, v)?;
                if !*bsrange {
                    (self.bs_min, self.bs_max) = (bs, bs);
                    self.access.bs_dir = None;
                    self.access.trim_bs = None;
                }
            }
            "blocksize_range" if v.contains(',') => {
                let ranges = per_direction(key, v, |t| def.kind.number_pair(t))?;
                self.access.set_sizes(ranges, (self.bs_min, self.bs_max));
                *bsrange = true;
            }
            "blocksize_range" => {
                (self.bs_min, self.bs_max) = def.kind.number_pair(v)?;
                self.access.bs_dir = None;
                *bsrange = true;
            }
            "loops" => self.loops = num(def, v)?,
            "number_ios" => self.number_ios = Some(num(def, v)?).filter(|n| *n > 0),
            "runtime" => self.runtime_us = Some(num(def, v)?).filter(|t| *t > 0),
            "time_based" => self.time_based = b(v)?,
            "numjobs" => self.numjobs = num(def, v)?,
            "thread" => {
                b(v)?;
            }
            "group_reporting" => self.group_reporting = b(v)?,
            "stonewall" => self.stonewall = b(v)?,
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
            "randseed" => self.randseed = num(def, v)?,
            "fsync" => self.fsync = num(def, v)?,
            "unlink" => self.unlink = b(v)?,
            "prefetch" => self.prefetch = num(def, v)?,
            "cache" => {
                *cache_given = true;
                self.cache = match v {
                    "cold" => CachePolicy::Cold,
                    "warm" => CachePolicy::Warm,
                    "keep" => CachePolicy::Keep,
                    other => return Err(not_one_of(key, other)),
                }
            }
            "repeat" => self.repeat = num(def, v)?,
            "iodepth" => self.iodepth = num(def, v)?,
            "iodepth_batch_submit" => self.iodepth_batch_submit = num(def, v)?,
            "iodepth_batch_complete_min" => self.iodepth_batch_complete_min = num(def, v)?,
            "iodepth_batch_complete_max" => self.iodepth_batch_complete_max = Some(num(def, v)?),
            "iodepth_low" => self.iodepth_low = Some(num(def, v)?),
            k if EngineFlags::NAMES.contains(&k) => {
                self.flags.set(k, b(v)?);
            }
            "write_bw_log" => self.logs.bw = Some(log_prefix(v)?),
            "write_lat_log" => self.logs.lat = Some(log_prefix(v)?),
            "write_iops_log" => self.logs.iops = Some(log_prefix(v)?),
            "write_hist_log" => self.logs.hist = Some(log_prefix(v)?),
            "write_iolog" => self.logs.iolog = Some(log_prefix(v)?),
            "log_avg_msec" => self.logs.avg_msec = num(def, v)?,
            "log_hist_msec" => self.logs.hist_msec = num(def, v)?,
            other => match super::groups::owner(def) {
                Some(group) => (group.apply)(self, def, v)?,
                None => unreachable!("option table and apply() disagree on '{other}'"),
            },
        }
        Ok(())
    }

    /// A log asked for with a bare flag takes the job's name, the one it
    /// has once every option is applied (as in fio: `[a]`, `write_bw_log`,
    /// `name=b` writes `b_bw.1.log`).
    fn name_bare_logs(&mut self) {
        let logs = &mut self.logs;
        for prefix in [&mut logs.bw, &mut logs.lat, &mut logs.iops, &mut logs.hist] {
            if let Some(p) = prefix.as_mut().filter(|p| p.is_empty()) {
                p.clone_from(&self.name);
            }
        }
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

/// fio's list of file names: split at `:`, where `\:` is a colon inside a
/// name (fio's escape; any other backslash stays); empty names are skipped.
pub fn split_filenames(v: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut name = String::new();
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                name.push(':');
                chars.next();
            }
            ':' if !name.is_empty() => names.push(std::mem::take(&mut name)),
            ':' => {}
            c => name.push(c),
        }
    }
    if !name.is_empty() {
        names.push(name);
    }
    names
}

/// fio's log prefix: the value, empty for a bare flag (the job's name,
/// filled in once the job is built: [`JobSpec::name_bare_logs`]).
fn log_prefix(v: &str) -> Result<String, ValueError> {
    plain_text("log prefix", v)?;
    Ok(v.to_string())
}

/// Builds every job: command-line globals are defaults for all jobs, job
/// files' `[global]` sections apply to the job sections after them, and jobs
/// started with `--name` come after those of the job files (as in fio).
/// `vars` are seen by `${VAR}` in the job files ahead of the environment.
/// At most `max_jobs` clones in all (see [`check_clones`]).
pub fn build_jobs(
    cl: &CommandLine,
    vars: &ini::Vars,
    max_jobs: u32,
) -> Result<Vec<JobSpec>, JobError> {
    let mut jobs = Vec::new();
    let mut globals = cl.globals.clone();
    let mut seen = Vec::new();
    for file in &cl.files {
        let mut sections = ini::parse_file(file, vars)?;
        if !cl.sections.is_empty() {
            seen.extend(sections.iter().map(|s| s.name.clone()));
            sections.retain(|s| s.name == "global" || cl.runs_section(&s.name));
        }
        jobs_of_sections(sections, globals.clone(), &mut jobs, max_jobs)?;
        if !jobs.is_empty() {
            globals = last_of_each(globals);
        }
    }
    if !cl.sections.is_empty() {
        seen.extend(cl.jobs.iter().map(|s| s.name.clone()));
    }
    if let Some(name) = cl.sections.iter().find(|n| !seen.contains(n)) {
        seen.retain(|s| s != "global");
        return Err(JobError::plain(JobProblem::UnknownSection {
            name: name.clone(),
            have: seen.join(", "),
        }));
    }
    for (i, s) in (cl.jobs.iter().filter(|s| cl.runs_section(&s.name))).enumerate() {
        let mut entries = globals.clone();
        entries.extend(s.entries.iter().cloned());
        let mut job = JobSpec::from_entries(&s.name, &entries)?;
        job.global_options = canonical(&globals);
        jobs.push(job);
        too_many(&jobs, max_jobs)?;
        if i == 0 {
            globals = last_of_each(globals);
        }
    }
    if jobs.is_empty() {
        return Err(JobError::plain(JobProblem::NoJob));
    }
    check_clones(&jobs, max_jobs)?;
    super::groups::lifecycle::check_jobs(&jobs)?;
    Ok(jobs)
}

/// Adds the jobs of a job file's `sections` to `jobs`: `[global]` sections
/// add to `globals` for the sections after them, as in fio. Stops as soon
/// as there are more jobs than `max_jobs` (each has a clone at least).
pub fn jobs_of_sections(
    sections: Vec<Section>,
    mut globals: Vec<Entry>,
    jobs: &mut Vec<JobSpec>,
    max_jobs: u32,
) -> Result<(), JobError> {
    let mut compact = false;
    for s in sections {
        if s.name == "global" {
            globals.extend(s.entries);
            compact = false;
        } else {
            // fio names a job after its section: a `name=` in `[global]`
            // does not rename it (one in the section does).
            let mut entries: Vec<Entry> = (globals.iter())
                .filter(|e| options::lookup(&e.key).is_none_or(|d| d.name != "name"))
                .cloned()
                .collect();
            let global_options = canonical(&entries);
            entries.extend(s.entries);
            let mut job = JobSpec::from_entries(&s.name, &entries)?;
            job.global_options = global_options;
            jobs.push(job);
            too_many(jobs, max_jobs)?;
            if !compact {
                globals = last_of_each(globals);
                compact = true;
            }
        }
    }
    Ok(())
}

/// The options `entries` set, as (canonical name, value as written), the
/// last of each (fio's "global options" of its JSON).
fn canonical(entries: &[Entry]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for e in entries {
        let key = options::lookup(&e.key).map_or(e.key.as_str(), |d| d.name);
        out.retain(|(k, _)| k != key);
        out.push((key.to_string(), e.value.clone().unwrap_or_default()));
    }
    out
}

/// `entries` with only the last entry of each option, in the order of
/// those: the same job as all of them, once each is known to apply (a job
/// was built from them). Every option sets its own fields and the last one
/// wins (a `blocksize_range` anywhere wins over `bs`; a bare log prefix is
/// the final name). So the globals each later job applies are as many as
/// the options, not the lines: 20,000 global lines and 4,096 jobs took 51 s.
fn last_of_each(entries: Vec<Entry>) -> Vec<Entry> {
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<Entry> = (entries.into_iter().rev())
        .filter(|e| {
            seen.insert(
                options::lookup(&e.key)
                    .map_or(e.key.as_str(), |d| d.name)
                    .to_string(),
            )
        })
        .collect();
    kept.reverse();
    kept
}

/// The error of [`check_clones`] once there are more jobs than
/// clones allowed, before building more of them.
fn too_many(jobs: &[JobSpec], max_jobs: u32) -> Result<(), JobError> {
    if jobs.len() > max_jobs as usize {
        return check_clones(jobs, max_jobs);
    }
    Ok(())
}

/// Refuses jobs with more than `max_jobs` clones in all: each clone is a
/// thread, started together.
pub fn check_clones(jobs: &[JobSpec], max_jobs: u32) -> Result<(), JobError> {
    let clones: u64 = jobs.iter().map(|j| u64::from(j.numjobs)).sum();
    if clones > u64::from(max_jobs) {
        return Err(JobError::plain(JobProblem::TooManyClones {
            clones,
            max: max_jobs,
        }));
    }
    Ok(())
}
