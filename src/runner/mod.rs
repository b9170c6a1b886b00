//! Running jobs: lay out files, set the cache state, start every clone
//! together, stop on size × loops, number_ios or runtime, repeat.

pub mod buffer;
pub mod cache;
pub mod files;
mod lookahead;
pub mod open;
pub mod progress;
mod queued;
pub mod result;
pub mod series;
pub mod stop;
pub mod worker;

pub use progress::{Progress, Quiet};
pub use result::{CloneRun, FirstRunEffect, OpStats, Repetition, ReportEntry, RunResult, Totals};
pub use stop::StopFlag;

use crate::counters::{self, Snapshot};
use crate::engine::{
    LibaioEngine, MmapEngine, NullEngine, PsyncEngine, SyncEngine, UringEngine, uring::UringOptions,
};
use crate::error::{Error, Result};
use crate::job::JobError;
use crate::job::{EngineKind, JobSpec};
use crate::plan::{PlanParams, Planner, Region};
use buffer::AlignedBuf;
use open::OpenSpec;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::Duration;

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
}

/// An observer that does nothing.
pub struct NoObserver;

impl Observer for NoObserver {}

/// A clone's file with its region.
#[derive(Debug, Clone)]
struct CloneFile {
    path: PathBuf,
    region: Region,
}

/// Seed of clone `clone` of `job`: fixed by `randseed` unless `randrepeat=0`.
pub fn clone_seed(job: &JobSpec, clone: u32) -> u64 {
    let base = if job.randrepeat {
        job.randseed
    } else {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    };
    base ^ (clone as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The plan of clone `clone`: what the planner will generate.
fn plan_params(job: &JobSpec, files: &[CloneFile], clone: u32) -> PlanParams {
    PlanParams {
        regions: files.iter().map(|f| f.region).collect(),
        pattern: job.pattern,
        mix: job.mix,
        rwmixread: job.rwmixread,
        bs_min: job.bs_min,
        bs_max: job.bs_max,
        loops: if job.time_based {
            None
        } else {
            Some(job.loops)
        },
        number_ios: job.number_ios,
        seed: clone_seed(job, clone),
    }
}

/// Lays out files and works out every clone's regions.
fn prepare(
    jobs: &[JobSpec],
    opts: &RunOptions,
    stop: &StopFlag,
) -> Result<Vec<Vec<Vec<CloneFile>>>> {
    let mut needs: BTreeMap<PathBuf, files::Need> = BTreeMap::new();
    for job in jobs {
        for c in 0..job.numjobs {
            let paths = files::clone_paths(job, c);
            let per_file = job.size.map(|s| s / paths.len() as u64);
            for p in paths {
                let n = needs.entry(p.clone()).or_insert(files::Need {
                    path: p,
                    len: None,
                    writes: false,
                    job: job.name.clone(),
                });
                if let Some(pf) = per_file {
                    n.len = Some(n.len.unwrap_or(0).max(job.offset + pf));
                }
                n.writes |= job.writes();
            }
        }
    }
    let mut sizes = BTreeMap::new();
    for need in needs.values() {
        let p = files::prepare(need, opts.allow_overwrite, stop)?;
        sizes.insert(p.path.clone(), p.size);
    }
    let mut out = Vec::new();
    for job in jobs {
        let mut clones = Vec::new();
        for c in 0..job.numjobs {
            let paths = files::clone_paths(job, c);
            let per_file = job.size.map(|s| s / paths.len() as u64);
            let mut cf = Vec::new();
            for p in paths {
                let fsize = sizes[&p];
                if job.offset >= fsize {
                    return Err(JobError::invalid(
                        &job.name,
                        format!(
                            "offset {} is beyond the end of {} ({fsize} bytes)",
                            job.offset,
                            p.display()
                        ),
                    )
                    .into());
                }
                let len = per_file.unwrap_or(fsize - job.offset);
                if job.bs_min > len {
                    return Err(JobError::invalid(
                        &job.name,
                        format!(
                            "bs ({}) is larger than the region of {} ({len} bytes)",
                            job.bs_min,
                            p.display()
                        ),
                    )
                    .into());
                }
                cf.push(CloneFile {
                    path: p,
                    region: Region {
                        start: job.offset,
                        len,
                    },
                });
            }
            clones.push(cf);
        }
        out.push(clones);
    }
    Ok(out)
}

/// Opens `path` as `job` will, to report problems before any thread starts.
fn check_open(job: &JobSpec, path: &Path) -> Result<()> {
    OpenSpec::of(job).open(path).map(drop).map_err(|e| {
        if job.direct && e.raw_os_error() == Some(libc::EINVAL) {
            JobError::invalid(
                &job.name,
                format!(
                    "the file system of {} does not support O_DIRECT (direct=1)",
                    path.display()
                ),
            )
            .into()
        } else {
            Error::io(
                format!("job '{}': cannot open {}", job.name, path.display()),
                e,
            )
        }
    })
}

/// A constructed engine of any kind, made before the threads start so a
/// refused setup (e.g. `sqthread_poll`) is an error, not a dead clone.
enum AnyEngine {
    Psync,
    Sync,
    Null,
    Mmap,
    Uring(Box<UringEngine>),
    Libaio(LibaioEngine),
}

impl AnyEngine {
    fn new(job: &JobSpec) -> Result<AnyEngine> {
        Ok(match job.engine {
            EngineKind::Psync => AnyEngine::Psync,
            EngineKind::Sync => AnyEngine::Sync,
            EngineKind::Null => AnyEngine::Null,
            EngineKind::Mmap => AnyEngine::Mmap,
            EngineKind::IoUring => AnyEngine::Uring(Box::new(
                UringEngine::new(UringOptions {
                    iodepth: job.iodepth,
                    fixedbufs: job.fixedbufs,
                    // The SQ polling thread does not share the clone's
                    // private descriptor table: it needs registered files
                    // (fio turns them on with sqthread_poll too).
                    registerfiles: job.registerfiles || job.sqthread_poll,
                    sqthread_poll: job.sqthread_poll,
                    hipri: job.hipri,
                })
                .map_err(|problem| Error::Engine {
                    job: job.name.clone(),
                    problem,
                })?,
            )),
            EngineKind::Libaio => {
                AnyEngine::Libaio(LibaioEngine::new(job.iodepth).map_err(|e| Error::Engine {
                    job: job.name.clone(),
                    problem: format!(
                        "ioengine=libaio: io_setup({}) failed: {e} (see /proc/sys/fs/aio-max-nr)",
                        job.iodepth
                    ),
                })?)
            }
        })
    }

    fn run(self, w: worker::Worker, start: &Barrier, stop: &StopFlag) -> (Totals, bool) {
        match self {
            AnyEngine::Psync => worker::run(w, PsyncEngine, start, stop),
            AnyEngine::Sync => worker::run(w, SyncEngine, start, stop),
            AnyEngine::Null => worker::run(w, NullEngine, start, stop),
            AnyEngine::Mmap => worker::run(w, MmapEngine::default(), start, stop),
            AnyEngine::Uring(e) => worker::run(w, *e, start, stop),
            AnyEngine::Libaio(e) => worker::run(w, e, start, stop),
        }
    }
}

/// Warnings about settings that run but do not do what they may suggest.
fn engine_warnings(job: &JobSpec) -> Vec<String> {
    let mut w = Vec::new();
    if job.iodepth > 1 && !job.engine.is_async() {
        w.push(format!(
            "job '{}': iodepth={} has no effect with ioengine={} (each I/O completes before the next is issued)",
            job.name,
            job.iodepth,
            job.engine.name()
        ));
    }
    if job.engine == EngineKind::Libaio && !job.direct {
        w.push(format!(
            "job '{}': ioengine=libaio without direct=1 is synchronous (buffered AIO completes inside io_submit); set direct=1 for real queue depth",
            job.name
        ));
    }
    if job.engine == EngineKind::Mmap && job.direct {
        w.push(format!(
            "job '{}': direct=1 has no effect on ioengine=mmap (the mapping always goes through the page cache)",
            job.name
        ));
    }
    w
}

/// Distinct (path, region) pairs of a job over all its clones.
fn job_regions(clones: &[Vec<CloneFile>]) -> Vec<(PathBuf, Region)> {
    let mut m: BTreeMap<PathBuf, Region> = BTreeMap::new();
    for cf in clones.iter().flatten() {
        m.entry(cf.path.clone()).or_insert(cf.region);
    }
    m.into_iter().collect()
}

/// The repetitions of a run: cache state, start every clone together, collect.
fn repetitions_loop(
    jobs: &[JobSpec],
    layout: &[Vec<Vec<CloneFile>>],
    disks: &[counters::Disk],
    opts: &RunOptions,
    stop: &StopFlag,
    warnings: &mut Vec<String>,
) -> Result<(Vec<Repetition>, bool)> {
    let mut repetitions = Vec::new();
    let mut interrupted = false;
    let reps = jobs.iter().map(|j| j.repeat).max().unwrap_or(1);
    for rep in 0..reps {
        if stop.is_set() {
            interrupted = true;
            break;
        }
        let active: Vec<usize> = (0..jobs.len()).filter(|&j| rep < jobs[j].repeat).collect();
        let mut cache_before = vec![Vec::new(); jobs.len()];
        for &j in &active {
            for (path, r) in job_regions(&layout[j]) {
                warnings.extend(cache::apply(
                    jobs[j].cache,
                    &path,
                    r.start,
                    r.len,
                    opts.drop_caches,
                ));
            }
        }
        for &j in &active {
            cache_before[j] = job_regions(&layout[j])
                .iter()
                .map(|(p, r)| cache::measure(p, r.start, r.len))
                .collect();
        }

        let mut workers = Vec::new();
        for &j in &active {
            let job = &jobs[j];
            let series_ms = Some(if job.logs.avg_msec > 0 {
                job.logs.avg_msec
            } else {
                1000
            });
            let hist_ms = (job.logs.hist.is_some() && Some(job.logs.hist_msec) != series_ms)
                .then_some(job.logs.hist_msec);
            let depth = if job.engine.is_async() {
                job.iodepth as usize
            } else {
                1
            };
            for (c, cfiles) in layout[j].iter().enumerate() {
                for f in cfiles {
                    check_open(job, &f.path)?;
                }
                workers.push((
                    j,
                    c as u32,
                    AnyEngine::new(job)?,
                    worker::Worker {
                        open: OpenSpec::of(job),
                        paths: cfiles.iter().map(|f| f.path.clone()).collect(),
                        planner: Planner::new(plan_params(job, cfiles, c as u32)),
                        prefetch: job.prefetch as usize,
                        fsync_every: job.fsync,
                        runtime: job.runtime_us.map(Duration::from_micros),
                        bufs: (0..depth)
                            .map(|_| AlignedBuf::new(job.bs_max as usize))
                            .collect(),
                        batch_submit: job.iodepth_batch_submit.min(job.iodepth) as usize,
                        complete_min: job.iodepth_batch_complete_min.min(job.iodepth) as usize,
                        series_ms,
                        hist_ms,
                        per_io_log: job.logs.per_io(),
                    },
                ));
            }
        }
        let barrier = Barrier::new(workers.len());
        let before = Snapshot::take(disks);
        let clones: Vec<CloneRun> = std::thread::scope(|s| {
            let handles: Vec<_> = workers
                .into_iter()
                .map(|(j, c, engine, w)| {
                    let barrier = &barrier;
                    std::thread::Builder::new()
                        .name(format!("{}.{c}", jobs[j].name))
                        .spawn_scoped(s, move || {
                            let (totals, intr) = engine.run(w, barrier, stop);
                            CloneRun {
                                job: j,
                                clone: c,
                                totals,
                                interrupted: intr,
                            }
                        })
                        .expect("spawn worker thread")
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("worker thread panicked"))
                .collect()
        });
        let counters = before.delta(&Snapshot::take(disks));
        let mut cache_after = vec![Vec::new(); jobs.len()];
        for &j in &active {
            cache_after[j] = job_regions(&layout[j])
                .iter()
                .map(|(p, r)| cache::measure(p, r.start, r.len))
                .collect();
        }
        let rep_interrupted = clones.iter().any(|c| c.interrupted);
        let failed = clones.iter().any(|c| !c.totals.errors.is_empty());
        repetitions.push(Repetition {
            index: rep,
            clones,
            cache_before,
            cache_after,
            counters,
        });
        if rep_interrupted {
            interrupted = true;
            break;
        }
        if failed {
            break;
        }
    }

    Ok((repetitions, interrupted))
}

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
    let layout = prepare(&jobs, opts, stop)?;
    let mut warnings: Vec<String> = jobs.iter().flat_map(engine_warnings).collect();
    let all_files: Vec<PathBuf> = layout
        .iter()
        .flatten()
        .flatten()
        .map(|f| f.path.clone())
        .collect();
    let disks = counters::disks_of(&all_files);
    obs.timed_start()?;
    let r = repetitions_loop(&jobs, &layout, &disks, opts, stop, &mut warnings);
    obs.timed_end();
    let (repetitions, interrupted) = r?;
    for (j, job) in jobs.iter().enumerate() {
        if job.unlink {
            for (path, _) in job_regions(&layout[j]) {
                warnings.extend(files::unlink_if_ours(&path));
            }
        }
    }
    let files = layout
        .iter()
        .map(|clones| {
            clones
                .iter()
                .map(|cf| cf.iter().map(|f| f.path.clone()).collect())
                .collect()
        })
        .collect();
    Ok(RunResult {
        jobs,
        files,
        repetitions,
        interrupted,
        warnings,
        started_unix,
    })
}
