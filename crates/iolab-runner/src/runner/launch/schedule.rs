//! Which clones may start and which must end, as fio's `run_threads`
//! decides it: start delays, `stonewall`, `wait_for`, `exitall` with
//! `exit_what`, and telling the repetition when a job has ended. The
//! launcher runs the threads; this holds its rules.

use super::events::JobEvents;
use crate::job::JobSpec;
use crate::job::groups::lifecycle::ExitWhat;
use crate::runner::control::CloneCtl;
use std::sync::Arc;

/// Where one clone is (fio's runstate, coarsely).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    /// Not started yet.
    Waiting,
    /// Its thread runs.
    Running,
    /// Ended and joined.
    Done,
    /// Never started (ended by `exitall`, a failure or Ctrl-C first).
    Skipped,
}

/// One clone to run.
pub(super) struct Td {
    pub job: usize,
    pub clone: u32,
    /// `startdelay` of this clone (ns after the repetition began).
    pub delay_ns: u64,
    pub state: State,
}

/// The delay clone `clone` of `job` waits before it starts (ns): a range
/// draws per clone, as fio's `rand_between` (here from the clone's seed).
pub(super) fn delay_ns(job: &JobSpec, clone: u32) -> u64 {
    let (lo, hi) = job.lifecycle.startdelay_us;
    let us = if hi > lo {
        let r = crate::plan::clone_seed(job, clone).wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        lo + r % (hi - lo + 1)
    } else {
        lo
    };
    us.saturating_mul(1000)
}

/// True when clone `i` may not start yet because the job it waits for
/// (`wait_for`) still has a clone not ended (fio's `waitee_running`).
fn waitee_running(tds: &[Td], jobs: &[JobSpec], i: usize) -> bool {
    let me = &jobs[tds[i].job];
    let Some(w) = &me.lifecycle.wait_for else {
        return false;
    };
    tds.iter().any(|t| {
        let job = &jobs[t.job];
        job.name != me.name && &job.name == w && matches!(t.state, State::Waiting | State::Running)
    })
}

/// The clones that may start now, in order (fio's creation pass of
/// `run_threads`); those asked to end before they started are skipped.
pub(super) fn startable(
    tds: &mut [Td],
    jobs: &[JobSpec],
    ctls: &[Arc<CloneCtl>],
    elapsed_ns: u64,
) -> Vec<usize> {
    let running = tds.iter().any(|t| t.state == State::Running);
    let mut batch = Vec::new();
    for i in 0..tds.len() {
        if tds[i].state != State::Waiting {
            continue;
        }
        if ctls[i].ended() {
            tds[i].state = State::Skipped;
            continue;
        }
        if tds[i].delay_ns > elapsed_ns {
            continue;
        }
        // Only a job's first clone carries its stonewall, as in fio.
        if tds[i].clone == 0 && jobs[tds[i].job].stonewall && (running || !batch.is_empty()) {
            break;
        }
        if waitee_running(tds, jobs, i) {
            continue;
        }
        batch.push(i);
    }
    batch
}

/// fio's `fio_terminate_threads`: asks the clones `what` names to end
/// (`group`: those of reporting group `group`, started or not).
pub(super) fn terminate(
    tds: &[Td],
    ctls: &[Arc<CloneCtl>],
    groups: &[u32],
    group: u32,
    what: ExitWhat,
) {
    for (t, ctl) in tds.iter().zip(ctls) {
        let hit = match what {
            ExitWhat::Group => groups[t.job] == group,
            ExitWhat::Stonewall => t.state == State::Running,
            ExitWhat::All => true,
        };
        if hit {
            ctl.end();
        }
    }
}

/// Tells `events` of each started job whose clones have all ended (or
/// been skipped) since it last looked.
pub(super) fn job_ends(
    tds: &[Td],
    left: &mut [u32],
    started: &mut [bool],
    events: &mut dyn JobEvents,
) {
    let mut gone = vec![(0u32, 0u32); left.len()];
    for t in tds {
        gone[t.job].1 += 1;
        if matches!(t.state, State::Done | State::Skipped) {
            gone[t.job].0 += 1;
        }
    }
    for (j, (l, (ended, total))) in left.iter_mut().zip(gone).enumerate() {
        if *l > 0 && total > 0 && ended == total {
            *l = 0;
            if started[j] {
                events.ended(j);
            }
        }
    }
}
