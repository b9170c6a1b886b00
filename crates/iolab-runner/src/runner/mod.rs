//! Running jobs, one step after the other, each step a module that hands
//! the next its output:
//!
//! 1. [`layout`]: every clone's files laid out and checked (safety rules),
//!    with the region each clone works on;
//! 2. per repetition, [`cache`]: the page-cache state asked for, measured;
//! 3. [`open`]: each clone's files opened once and checked;
//! 4. [`launch`]: every clone's thread ([`worker`], [`queued`]) started
//!    together and joined;
//! 5. [`result`]: what they measured, per clone and repetition.

pub mod buffer;
pub mod cache;
pub mod control;
mod ctx;
mod filling;
pub mod flow;
pub mod iolog;
pub mod iomem;
pub mod launch;
pub mod layout;
pub mod live;
mod lookahead;
pub mod op_stats;
pub mod open;
pub mod pace;
pub mod prepare;
pub mod prios;
pub mod progress;
mod queued;
pub mod readonly;
pub mod result;
pub mod series;
pub mod steady;
pub mod summary;
mod sync_loop;
mod syncs;
pub mod verify;
pub mod worker;

pub use crate::sys::stop::StopFlag;
pub use progress::{Live, Phase, Progress, Quiet};
pub use result::{CloneRun, FirstRunEffect, OpStats, Repetition, ReportEntry, RunResult, Totals};

use crate::counters::{self, Disk, Snapshot};
use crate::error::Result;
use crate::job::JobSpec;
use layout::Layout;

/// Run-wide switches that are not job options.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Allow writing to files iolab did not lay out and to block devices.
    pub allow_overwrite: bool,
    /// With `cache=cold`, also drop the whole page cache (root only).
    pub drop_caches: bool,
}

/// Told when the timed part of a run starts and ends (after layout, around
/// all repetitions), e.g. to profile exactly that part.
pub trait Observer {
    /// Right before the first repetition; an error stops the run before
    /// any I/O is timed.
    fn timed_start(&mut self) -> Result<()> {
        Ok(())
    }
    /// Right after the last repetition.
    fn timed_end(&mut self) {}
    /// Untimed work inside the timed part starts: a job's cache state
    /// being set (a `cache=warm` warm-up reads its files).
    fn untimed_start(&mut self) {}
    /// That untimed work is over.
    fn untimed_end(&mut self) {}
}

/// An observer that does nothing.
pub struct NoObserver;

impl Observer for NoObserver {}

/// Runs `jobs`: all clones of all jobs together, `repeat` times.
pub fn run(jobs: Vec<JobSpec>, opts: &RunOptions, stop: &StopFlag) -> Result<RunResult> {
    run_observed(jobs, opts, stop, &mut NoObserver)
}

/// [`run`], telling `obs` when the timed part starts and ends.
pub fn run_observed(
    jobs: Vec<JobSpec>,
    opts: &RunOptions,
    stop: &StopFlag,
    obs: &mut dyn Observer,
) -> Result<RunResult> {
    run_with(jobs, opts, stop, obs, &mut Quiet)
}

/// [`run_observed`], telling `progress` the phases of the run and, while
/// clones run, their live figures (when it asks for them).
pub fn run_with(
    jobs: Vec<JobSpec>,
    opts: &RunOptions,
    stop: &StopFlag,
    obs: &mut dyn Observer,
    progress: &mut dyn Progress,
) -> Result<RunResult> {
    let live = progress.live();
    if live {
        progress.phase(Phase::Layout);
    }
    crate::sys::limits::raise_open_files();
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let out = layout::lay_out(&jobs, opts.allow_overwrite, stop).and_then(|layout| {
        let result = measure((&jobs, &layout), (opts, stop), obs, progress)?;
        Ok(result.finish(jobs, &layout, started_unix))
    });
    if live {
        progress.phase(Phase::Done);
    }
    out
}

/// What the repetitions of a run measured, before its files are unlinked.
struct Measured {
    repetitions: Vec<Repetition>,
    interrupted: bool,
    warnings: Vec<String>,
}

impl Measured {
    /// The result: the files the jobs asked to unlink gone (each a
    /// warning if it could not be), the rest as measured.
    fn finish(mut self, jobs: Vec<JobSpec>, layout: &Layout, started_unix: u64) -> RunResult {
        for (j, job) in jobs.iter().enumerate() {
            if job.unlink {
                let ids: Vec<_> = layout.job_ids(j).into_iter().collect();
                let kept =
                    crate::sys::par::map(&ids, |(path, id)| layout::unlink_if_ours(path, *id));
                self.warnings.extend(kept.into_iter().flatten());
            }
        }
        RunResult {
            files: layout.paths(),
            jobs,
            repetitions: self.repetitions,
            interrupted: self.interrupted,
            warnings: self.warnings,
            started_unix,
            pid: std::process::id(),
        }
    }
}

/// The repetitions of `jobs` over `layout`, timed as `obs` is told.
fn measure(
    (jobs, layout): (&[JobSpec], &Layout),
    (opts, stop): (&RunOptions, &StopFlag),
    obs: &mut dyn Observer,
    progress: &mut dyn Progress,
) -> Result<Measured> {
    let mut warnings: Vec<String> = jobs.iter().flat_map(engine_warnings).collect();
    let disks = counters::disks_of(&layout.all_paths());
    // A run that fails before it measures leaves no file it made behind.
    let reps = obs.timed_start().and_then(|_| {
        let run = (jobs, layout, &disks[..], opts);
        repetitions(run, stop, &mut warnings, (obs, progress))
    });
    obs.timed_end();
    let (repetitions, interrupted) = reps.inspect_err(|_| layout.remove_created())?;
    Ok(Measured {
        repetitions,
        interrupted,
        warnings,
    })
}

/// Settings that run but do not do what they may suggest, per job.
fn engine_warnings(job: &JobSpec) -> Vec<String> {
    let Some(def) = job.engine_def() else {
        return Vec::new();
    };
    let mut w = Vec::new();
    let asked = |key: &str| {
        (job.options.iter()).any(|(k, v)| k == key && crate::job::units::parse_bool(v) != Ok(false))
    };
    if asked("time_based") && !job.time_based {
        w.push("time_based needs a runtime (e.g. runtime=10s): ignored, as fio does".into());
    }
    if job.iodepth > 1 && !def.queued {
        w.push(format!(
            "iodepth={} has no effect with ioengine={} (each I/O completes before the next is issued)",
            job.iodepth, job.engine
        ));
    }
    w.extend((def.warnings)(&job.engine_config()));
    w.into_iter()
        .map(|m| format!("job '{}': {m}", job.name))
        .collect()
}

/// One repetition's record as the launcher starts and ends jobs: each
/// job's cache state set and measured as it starts, measured again as it
/// ends; the kernel's counters over the time clones ran (the cache work
/// between left out).
struct RepEvents<'a> {
    jobs: &'a [JobSpec],
    layout: &'a Layout,
    disks: &'a [Disk],
    opts: &'a RunOptions,
    warnings: &'a mut Vec<String>,
    /// Told when the cache is being set (not measured).
    obs: &'a mut dyn Observer,
    /// Told the phases and live figures, when it shows them.
    progress: &'a mut dyn Progress,
    /// This repetition (from 1), of how many.
    rep: (u32, u32),
    /// When the first repetition started, and how long each took so far.
    clock: &'a RepClock,
    cache_before: Vec<Vec<cache::FileCache>>,
    cache_after: Vec<Vec<cache::FileCache>>,
    counters: crate::counters::CounterDelta,
    since: Snapshot,
}

impl RepEvents<'_> {
    fn measure(&self, j: usize) -> Vec<cache::FileCache> {
        (self.layout.job_regions(j).iter())
            .map(|(p, r)| cache::measure(p, r.start, r.len))
            .collect()
    }

    /// Adds the counters since the last look.
    fn count(&mut self) {
        let now = Snapshot::take(self.disks);
        self.counters.add(&self.since.delta(&now));
        self.since = now;
    }
}

impl launch::JobEvents for RepEvents<'_> {
    fn starting(&mut self, j: usize) {
        self.count();
        let policy = self.jobs[j].cache;
        let live = self.progress.live();
        if live && policy != crate::job::CachePolicy::Keep {
            self.progress.phase(Phase::Cache(policy));
        }
        self.obs.untimed_start();
        for (path, r) in self.layout.job_regions(j) {
            let w = cache::apply(policy, &path, r.start, r.len, self.opts.drop_caches);
            self.warnings.extend(w);
        }
        self.cache_before[j] = self.measure(j);
        self.obs.untimed_end();
        if live {
            let (rep, reps) = self.rep;
            self.progress.phase(Phase::Run { rep, reps });
        }
        self.since = Snapshot::take(self.disks);
    }

    fn ended(&mut self, j: usize) {
        self.cache_after[j] = self.measure(j);
    }

    fn live(&self) -> bool {
        self.progress.live()
    }

    fn tick(&mut self, s: &live::RepSample) {
        let live = self.clock.live(s, self.rep);
        self.progress.tick(&live);
    }
}

/// The run's clock for live figures: when it started, and how long the
/// repetitions that ended took.
struct RepClock {
    start_ns: u64,
    rep_start_ns: u64,
    past_ns: Vec<u64>,
}

impl RepClock {
    /// Run-wide figures from a sample of repetition `rep` of `reps`: the
    /// part done counts the repetitions before as done, the time left the
    /// ones after as long as the mean of those that ran (or this one).
    fn live(&self, s: &live::RepSample, (rep, reps): (u32, u32)) -> Live {
        let now = crate::metrics::clock::now_ns();
        let reps = reps.max(1);
        let later = u64::from(reps.saturating_sub(rep));
        let this_ns = now.saturating_sub(self.rep_start_ns);
        let per_rep = match self.past_ns.len() as u64 {
            0 => s.left_ns.map(|l| this_ns.saturating_add(l)),
            n => Some(self.past_ns.iter().sum::<u64>() / n),
        };
        Live {
            ios: s.ios,
            bytes: s.bytes,
            t_ns: now,
            elapsed_ns: now.saturating_sub(self.start_ns),
            done: s.done.map(|d| (f64::from(rep - 1) + d) / f64::from(reps)),
            eta_ns: s
                .left_ns
                .zip(per_rep)
                .map(|(l, p)| l.saturating_add(p.saturating_mul(later))),
            running: s.running,
        }
    }
}

/// The repetitions: every clone as the launcher starts and ends them, what
/// they measured. Returns them and whether Ctrl-C stopped the run.
fn repetitions(
    (jobs, layout, disks, opts): (&[JobSpec], &Layout, &[Disk], &RunOptions),
    stop: &StopFlag,
    warnings: &mut Vec<String>,
    (obs, progress): (&mut dyn Observer, &mut dyn Progress),
) -> Result<(Vec<Repetition>, bool)> {
    let mut out = Vec::new();
    let reps = jobs.iter().map(|j| j.repeat).max().unwrap_or(1);
    let start_ns = crate::metrics::clock::now_ns();
    let mut clock = RepClock {
        start_ns,
        rep_start_ns: start_ns,
        past_ns: Vec::new(),
    };
    for rep in 0..reps {
        clock.rep_start_ns = crate::metrics::clock::now_ns();
        if stop.is_set() {
            return Ok((out, true));
        }
        let active: Vec<usize> = (0..jobs.len()).filter(|&j| rep < jobs[j].repeat).collect();
        let mut ev = RepEvents {
            jobs,
            layout,
            disks,
            opts,
            warnings: &mut *warnings,
            obs: &mut *obs,
            progress: &mut *progress,
            rep: (rep + 1, reps),
            clock: &clock,
            cache_before: vec![Vec::new(); jobs.len()],
            cache_after: vec![Vec::new(); jobs.len()],
            counters: Default::default(),
            since: Snapshot::take(disks),
        };
        let mut clones = launch::run_clones(jobs, layout, &active, stop, &mut ev)?;
        for c in &mut clones {
            ev.warnings.append(&mut c.totals.warnings);
        }
        ev.count();
        let took = crate::metrics::clock::now_ns().saturating_sub(clock.rep_start_ns);
        // A job that Ctrl-C kept from starting makes the repetition partial.
        let interrupted = stop.is_set() || clones.iter().any(|c| c.interrupted);
        let failed = clones.iter().any(|c| !c.totals.errors.is_empty());
        out.push(Repetition {
            index: rep,
            clones,
            cache_before: ev.cache_before,
            cache_after: ev.cache_after,
            counters: ev.counters,
        });
        clock.past_ns.push(took);
        if interrupted {
            return Ok((out, true));
        }
        if failed {
            break;
        }
    }
    Ok((out, false))
}
