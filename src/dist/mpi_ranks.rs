//! The MPI side of [`super::mpi`] (cargo feature `mpi`): barrier, the
//! done/end exchange with rank 0, and the gather.

use super::error::DistError;
use super::merge::{self, DistRun};
use super::mpi::Report;
use super::protocol::wall_ns;
use super::rank::{self, RankRun};
use crate::runner::{Observer, StopFlag};
use crate::{Error, Result};
use mpi::topology::{Rank, SimpleCommunicator};
use mpi::traits::*;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

const PING: i32 = 1;
const PONG: i32 = 2;
const DONE: i32 = 3;
const END: i32 = 4;
const REPORT: i32 = 5;

/// What the job's thread tells the main (MPI) thread.
enum Local {
    /// Files laid out: waiting for the barrier.
    Ready,
    /// The timed part started (CLOCK_REALTIME, ns).
    Started(u64),
    /// The job is over.
    Done(Box<Result<RankRun>>),
}

/// Runs `args` (the job arguments of `iolab run`) as this MPI rank. Rank 0
/// returns the merged run (and the first rank's error, if one failed);
/// every other rank returns `None` once rank 0 has its report.
pub fn run(
    args: &[String],
    stonewall: bool,
    stop: &StopFlag,
) -> Result<Option<(DistRun, Option<DistError>)>> {
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
        .ok_or_else(|| Error::from(usage("MPI was initialised already")))?;
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    if let Some(n) = super::mpi::slurm_tasks().filter(|&n| size == 1 && n > 1) {
        return Err(usage(&format!(
            "srun started {n} tasks but MPI sees 1 rank: each would run alone; \
             start them with `srun --mpi=pmix` (or pmi2)"
        ))
        .into());
    }
    let offsets = clocks(&world);
    let (tx, rx) = channel();
    let (go_tx, go_rx) = channel();
    let mut report = std::thread::scope(|s| {
        let tx2 = tx.clone();
        s.spawn(move || {
            let mut gate = Gate { tx: tx2, go: go_rx };
            let r = rank::run(args, me as u32, stop, &mut gate);
            let _ = tx.send(Local::Done(Box::new(r)));
        });
        let mut state = State::default();
        // A job that fails before its timed part still meets the barrier.
        if let Ok(Local::Done(r)) = rx.recv() {
            state.outcome = Some(*r);
        }
        world.barrier();
        let _ = go_tx.send(());
        let finished = match me {
            0 => lead(&world, &rx, &mut state, stonewall, stop),
            _ => follow(&world, &rx, &mut state, stop),
        };
        state.report(finished)
    });
    report.hostname = mpi::environment::processor_name().unwrap_or_default();
    let bytes = serde_json::to_vec(&report).map_err(|e| Error::from(usage(&e.to_string())))?;
    if me != 0 {
        world.process_at_rank(0).send_with_tag(&bytes[..], REPORT);
        return Ok(None);
    }
    let mut reports = vec![report];
    for r in 1..size {
        let (b, _) = world.process_at_rank(r).receive_vec_with_tag::<u8>(REPORT);
        reports.push(serde_json::from_slice(&b).map_err(|e| {
            Error::from(DistError::Worker {
                host: format!("rank {r}"),
                problem: format!("its report is not readable: {e}"),
            })
        })?);
    }
    gather(reports, &offsets).map(Some).map_err(Error::from)
}

fn usage(problem: &str) -> DistError {
    DistError::Usage {
        what: "MPI".into(),
        problem: problem.into(),
    }
}

/// Rank 0 makes one run of every rank's report (an error when no rank
/// measured anything).
fn gather(
    reports: Vec<Report>,
    offsets: &[i64],
) -> std::result::Result<(DistRun, Option<DistError>), DistError> {
    let mut hosts = Vec::new();
    let mut runs = Vec::new();
    let mut first_error = None;
    for (r, rep) in reports.into_iter().enumerate() {
        let (h, run) = rep.host(r as u32, offsets.get(r).copied().unwrap_or(0));
        if let (Some(problem), None) = (&h.failed, &first_error) {
            first_error = Some(DistError::Worker {
                host: format!("rank {r} ({})", h.hostname),
                problem: problem.clone(),
            });
        }
        hosts.push(h);
        runs.push(run);
    }
    let names: Vec<String> = hosts.iter().map(|h| h.hostname.clone()).collect();
    match merge::merge(&runs, &names) {
        Some(run) => Ok((DistRun { run, hosts }, first_error)),
        None => Err(first_error.unwrap_or_else(|| usage("no rank sent results"))),
    }
}

/// Each rank's clock minus rank 0's (ns, by rank; rank 0 knows them all):
/// the best of three round trips, at their midpoint.
fn clocks(world: &SimpleCommunicator) -> Vec<i64> {
    let mut offsets = vec![0i64; world.size() as usize];
    for r in 1..world.size() {
        let p = world.process_at_rank(r);
        let mut best = (u64::MAX, 0i64);
        for _ in 0..3 {
            if world.rank() == 0 {
                let t0 = wall_ns();
                p.send_with_tag(&t0, PING);
                let (t, _) = p.receive_with_tag::<u64>(PONG);
                let t1 = wall_ns();
                if t1 - t0 < best.0 {
                    best = (t1 - t0, t as i64 - ((t0 + t1) / 2) as i64);
                }
            } else if world.rank() == r {
                let root = world.process_at_rank(0);
                let _ = root.receive_with_tag::<u64>(PING);
                root.send_with_tag(&wall_ns(), PONG);
            }
        }
        offsets[r as usize] = best.1;
    }
    offsets
}

/// The rank's side of the run while it goes on.
#[derive(Default)]
struct State {
    started_ns: u64,
    outcome: Option<Result<RankRun>>,
}

impl State {
    /// Takes what the job's thread said (waits up to a millisecond).
    fn hear(&mut self, rx: &Receiver<Local>) {
        match rx.recv_timeout(Duration::from_millis(1)) {
            Ok(Local::Started(t)) => self.started_ns = t,
            Ok(Local::Done(r)) => self.outcome = Some(*r),
            Ok(Local::Ready) | Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
        }
    }

    fn report(self, finished: bool) -> Report {
        let mut rep = Report {
            hostname: String::new(),
            started_ns: self.started_ns,
            run: None,
            env: None,
            error: None,
        };
        match self.outcome {
            Some(Ok(mut r)) => {
                if finished {
                    rank::stonewalled(&mut r.run);
                }
                rep.run = Some(r.run);
                rep.env = Some(r.env);
            }
            Some(Err(e)) => rep.error = Some(e.to_string()),
            None => rep.error = Some("its job never ended".into()),
        }
        rep
    }
}

/// Rank 0: hears who is done, answers each rank once. Returns true when
/// it stopped its own job because another rank finished first.
fn lead(
    world: &SimpleCommunicator,
    rx: &Receiver<Local>,
    st: &mut State,
    stonewall: bool,
    stop: &StopFlag,
) -> bool {
    let n = world.size() as usize;
    let (mut done, mut ended) = (vec![false; n], vec![false; n]);
    ended[0] = true;
    let mut finished = false;
    loop {
        st.hear(rx);
        done[0] = st.outcome.is_some();
        while let Some(s) = world.any_process().immediate_probe_with_tag(DONE) {
            let r: Rank = s.source_rank();
            let _ = world.process_at_rank(r).receive_with_tag::<u8>(DONE);
            done[r as usize] = true;
        }
        let first_done = done.iter().any(|&d| d);
        for r in 1..n {
            if !ended[r] && (done[r] || (stonewall && first_done)) {
                world
                    .process_at_rank(r as Rank)
                    .send_with_tag(&u8::from(!done[r]), END);
                ended[r] = true;
            }
        }
        if stonewall && first_done && !done[0] && !finished {
            finished = true;
            stop.set();
        }
        if done.iter().all(|&d| d) && ended.iter().all(|&e| e) {
            return finished;
        }
    }
}

/// Any other rank: says when it is done, stops when rank 0 says so.
/// Returns true when it stopped because another rank finished first.
fn follow(
    world: &SimpleCommunicator,
    rx: &Receiver<Local>,
    st: &mut State,
    stop: &StopFlag,
) -> bool {
    let root = world.process_at_rank(0);
    let (mut said, mut ended, mut finished) = (false, false, false);
    loop {
        st.hear(rx);
        if st.outcome.is_some() && !said {
            root.send_with_tag(&1u8, DONE);
            said = true;
        }
        if !ended && root.immediate_probe_with_tag(END).is_some() {
            let (now, _) = root.receive_with_tag::<u8>(END);
            ended = true;
            if now == 1 && st.outcome.is_none() {
                finished = true;
                stop.set();
            }
        }
        if said && ended {
            return finished;
        }
    }
}

/// Holds the job's timed part until the main thread has met the barrier.
struct Gate {
    tx: Sender<Local>,
    go: Receiver<()>,
}

impl Observer for Gate {
    fn timed_start(&mut self) -> Result<()> {
        let _ = self.tx.send(Local::Ready);
        let _ = self.go.recv();
        let _ = self.tx.send(Local::Started(wall_ns()));
        Ok(())
    }
}
