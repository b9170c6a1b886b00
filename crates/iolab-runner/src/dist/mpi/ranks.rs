//! The MPI calls of a run under MPI (cargo feature `mpi`): clock offsets, the
//! start barrier, the done/end exchange with rank 0, and the gather.

use super::ranked::{Me, RankFailed, Ranked, usage};
use crate::dist::protocol::wall_ns;
use crate::runner::{Observer, StopFlag};
use crate::{Error, Result};
use mpi::topology::{Rank, SimpleCommunicator};
use mpi::traits::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

const PING: i32 = 1;
const PONG: i32 = 2;
const DONE: i32 = 3;
const END: i32 = 4;
const REPORT: i32 = 5;

/// What the work's thread tells the main (MPI) thread.
enum Local<T> {
    /// Ready: waiting for the barrier.
    Ready,
    /// The timed part started (CLOCK_REALTIME, ns).
    Started(u64),
    /// The work is over.
    Done(Box<Result<T>>),
}

/// Runs `work` as this MPI rank: it calls [`Observer::timed_start`] when
/// ready, which returns once every rank is (the barrier). With `stonewall`
/// every rank is stopped (through `stop`) when the first is done. Rank 0
/// returns every rank's outcome, in rank order; the others `None`.
pub fn run_ranks<T, F>(stonewall: bool, stop: &StopFlag, work: F) -> Result<Option<Vec<Ranked<T>>>>
where
    T: Serialize + DeserializeOwned + Send,
    F: FnOnce(Me, &mut dyn Observer) -> Result<T> + Send,
{
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
        .ok_or_else(|| Error::from(usage("MPI was initialised already")))?;
    let world = universe.world();
    let me = Me {
        rank: world.rank() as u32,
        size: world.size() as u32,
    };
    if let Some(n) = slurm_tasks().filter(|&n| me.size == 1 && n > 1) {
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
            let r = work(me, &mut gate);
            let _ = tx.send(Local::Done(Box::new(r)));
        });
        let mut state = State::default();
        // Work that fails before it is ready still meets the barrier.
        if let Ok(Local::Done(r)) = rx.recv() {
            state.outcome = Some(*r);
        }
        world.barrier();
        let _ = go_tx.send(());
        let finished = match me.rank {
            0 => lead(&world, &rx, &mut state, stonewall, stop),
            _ => follow(&world, &rx, &mut state, stop),
        };
        state.report(finished)
    });
    report.hostname = mpi::environment::processor_name().unwrap_or_default();
    let bytes = serde_json::to_vec(&report).map_err(|e| Error::from(usage(&e.to_string())))?;
    if me.rank != 0 {
        world.process_at_rank(0).send_with_tag(&bytes[..], REPORT);
        return Ok(None);
    }
    let mut out = vec![report.ranked(offsets[0])];
    for (r, &offset) in offsets.iter().enumerate().skip(1) {
        let (b, _) = world
            .process_at_rank(r as Rank)
            .receive_vec_with_tag::<u8>(REPORT);
        let rep: Report<T> = serde_json::from_slice(&b).map_err(|e| {
            Error::from(crate::dist::DistError::Worker {
                host: format!("rank {r}"),
                problem: format!("its report is not readable: {e}"),
            })
        })?;
        out.push(rep.ranked(offset));
    }
    Ok(Some(out))
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

/// The rank's side while the work goes on.
struct State<T> {
    started_ns: u64,
    outcome: Option<Result<T>>,
}

impl<T> Default for State<T> {
    fn default() -> Self {
        State {
            started_ns: 0,
            outcome: None,
        }
    }
}

impl<T> State<T> {
    /// Takes what the work's thread said (waits up to a millisecond).
    fn hear(&mut self, rx: &Receiver<Local<T>>) {
        match rx.recv_timeout(Duration::from_millis(1)) {
            Ok(Local::Started(t)) => self.started_ns = t,
            Ok(Local::Done(r)) => self.outcome = Some(*r),
            Ok(Local::Ready) | Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
        }
    }

    fn report(self, finished: bool) -> Report<T> {
        let (outcome, error) = match self.outcome {
            Some(Ok(t)) => (Some(t), None),
            Some(Err(e)) => (None, Some(e.to_string())),
            None => (None, Some("its work never ended".into())),
        };
        Report {
            hostname: String::new(),
            started_ns: self.started_ns,
            outcome,
            error,
            finished,
        }
    }
}

/// Rank 0: hears who is done, answers each rank once. Returns true when
/// it stopped its own work because another rank finished first.
fn lead<T>(
    world: &SimpleCommunicator,
    rx: &Receiver<Local<T>>,
    st: &mut State<T>,
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
fn follow<T>(
    world: &SimpleCommunicator,
    rx: &Receiver<Local<T>>,
    st: &mut State<T>,
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

/// Holds the work's timed part until the main thread has met the barrier.
struct Gate<T> {
    tx: Sender<Local<T>>,
    go: Receiver<()>,
}

impl<T> Observer for Gate<T> {
    fn timed_start(&mut self) -> Result<()> {
        let _ = self.tx.send(Local::Ready);
        let _ = self.go.recv();
        let _ = self.tx.send(Local::Started(wall_ns()));
        Ok(())
    }
}

/// The ranks `srun` started (`SLURM_NTASKS` under a job step), if any.
fn slurm_tasks() -> Option<u32> {
    std::env::var("SLURM_STEP_NUM_TASKS")
        .or_else(|_| std::env::var("SLURM_NTASKS"))
        .ok()?
        .parse()
        .ok()
}

/// What one rank sends rank 0 at the end.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Report<T> {
    hostname: String,
    /// When its timed part started (its CLOCK_REALTIME, ns).
    started_ns: u64,
    outcome: Option<T>,
    error: Option<String>,
    finished: bool,
}

impl<T> Report<T> {
    /// As rank 0 knows it, the rank's clock `offset_ns` from its own.
    fn ranked(self, offset_ns: i64) -> Ranked<T> {
        Ranked {
            hostname: self.hostname,
            clock_offset_ns: offset_ns,
            started_ns: (self.started_ns as i64 - offset_ns).max(0) as u64,
            outcome: match (self.outcome, self.error) {
                (Some(t), _) => Ok(t),
                (None, e) => Err(RankFailed(e.unwrap_or_else(|| "no results".into()))),
            },
            finished: self.finished,
        }
    }
}
