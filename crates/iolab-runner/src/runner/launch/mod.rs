//! Step 4 of a repetition: the clones of the active jobs, started and
//! ended as fio's `run_threads` does. In job order, a clone starts once its
//! `startdelay` has passed since the repetition began, unless a job with
//! `stonewall` waits for the ones running or its `wait_for` job still
//! runs; those that can start in one pass start together. For each clone
//! the launcher opens its files (step 3), starts its thread and waits until
//! the clone has taken the files into a descriptor table of its own and
//! built its engine; only then does it close its own copies and go on, so
//! while the clones run each file is held by its clone alone. When a clone
//! ends, `exitall` (and `exitall_on_error`) end others as `exit_what`
//! says; once a second the steady-state checker ([`super::steady`]) may end
//! a clone or its group. When the repetition shows live progress, the
//! launcher samples the clones' published counters ([`super::live`]).
//! Its rules are in `schedule`; what it tells the repetition, [`JobEvents`].

use super::StopFlag;
use super::control::{CloneCtl, WATCH_NS};
use super::flow::Flows;
use super::iolog::IoLogWriter;
use super::layout::{CloneFile, Layout};
use super::live::{Expect, Seen};
use super::open::open_clone;
use super::progress::LIVE_NS;
use super::result::{CloneRun, Totals};
use super::steady::Checker;
use super::worker::Batches;
use super::worker::{self, Clone, Gate, Meeting, NotReady, Worker};
use crate::engine::EngineError;
use crate::error::{Error, Result};
use crate::job::JobSpec;
use crate::job::groups::lifecycle;
use crate::metrics::clock::now_ns;
use crate::plan::{PlanParams, Planner, Region, tables_fit};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

mod events;
mod schedule;

pub use events::JobEvents;
use schedule::{State, Td, delay_ns, job_ends, startable, terminate};

/// What clone `clone` of `job` will do, before its engine and files;
/// `tables`: its random orders may use tables ([`tables_fit`]); `index`:
/// fio's thread number less one (every clone of every job counted).
fn worker(
    job: &JobSpec,
    files: &[CloneFile],
    (clone, index): (u32, u64),
    tables: bool,
    watch: Option<Arc<CloneCtl>>,
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
    let (depth, low) = job.queue_depths();
    let depth = depth as usize;
    let mut bufs = super::iomem::clone_buffers(&job.memory, job.direct, job.bs_max as usize, depth)
        .map_err(|e| Error::io(format!("job '{}': its I/O buffers", job.name), e))?;
    if job.writes() {
        // fio fills its write buffers once (random by default).
        let mut fill =
            crate::runner::buffer::Contents::of_job(job, crate::plan::clone_seed(job, clone));
        bufs.iter_mut().for_each(|b| fill.fill(b.as_mut_slice()));
    }
    let (contents, verifier) =
        super::verify::verifier::for_clone(job, (clone, index, files.len()), depth, job.queued())
            .map_err(|e| Error::RunFailed {
            errors: vec![format!("job '{}': {e}", job.name)],
        })?;
    Ok(Worker {
        engine: crate::engine::find(&job.engine).map_or("?", |e| e.name),
        cfg: job.engine_config(),
        paths: files.iter().map(|f| f.path.clone()).collect(),
        writes: job.writes(),
        reads: job.reads(),
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
        batches: Batches {
            submit: job.iodepth_batch_submit.min(job.iodepth) as usize,
            complete_min: job.iodepth_batch_complete_min.min(job.iodepth) as usize,
            // fio: a maximum under the minimum is the minimum; never over
            // the depth.
            complete_max: (job.iodepth_batch_complete_max)
                .unwrap_or(job.iodepth_batch_complete_min)
                .max(job.iodepth_batch_complete_min)
                .min(job.iodepth) as usize,
            low: low as usize,
        },
        series_ms,
        hist_ms: (job.logs.hist.is_some() && Some(job.logs.hist_msec) != series_ms)
            .then_some(job.logs.hist_msec),
        io_log,
        sched: job.process.sched(clone),
        continue_on: job.process.continue_on,
        fill_device: job.files.fill_device,
        // fio's gtod_reduce: no latency asked for, none measured.
        timed: !(job.pacing.disable_lat && job.pacing.disable_clat && job.pacing.disable_slat),
        contents,
        verifier,
        watch,
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

/// fio's thread number less one of the first clone of job `j`.
fn first_index(jobs: &[JobSpec], j: usize) -> u64 {
    jobs[..j].iter().map(|x| u64::from(x.numjobs)).sum()
}

/// The most the launcher sleeps while clones wait to start (it looks at
/// Ctrl-C and the start delays this often).
const LOOK_NS: u64 = 100_000_000;

/// Runs the clones of the jobs in `active` until they end (see the module
/// documentation); `events` hears of each job's start and end.
pub fn run_clones(
    jobs: &[JobSpec],
    layout: &Layout,
    active: &[usize],
    stop: &StopFlag,
    events: &mut dyn JobEvents,
) -> Result<Vec<CloneRun>> {
    let groups = lifecycle::groupids(jobs);
    let mut tds: Vec<Td> = (active.iter())
        .flat_map(|&j| (0..jobs[j].numjobs).map(move |c| (j, c)))
        .map(|(job, clone)| Td {
            job,
            clone,
            delay_ns: delay_ns(&jobs[job], clone),
            state: State::Waiting,
        })
        .collect();
    let life = |j: &usize| &jobs[*j].lifecycle;
    let watched =
        (active.iter().map(life)).any(|l| l.exitall || l.exitall_on_error || l.steady.dur_s > 0);
    let live = events.live();
    // Ending clones needs quick looks; showing progress does not, but
    // samples the counters at most a fifth of a sample old.
    let every = if watched { WATCH_NS } else { LIVE_NS / 5 };
    let ctls: Vec<Arc<CloneCtl>> = (tds.iter())
        .map(|_| Arc::new(CloneCtl::every(every)))
        .collect();
    let expects: Vec<Expect> = (tds.iter())
        .map(|t| Expect::of_clone(&jobs[t.job], &regions_of(layout, t.job, t.clone)))
        .collect();
    let gates: Vec<Gate> = tds.iter().map(|_| Gate::default()).collect();
    let aborts: Vec<AtomicBool> = tds.iter().map(|_| AtomicBool::new(false)).collect();
    let exitall = active.iter().map(life).any(|l| l.exitall);
    let mut checker = Checker::new(
        jobs,
        &groups,
        &tds.iter().map(|t| t.job).collect::<Vec<_>>(),
    );
    let mut left: Vec<u32> = jobs.iter().map(|j| j.numjobs).collect();
    let mut started = vec![false; jobs.len()];
    // One budget for the random-order tables of all the clones of the repetition.
    let regions: Vec<(&JobSpec, Vec<Region>)> = (active.iter())
        .flat_map(|&j| layout.clones[j].iter().map(move |files| (&jobs[j], files)))
        .map(|(job, files)| (job, files.iter().map(|f| f.region).collect()))
        .collect();
    let tables = tables_fit(regions.iter().map(|(job, r)| (*job, r.as_slice())));
    let flows = Flows::default();
    let mut failure: Option<Error> = None;
    let mut runs: Vec<Option<CloneRun>> = tds.iter().map(|_| None).collect();
    let mut epochs = vec![0u64; tds.len()];
    let genesis = now_ns();
    let mut next_tick = genesis + 1_000_000_000;
    let mut next_live = genesis + LIVE_NS;
    let (done_tx, done_rx) = mpsc::channel::<usize>();
    std::thread::scope(|s| {
        let mut handles: Vec<Option<std::thread::ScopedJoinHandle<'_, (Totals, bool)>>> =
            tds.iter().map(|_| None).collect();
        let mut halt = false;
        loop {
            halt |= stop.is_set() || failure.is_some();
            let batch = if halt {
                Vec::new()
            } else {
                startable(&mut tds, jobs, &ctls, now_ns() - genesis)
            };
            for &i in &batch {
                let (j, c) = (tds[i].job, tds[i].clone);
                if !std::mem::replace(&mut started[j], true) {
                    events.starting(j);
                }
                let job = &jobs[j];
                let files = super::layout::sized_now(job, c, &layout.clones[j][c as usize]);
                let watch = (watched || live).then(|| ctls[i].clone());
                let (opened, w) = match files.and_then(|files| {
                    let files = &files[..];
                    let f = open_clone(job, files)?;
                    let index = first_index(jobs, j) + u64::from(c);
                    Ok((f, worker(job, files, (c, index), tables, watch, &flows)?))
                }) {
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
                    start: &gates[i],
                    abort: &aborts[i],
                    stop,
                };
                let def = job.engine_def();
                let done = done_tx.clone();
                let thread = std::thread::Builder::new()
                    .name(format!("{}.{c}", job.name).replace('\0', "?"))
                    .spawn_scoped(s, move || {
                        let out = clone_thread(def, raw, w, meet);
                        let _ = done.send(i);
                        out
                    });
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
                        handles[i] = Some(h);
                        tds[i].state = State::Running;
                    }
                    Err(e) => failure = Some(Error::io("cannot start a worker thread", e)),
                }
                // The clone has its own copies now (or gave up): close ours.
                drop(opened);
                if failure.is_some() {
                    break;
                }
            }
            let t0 = now_ns();
            for &i in batch.iter().filter(|&&i| tds[i].state == State::Running) {
                epochs[i] = t0;
                if let Some(ch) = &mut checker {
                    ch.started(i, t0);
                }
                aborts[i].store(failure.is_some(), Ordering::Relaxed);
                gates[i].open();
            }
            halt |= failure.is_some();
            let running = tds.iter().filter(|t| t.state == State::Running).count();
            let waiting = tds.iter().any(|t| t.state == State::Waiting);
            if running == 0 && (halt || !waiting) {
                break;
            }
            let now = now_ns();
            let mut wake = u64::MAX;
            if waiting && !halt {
                wake = (tds.iter())
                    .filter(|t| t.state == State::Waiting && genesis + t.delay_ns > now)
                    .map(|t| genesis + t.delay_ns)
                    .fold(now + LOOK_NS, u64::min);
            }
            if checker.is_some() && running > 0 {
                wake = wake.min(next_tick);
            }
            if live && running > 0 {
                wake = wake.min(next_live);
            }
            let got = if wake == u64::MAX {
                done_rx.recv().ok()
            } else {
                done_rx
                    .recv_timeout(Duration::from_nanos(wake.saturating_sub(now)))
                    .ok()
            };
            for i in got.into_iter().chain(done_rx.try_iter()) {
                let (j, c) = (tds[i].job, tds[i].clone);
                let h = handles[i].take().expect("a running clone has its thread");
                let run = finished(j, c, h.join());
                tds[i].state = State::Done;
                if live {
                    ctls[i].publish(final_counts(&run.totals));
                }
                let failed = !run.totals.errors.is_empty();
                // fio: a job that failed ends alone; the jobs after it
                // still run (unless exitall_on_error says otherwise).
                halt |= run.interrupted;
                let l = &jobs[j].lifecycle;
                if exitall || (l.exitall_on_error && failed) {
                    terminate(&tds, &ctls, &groups, groups[j], l.exit_what);
                }
                runs[i] = Some(run);
            }
            if let Some(ch) = &mut checker {
                let now = now_ns();
                if now >= next_tick {
                    let running: Vec<bool> =
                        tds.iter().map(|t| t.state == State::Running).collect();
                    let refs: Vec<&CloneCtl> = ctls.iter().map(|c| c.as_ref()).collect();
                    ch.check(jobs, &refs, &running, &epochs, now);
                    while next_tick <= now {
                        next_tick += 1_000_000_000;
                    }
                }
            }
            if live && now_ns() >= next_live {
                let seen: Vec<(Seen, Expect)> = (tds.iter().enumerate())
                    .map(|(i, t)| (seen(t.state, &ctls[i], epochs[i]), expects[i]))
                    .collect();
                let now = now_ns();
                events.tick(&super::live::sample(&seen, now));
                next_live = now + LIVE_NS;
            }
            for (i, t) in tds.iter_mut().enumerate() {
                if t.state == State::Waiting && (halt || ctls[i].ended()) {
                    t.state = State::Skipped;
                }
            }
            job_ends(&tds, &mut left, &mut started, events);
        }
        for t in tds.iter_mut().filter(|t| t.state == State::Waiting) {
            t.state = State::Skipped;
        }
        job_ends(&tds, &mut left, &mut started, events);
    });
    if let Some(e) = failure {
        return Err(e);
    }
    if let Some(ch) = checker {
        for (run, out) in runs.iter_mut().zip(ch.finish()) {
            if let Some(r) = run {
                r.steady = out;
            }
        }
    }
    Ok(runs.into_iter().flatten().collect())
}

/// The regions of clone `clone` of job `j`.
fn regions_of(layout: &Layout, j: usize, clone: u32) -> Vec<Region> {
    (layout.clones[j].get(clone as usize))
        .map(|files| files.iter().map(|f| f.region).collect())
        .unwrap_or_default()
}

/// A clone's counters as it ended.
fn final_counts(t: &Totals) -> super::control::Progress {
    let ops = [&t.read, &t.write, &t.trim];
    super::control::Progress {
        ios: ops.iter().map(|o| o.ios()).sum(),
        bytes: ops.iter().map(|o| o.bytes).sum(),
        t_ns: now_ns(),
    }
}

/// Where a clone is, for a live sample.
fn seen(state: State, ctl: &CloneCtl, epoch_ns: u64) -> Seen {
    match state {
        State::Waiting => Seen::Waiting,
        State::Running => Seen::Running {
            epoch_ns,
            done: ctl.progress(),
        },
        State::Done | State::Skipped => Seen::Over(ctl.progress()),
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
        steady: None,
    }
}
