//! Step 4 of a repetition: every clone of the active jobs, started
//! together. For each clone the launcher opens its files (step 3), starts
//! its thread and waits until the clone has taken the files into a
//! descriptor table of its own and built its engine; only then does it close
//! its own copies and go on, so while the clones run each file is held by
//! its clone alone. All clones then start at one barrier.

use super::buffer::AlignedBuf;
use super::flow::Flows;
use super::iolog::IoLogWriter;
use super::layout::{CloneFile, Layout};
use super::open::open_clone;
use super::result::{CloneRun, Totals};
use super::stop::StopFlag;
use super::worker::{self, Clone, Gate, Meeting, NotReady, Worker};
use crate::engine::EngineError;
use crate::error::{Error, Result};
use crate::job::JobSpec;
use crate::plan::{PlanParams, Planner, Region, tables_fit};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// What clone `clone` of `job` will do, before its engine and files;
/// `tables`: its random orders may use tables ([`tables_fit`]).
fn worker(
    job: &JobSpec,
    files: &[CloneFile],
    clone: u32,
    tables: bool,
    flows: &Flows,
) -> Result<Worker> {
    let io_log = match job.logs.per_io_dir() {
        Some(dir) => Some(IoLogWriter::new(&dir).map_err(|e| {
            Error::io(
                format!(
                    "job '{}': cannot keep its per-I/O log in {}",
                    job.name,
                    dir.display()
                ),
                e,
            )
        })?),
        None => None,
    };
    let series_ms = Some(if job.logs.avg_msec > 0 {
        job.logs.avg_msec
    } else {
        1000
    });
    let depth = if job.queued() {
        job.iodepth as usize
    } else {
        1
    };
    let mut bufs: Vec<AlignedBuf> = (0..depth)
        .map(|_| AlignedBuf::new(job.bs_max as usize))
        .collect();
    if job.writes() {
        // fio fills its write buffers once (random by default).
        let mut fill =
            crate::runner::buffer::Contents::of_job(job, crate::plan::clone_seed(job, clone));
        bufs.iter_mut().for_each(|b| fill.fill(b.as_mut_slice()));
    }
    let (contents, verifier) = super::verifier::for_clone(job, clone, depth, job.queued());
    Ok(Worker {
        engine: crate::engine::find(&job.engine).map_or("?", |e| e.name),
        cfg: job.engine_config(),
        paths: files.iter().map(|f| f.path.clone()).collect(),
        writes: job.writes(),
        planner: Planner::new(PlanParams::of_clone(
            job,
            files.iter().map(|f| f.region).collect(),
            clone,
            tables,
        )),
        prefetch: job.prefetch as usize,
        fsync_every: job.fsync.max(job.files.fdatasync),
        fsync_data_only: job.files.fdatasync > 0,
        end_fsync: job.files.end_fsync || job.files.fsync_on_close,
        runtime: job.runtime_us.map(Duration::from_micros),
        bufs,
        batch_submit: job.iodepth_batch_submit.min(job.iodepth) as usize,
        complete_min: job.iodepth_batch_complete_min.min(job.iodepth) as usize,
        series_ms,
        hist_ms: (job.logs.hist.is_some() && Some(job.logs.hist_msec) != series_ms)
            .then_some(job.logs.hist_msec),
        io_log,
        sched: job.process.sched(clone),
        contents,
        verifier,
        pace: super::pace::Pace::of_job(
            job,
            crate::plan::clone_seed(job, clone),
            depth as u32,
            flows.join(
                job.pacing.flow_id,
                job.pacing.flow,
                job.pacing.flow_sleep_us,
            ),
        )
        .map(Box::new),
        ramp: (job.pacing.ramp_us > 0).then(|| Duration::from_micros(job.pacing.ramp_us)),
    })
}

/// Runs every clone of the jobs in `active` side by side until they end.
pub fn run_clones(
    jobs: &[JobSpec],
    layout: &Layout,
    active: &[usize],
    stop: &StopFlag,
) -> Result<Vec<CloneRun>> {
    let start = Gate::default();
    let abort = AtomicBool::new(false);
    let mut failure: Option<Error> = None;
    // One budget for the random-order tables of all the clones that run now.
    let regions: Vec<(&JobSpec, Vec<Region>)> = (active.iter())
        .flat_map(|&j| layout.clones[j].iter().map(move |files| (&jobs[j], files)))
        .map(|(job, files)| (job, files.iter().map(|f| f.region).collect()))
        .collect();
    let tables = tables_fit(regions.iter().map(|(job, r)| (*job, r.as_slice())));
    let flows = Flows::default();
    let runs = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (j, c) in active
            .iter()
            .flat_map(|&j| (0..jobs[j].numjobs).map(move |c| (j, c)))
        {
            if stop.is_set() {
                failure = Some(stop.interrupted());
            }
            if failure.is_some() {
                break;
            }
            let (job, files) = (&jobs[j], &layout.clones[j][c as usize]);
            let (opened, w) = match open_clone(job, files)
                .and_then(|f| Ok((f, worker(job, files, c, tables, &flows)?)))
            {
                Ok(x) => x,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            };
            let raw: Vec<RawFd> = opened.iter().map(|f| f.as_raw_fd()).collect();
            let (tx, rx) = mpsc::channel();
            let meet = Meeting {
                ready: tx,
                start: &start,
                abort: &abort,
                stop,
            };
            let def = job.engine_def();
            let thread = std::thread::Builder::new()
                .name(format!("{}.{c}", job.name).replace('\0', "?"))
                .spawn_scoped(s, move || clone_thread(def, raw, w, meet));
            match thread {
                Ok(h) => {
                    failure = match rx.recv() {
                        Ok(Err(NotReady::Engine(e))) => Some(Error::Engine {
                            job: job.name.clone(),
                            source: e,
                        }),
                        Ok(Err(NotReady::Io(what, e))) => {
                            Some(Error::io(format!("job '{}': {what}", job.name), e))
                        }
                        _ => None,
                    };
                    handles.push((j, c, h));
                }
                Err(e) => failure = Some(Error::io("cannot start a worker thread", e)),
            }
            // The clone has its own copies now (or gave up): close ours.
            drop(opened);
        }
        abort.store(failure.is_some(), Ordering::Relaxed);
        start.open();
        handles
            .into_iter()
            .map(|(j, c, h)| finished(j, c, h.join()))
            .collect::<Vec<_>>()
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(runs),
    }
}

/// A clone's thread: take over the files, build the engine, run.
fn clone_thread(
    def: Option<&'static crate::engine::EngineDef>,
    raw: Vec<RawFd>,
    w: Worker,
    meet: Meeting<'_>,
) -> (Totals, bool) {
    let give_up = |meet: Meeting<'_>, e: NotReady| {
        let _ = meet.ready.send(Err(e));
        meet.start.wait();
        (Totals::default(), false)
    };
    let adopted = if def.is_some_and(|d| d.shared_fds) {
        share(&raw)
    } else {
        // SAFETY: the launcher closes its own copies of `raw` once this
        // clone answers on `ready`, and never uses them again.
        unsafe { worker::adopt(&raw) }
    };
    let files = match adopted {
        Ok(f) => f,
        Err(e) => {
            return give_up(
                meet,
                NotReady::Io("its own descriptors (unshare, or dup for shared ones)", e),
            );
        }
    };
    if let Err((what, e)) = w.sched.apply() {
        return give_up(meet, NotReady::Io(what, e));
    }
    let engine = match def.map(|d| (d.build)(&w.cfg)) {
        Some(Ok(engine)) => engine,
        Some(Err(e)) => return give_up(meet, NotReady::Engine(e)),
        None => {
            let e = EngineError::new(w.engine, "not an engine iolab has");
            return give_up(meet, NotReady::Engine(e));
        }
    };
    engine.drive(Clone { w, files, meet })
}

/// Copies of `raw` in the process's descriptor table, for an engine whose
/// transfers run on a library's threads ([`crate::engine::Engine::SHARED_FDS`]).
fn share(raw: &[RawFd]) -> std::io::Result<Vec<std::fs::File>> {
    raw.iter()
        // SAFETY: `raw` are open descriptors of the launcher, which keeps
        // them open until this clone answers on `ready`.
        .map(|&fd| unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }.try_clone_to_owned())
        .map(|fd| fd.map(std::fs::File::from))
        .collect()
}

/// A joined clone as a [`CloneRun`] (a panic is a bug; it is passed on).
fn finished(job: usize, clone: u32, joined: std::thread::Result<(Totals, bool)>) -> CloneRun {
    let (totals, interrupted) = joined.unwrap_or_else(|p| std::panic::resume_unwind(p));
    CloneRun {
        job,
        clone,
        totals,
        interrupted,
    }
}
