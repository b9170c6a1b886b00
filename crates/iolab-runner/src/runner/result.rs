//! What a run measured: per clone and repetition, and the aggregation rules
//! (clones of one repetition run in parallel; repetitions add up in time).

use super::StopFlag;
use super::cache::FileCache;
use super::iolog::IoLog;
use super::series::{self, Interval};
use super::verify::verifier::VerifyTotals;
use crate::counters::CounterDelta;
use crate::job::JobSpec;
use crate::metrics::{CpuUsage, LatencyHistogram};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub use super::op_stats::OpStats;

/// Everything measured for one direction set over some time: one clone, one
/// group of clones, or several repetitions combined.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Totals {
    /// Reads.
    pub read: OpStats,
    /// Writes.
    pub write: OpStats,
    /// Trims (absent from runs stored before iolab trimmed).
    #[serde(default)]
    pub trim: OpStats,
    /// `posix_fadvise(WILLNEED)` calls issued by `prefetch`.
    pub advise: LatencyHistogram,
    /// `fsync` calls.
    pub fsync: LatencyHistogram,
    /// Wall time in ns (the longest clone of a repetition; summed over repetitions).
    pub runtime_ns: u64,
    /// Thread-time denominators for CPU percentages: runtime × threads, in ns.
    pub thread_ns: u64,
    /// CPU use of the threads.
    pub cpu: CpuUsage,
    /// Errors that stopped a clone.
    pub errors: Vec<String>,
    /// Errors `continue_on_error` passed over.
    #[serde(default)]
    pub ignored: Ignored,
    /// A clone stopped because the file system was full (exit code 3).
    #[serde(default)]
    pub no_space: bool,
    /// What went wrong without failing the clone (fio logs it and goes on:
    /// a verify state file it cannot write); the run's warnings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What `verify` checked and found.
    #[serde(default)]
    pub verify: VerifyTotals,
    /// IOPS, bandwidth and latency per interval (`log_avg_msec`, default 1 s).
    pub series: Vec<Interval>,
    /// Intervals of `log_hist_msec` when it differs from the series'.
    pub hist_series: Option<Vec<Interval>>,
    /// fio's per-I/O logs of the clones here, in time order per clone
    /// (their entries wait on disk; not stored).
    #[serde(skip)]
    pub io_logs: Vec<IoLog>,
    /// I/Os issued at each depth bucket (fio's `iodepth_level`: 1, 2, 4,
    /// 8, 16, 32, >=64).
    pub depth_counts: [u64; 7],
    /// Submit calls by the I/Os each sent (fio's `iodepth_submit`: 0,
    /// 1-4, 5-8, 9-16, 17-32, 33-64, >64).
    #[serde(default)]
    pub submit_counts: [u64; 7],
    /// Reap calls by the completions each returned (fio's
    /// `iodepth_complete`, same buckets).
    #[serde(default)]
    pub complete_counts: [u64; 7],
    /// The queue depth `latency_target` settled on (fio's `latency_depth`);
    /// `None` without a latency target.
    #[serde(default)]
    pub latency_depth: Option<u32>,
}

impl Totals {
    /// Adds a clone that ran at the same time as the ones already here.
    pub fn add_parallel(&mut self, c: &Totals) {
        self.merge_counts(c);
        series::merge_parallel(&mut self.series, &c.series);
        if let Some(h) = &c.hist_series {
            series::merge_parallel(self.hist_series.get_or_insert_with(Vec::new), h);
        }
        self.io_logs.extend(c.io_logs.iter().cloned());
        self.merge_busy(c, u64::max);
        self.runtime_ns = self.runtime_ns.max(c.runtime_ns);
    }

    /// Combines the directions' runtimes with `how` (parallel clones: the
    /// longest; repetitions: the sum), each taken whole where unknown.
    fn merge_busy(&mut self, c: &Totals, how: fn(u64, u64) -> u64) {
        let (mine, theirs) = (self.runtime_ns, c.runtime_ns);
        for (a, b) in [
            (&mut self.read, &c.read),
            (&mut self.write, &c.write),
            (&mut self.trim, &c.trim),
        ] {
            if a.busy_ns.is_some() || b.busy_ns.is_some() {
                a.busy_ns = Some(how(a.busy_ns.unwrap_or(mine), b.busy_ns.unwrap_or(theirs)));
            }
        }
    }

    /// fio's runtime of the direction `s` (one of this total's) in ns.
    pub fn dir_ns(&self, s: &OpStats) -> u64 {
        s.busy_ns.unwrap_or(self.runtime_ns)
    }

    /// Adds a later repetition.
    pub fn add_sequential(&mut self, c: &Totals) {
        self.merge_counts(c);
        let off_ms = self.runtime_ns / 1_000_000;
        series::append_sequential(&mut self.series, &c.series, off_ms);
        if let Some(h) = &c.hist_series {
            series::append_sequential(self.hist_series.get_or_insert_with(Vec::new), h, off_ms);
        }
        let off = self.runtime_ns;
        self.io_logs
            .extend(c.io_logs.iter().map(|l| l.shifted(off)));
        self.merge_busy(c, |a, b| a + b);
        self.runtime_ns += c.runtime_ns;
    }

    fn merge_counts(&mut self, c: &Totals) {
        self.read.merge(&c.read);
        self.write.merge(&c.write);
        self.trim.merge(&c.trim);
        self.advise.merge(&c.advise);
        self.fsync.merge(&c.fsync);
        self.thread_ns += c.thread_ns;
        self.latency_depth = self.latency_depth.or(c.latency_depth);
        for (mine, theirs) in [
            (&mut self.depth_counts, &c.depth_counts),
            (&mut self.submit_counts, &c.submit_counts),
            (&mut self.complete_counts, &c.complete_counts),
        ] {
            mine.iter_mut().zip(theirs).for_each(|(a, b)| *a += b);
        }
        self.cpu.add(&c.cpu);
        self.errors.extend(c.errors.iter().cloned());
        if self.ignored.count == 0 {
            self.ignored.first_errno = c.ignored.first_errno;
            self.ignored.first = c.ignored.first.clone();
        }
        self.ignored.count += c.ignored.count;
        self.no_space |= c.no_space;
        self.verify.add(&c.verify);
    }

    /// Bytes read, written and trimmed.
    pub fn io_bytes(&self) -> u64 {
        self.read.bytes + self.write.bytes + self.trim.bytes
    }

    /// Bytes per second of one direction over its runtime ([`Self::dir_ns`]).
    pub fn bw_bytes(&self, s: &OpStats) -> f64 {
        per_sec(s.bytes, self.dir_ns(s))
    }

    /// I/Os per second of one direction over its runtime ([`Self::dir_ns`]).
    pub fn iops(&self, s: &OpStats) -> f64 {
        per_sec(s.ios(), self.dir_ns(s))
    }

    /// User CPU in percent of the threads' time.
    pub fn usr_cpu(&self) -> f64 {
        pct(self.cpu.user_us * 1000, self.thread_ns)
    }

    /// System CPU in percent of the threads' time.
    pub fn sys_cpu(&self) -> f64 {
        pct(self.cpu.sys_us * 1000, self.thread_ns)
    }
}

/// I/O errors `continue_on_error` passed over (fio's `total_err` and
/// `first_error`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ignored {
    /// How many.
    pub count: u64,
    /// The errno of the first (0: none).
    pub first_errno: i32,
    /// The message of the first.
    pub first: String,
}

/// `n` per second over `ns` nanoseconds (0 over none).
fn per_sec(n: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        n as f64 * 1e9 / ns as f64
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// One clone in one repetition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CloneRun {
    /// Index of the job in [`RunResult::jobs`].
    pub job: usize,
    /// Clone number (0..numjobs).
    pub clone: u32,
    /// Its measurements.
    pub totals: Totals,
    /// True if it stopped because stop was asked.
    pub interrupted: bool,
    /// What steady-state detection kept, for a job with `ss_dur`.
    #[serde(default)]
    pub steady: Option<super::steady::SteadyOut>,
}

/// One repetition of all jobs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Repetition {
    /// 0-based index.
    pub index: u32,
    /// Every clone that ran.
    pub clones: Vec<CloneRun>,
    /// Cache state of each job's files before the clones started (job → files).
    pub cache_before: Vec<Vec<FileCache>>,
    /// Cache state after they ended.
    pub cache_after: Vec<Vec<FileCache>>,
    /// What the kernel counted while the clones ran.
    pub counters: CounterDelta,
}

/// The result of `iolab run`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// The jobs as run.
    pub jobs: Vec<JobSpec>,
    /// Files of each clone of each job (job → clone → files).
    pub files: Vec<Vec<Vec<PathBuf>>>,
    /// Repetitions in order (the last may be partial when interrupted).
    pub repetitions: Vec<Repetition>,
    /// Stop was asked (Ctrl-C): results are partial.
    pub interrupted: bool,
    /// Things the user should know (failed evictions, kept files...).
    pub warnings: Vec<String>,
    /// Wall-clock start, seconds since the epoch.
    pub started_unix: u64,
    /// The process that ran it (fio's `pid=` in the text output); 0 for
    /// runs stored before it was kept and for imported ones.
    #[serde(default)]
    pub pid: u32,
}

/// A job (or one clone of it) as reported: fio reports each clone
/// separately unless `group_reporting` is set, which reports each
/// reporting group (`stonewall`, `new_group`) as one entry.
#[derive(Debug, Clone)]
pub struct ReportEntry {
    /// Index of the job (the first of the entry: its name).
    pub job: usize,
    /// Clones of that job reported here.
    pub clones: Vec<u32>,
    /// Every (job, clone) reported here, in order (with `group_reporting`,
    /// the clones of later jobs of the same group too).
    pub members: Vec<(usize, u32)>,
    /// fio's `groupid`: the reporting group.
    pub groupid: u32,
    /// What steady-state detection kept (of the entry's last clone that
    /// kept any, in the last repetition it ran), as fio reports it.
    pub steady: Option<super::steady::SteadyOut>,
    /// Per repetition.
    pub reps: Vec<Totals>,
    /// All repetitions combined.
    pub total: Totals,
    /// Set when the first repetition stands out from the rest.
    pub first_run: Option<FirstRunEffect>,
}

/// The first repetition differs from the others by more than their spread
/// (seeds 001 and 004: the first run after boot or after a cold cache).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct FirstRunEffect {
    /// Metric compared.
    pub metric: &'static str,
    /// Its value in the first repetition.
    pub first: f64,
    /// Mean of the other repetitions.
    pub rest_mean: f64,
    /// Smallest of the others.
    pub rest_min: f64,
    /// Largest of the others.
    pub rest_max: f64,
}

impl FirstRunEffect {
    /// Detects the effect on bandwidth; needs at least 3 repetitions.
    pub fn detect(reps: &[Totals]) -> Option<FirstRunEffect> {
        if reps.len() < 3 {
            return None;
        }
        let v: Vec<f64> = (reps.iter())
            .map(|t| per_sec(t.io_bytes(), t.runtime_ns))
            .collect();
        Self::of("bw_bytes", &v)
    }

    /// The effect on `metric` of its values in run order (`values[0]` the
    /// first run), when the first is further from the others' mean than
    /// the others' whole range; needs at least 3 values.
    pub fn of(metric: &'static str, values: &[f64]) -> Option<FirstRunEffect> {
        let [first, rest @ ..] = values else {
            return None;
        };
        if rest.len() < 2 {
            return None;
        }
        let min = rest.iter().copied().fold(f64::INFINITY, f64::min);
        let max = rest.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = rest.iter().sum::<f64>() / rest.len() as f64;
        ((first - mean).abs() > (max - min)).then_some(FirstRunEffect {
            metric,
            first: *first,
            rest_mean: mean,
            rest_min: min,
            rest_max: max,
        })
    }
}

impl RunResult {
    /// This result if the run went to its end; the interruption or the
    /// I/O failures as an error otherwise (for callers that need whole runs).
    pub fn complete(self, stop: &StopFlag) -> crate::Result<RunResult> {
        if self.interrupted {
            return Err(crate::Error::interrupted(stop));
        }
        let errors = self.errors();
        let full = (self.repetitions.iter())
            .flat_map(|r| r.clones.iter())
            .any(|c| c.totals.no_space);
        if full {
            return Err(crate::Error::NoSpace {
                at: errors.join("; "),
            });
        }
        if !errors.is_empty() {
            return Err(crate::Error::RunFailed { errors });
        }
        Ok(self)
    }

    /// All clones and jobs of repetition `i` added up (they ran side by side).
    pub fn rep_totals(&self, i: usize) -> Totals {
        let mut t = Totals::default();
        for c in &self.repetitions[i].clones {
            t.add_parallel(&c.totals);
        }
        t
    }

    /// Every repetition added up, one after the other.
    pub fn combined(&self) -> Totals {
        let mut total = Totals::default();
        for i in 0..self.repetitions.len() {
            total.add_sequential(&self.rep_totals(i));
        }
        total
    }

    /// Errors that stopped any clone, in order.
    pub fn errors(&self) -> Vec<String> {
        self.repetitions
            .iter()
            .flat_map(|r| r.clones.iter())
            .flat_map(|c| c.totals.errors.iter().cloned())
            .collect()
    }

    /// The cache state (before, after) of the files of entry `e`'s own
    /// clones in repetition `rep`: a clone reported alone lists its files,
    /// not every file of its job (4,000 clones would list 16 million).
    pub fn entry_cache<'a>(
        &'a self,
        rep: &'a Repetition,
        e: &ReportEntry,
    ) -> impl Iterator<Item = (&'a FileCache, &'a FileCache)> {
        let all = e.clones.len() == self.jobs[e.job].numjobs as usize;
        let own: std::collections::HashSet<&Path> = if all {
            Default::default()
        } else {
            e.clones
                .iter()
                .filter_map(|&c| self.files[e.job].get(c as usize))
                .flatten()
                .map(PathBuf::as_path)
                .collect()
        };
        rep.cache_before[e.job]
            .iter()
            .zip(&rep.cache_after[e.job])
            .filter(move |(b, _)| all || own.contains(b.path.as_path()))
    }

    /// The entries to report, in job order, grouped as fio groups its
    /// thread stats: a clone joins the entry before it when both have
    /// `group_reporting` and the same reporting group.
    pub fn entries(&self) -> Vec<ReportEntry> {
        let groups = crate::job::groups::lifecycle::groupids(&self.jobs);
        let mut members: Vec<Vec<(usize, u32)>> = Vec::new();
        let mut last_group = None;
        for (j, job) in self.jobs.iter().enumerate() {
            for c in 0..job.numjobs {
                match members.last_mut() {
                    Some(m) if job.group_reporting && last_group == Some(groups[j]) => {
                        m.push((j, c))
                    }
                    _ => members.push(vec![(j, c)]),
                }
                last_group = Some(groups[j]);
            }
        }
        members
            .into_iter()
            .map(|m| self.entry(m, &groups))
            .collect()
    }

    /// The entry of `members`.
    fn entry(&self, members: Vec<(usize, u32)>, groups: &[u32]) -> ReportEntry {
        let job = members[0].0;
        let mut reps = Vec::new();
        let mut steady = None;
        for rep in &self.repetitions {
            let mut t = Totals::default();
            let mut any = false;
            for c in rep
                .clones
                .iter()
                .filter(|c| members.contains(&(c.job, c.clone)))
            {
                t.add_parallel(&c.totals);
                any = true;
                if c.steady.is_some() {
                    steady.clone_from(&c.steady);
                }
            }
            if any {
                reps.push(t);
            }
        }
        let mut total = Totals::default();
        for r in &reps {
            total.add_sequential(r);
        }
        let first_run = FirstRunEffect::detect(&reps);
        ReportEntry {
            job,
            clones: (members.iter())
                .filter(|m| m.0 == job)
                .map(|m| m.1)
                .collect(),
            groupid: groups[job],
            members,
            steady,
            reps,
            total,
            first_run,
        }
    }
}
