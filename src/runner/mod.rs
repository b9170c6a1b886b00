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
pub mod flow;
pub mod iolog;
pub mod iomem;
mod lat_target;
pub mod launch;
pub mod layout;
mod lookahead;
pub mod open;
pub mod pace;
pub mod prepare;
pub mod progress;
mod queued;
pub mod readonly;
pub mod result;
mod schedule;
pub mod series;
pub mod steady;
pub mod stop;
pub mod summary;
pub mod verifier;
pub mod verify;
pub mod verify_state;
pub mod worker;

pub use progress::{Progress, Quiet};
pub use result::{CloneRun, FirstRunEffect, OpStats, Repetition, ReportEntry, RunResult, Totals};
pub use stop::StopFlag;

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
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let layout = layout::lay_out(&jobs, opts.allow_overwrite, stop)?;
    let mut warnings: Vec<String> = jobs.iter().flat_map(engine_warnings).collect();
    let disks = counters::disks_of(&layout.all_paths());
    // A run that fails before it measures leaves no file it made behind.
    let reps = obs
        .timed_start()
        .and_then(|_| repetitions(&jobs, &layout, &disks, opts, stop, &mut warnings, obs));
    obs.timed_end();
    let (repetitions, interrupted) = reps.inspect_err(|_| layout.remove_created())?;
    for (j, job) in jobs.iter().enumerate() {
        if job.unlink {
            let ids: Vec<_> = layout.job_ids(j).into_iter().collect();
            let kept = crate::sys::par::map(&ids, |(path, id)| layout::unlink_if_ours(path, *id));
            warnings.extend(kept.into_iter().flatten());
        }
    }
    Ok(RunResult {
        files: layout.paths(),
        jobs,
        repetitions,
        interrupted,
        warnings,
        started_unix,
        pid: std::process::id(),
    })
}

/// Settings that run but do not do what they may suggest, per job.
fn engine_warnings(job: &JobSpec) -> Vec<String> {
    let Some(def) = job.engine_def() else {
        return Vec::new();
    };
    let mut w = Vec::new();
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
    obs: &'a mut dyn Observer,
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
        self.obs.untimed_start();
        for (path, r) in self.layout.job_regions(j) {
            let policy = self.jobs[j].cache;
            let w = cache::apply(policy, &path, r.start, r.len, self.opts.drop_caches);
            self.warnings.extend(w);
        }
        self.cache_before[j] = self.measure(j);
        self.obs.untimed_end();
        self.since = Snapshot::take(self.disks);
    }

    fn ended(&mut self, j: usize) {
        self.cache_after[j] = self.measure(j);
    }
}

/// The repetitions: every clone as the launcher starts and ends them, what
/// they measured. Returns them and whether Ctrl-C stopped the run.
fn repetitions(
    jobs: &[JobSpec],
    layout: &Layout,
    disks: &[Disk],
    opts: &RunOptions,
    stop: &StopFlag,
    warnings: &mut Vec<String>,
    obs: &mut dyn Observer,
) -> Result<(Vec<Repetition>, bool)> {
    let mut out = Vec::new();
    for rep in 0..jobs.iter().map(|j| j.repeat).max().unwrap_or(1) {
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
            cache_before: vec![Vec::new(); jobs.len()],
            cache_after: vec![Vec::new(); jobs.len()],
            counters: Default::default(),
            since: Snapshot::take(disks),
        };
        let clones = launch::run_clones(jobs, layout, &active, stop, &mut ev)?;
        ev.count();
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
        if interrupted {
            return Ok((out, true));
        }
        if failed {
            break;
        }
    }
    Ok((out, false))
}
