//! A clone's pacing, ported from fio 3.33: the rate limit (`rate_ddir`,
//! `usec_for_io`), the `rate_min` checks (`check_min_rate`), think times
//! (`handle_thinktime`) and the queue-depth search of `latency_target`
//! (`lat_target_*`, in `lat_target`). The token flow between jobs is
//! [`super::flow`]; what the loop does after a step, [`Step`].
//! Built only for a job that sets one of them ([`Pacing::paced`]); the
//! loops then call [`Pace::wait`] before and [`Pace::done`] after each I/O.
//! Waits happen before an I/O is stamped, so they are never I/O latency.

use super::StopFlag;
use super::flow::FlowMember;
use crate::job::JobSpec;
use crate::job::groups::pacing::Pacing;
use crate::job::spec::Mix;
use crate::metrics::clock::now_ns;
use std::time::Duration;

mod lat_target;
mod step;

use lat_target::LatTarget;
pub use step::Step;

/// Longest single sleep, so that Ctrl-C is seen (fio sleeps at most 1 s).
const SLEEP_SLICE_NS: u64 = 100_000_000;

/// The `rate_min`/`rate_iops_min` checks.
struct MinRate {
    bytes: [u64; 2],
    iops: [u64; 2],
    cycle_ms: u64,
    last_bytes: [u64; 2],
    last_ios: [u64; 2],
    last_time: [u64; 2],
}

/// One clone's pacing state.
pub struct Pace {
    job: String,
    bps: [u64; 2],
    min_bs: [u64; 2],
    /// An I/O may turn to this direction (a mix with a share of it and the
    /// same sizes both ways).
    switch: [bool; 2],
    poisson: bool,
    rng: u64,
    last_usec: [u64; 2],
    issue_bytes: [u64; 2],
    next_io_us: [u64; 2],
    done_bytes: [u64; 2],
    done_ios: [u64; 2],
    min: Option<MinRate>,
    ignore_think: bool,
    think_us: u64,
    spin_us: u64,
    think_blocks: u64,
    blocks_set: bool,
    think_issue: bool,
    iotime_us: u64,
    last_think: u64,
    last_think_blocks: u64,
    seen_blocks: u64,
    seen_at: u64,
    issued: u64,
    lat: Option<LatTarget>,
    flow: Option<FlowMember>,
    /// When the job's clock started (fio's `epoch`, `start`).
    epoch: u64,
    /// The error that ended the clone (`rate_min` not met, latency).
    pub error: Option<String>,
}

impl Pace {
    /// The pacing of a clone of `job` (`seed`: its random seed), or `None`
    /// when the job sets nothing of it; `depth`: its queue depth.
    pub fn of_job(job: &JobSpec, seed: u64, depth: u32, flow: Option<FlowMember>) -> Option<Pace> {
        let p: &Pacing = &job.pacing;
        if !p.paced() {
            return None;
        }
        let min_bs = [job.access.sizes[0].0, job.access.sizes[1].0];
        let bps = [0, 1].map(|d| {
            if p.rate[d] > 0 || p.rate_iops[d] > 0 {
                p.rate_bps(d, min_bs[d])
            } else {
                0
            }
        });
        let min = (p.rate_min.iter().chain(&p.rate_iops_min).any(|&x| x > 0)).then_some(MinRate {
            bytes: p.rate_min,
            iops: p.rate_iops_min,
            cycle_ms: p.rate_cycle_ms,
            last_bytes: [0; 2],
            last_ios: [0; 2],
            last_time: [0; 2],
        });
        let lat = (p.latency_target_us > 0).then(|| LatTarget {
            target_ns: p.latency_target_us.saturating_mul(1000),
            window_ns: p.latency_window_us.saturating_mul(1000),
            percentile: p.latency_percentile,
            run: p.latency_run,
            max_depth: depth.max(1),
            qd: 1,
            high: depth.max(1),
            low: 1,
            stable: 0,
            failed: 0,
            cycle_start: 0,
            cycle_ios: 0,
            end_run: false,
        });
        Some(Pace {
            job: job.name.clone(),
            bps,
            min_bs,
            switch: [0, 1].map(|d| {
                let share = if d == 0 {
                    job.rwmixread
                } else {
                    100 - job.rwmixread
                };
                job.mix == Mix::Mixed
                    && share > 0
                    && job.access.sizes[0] == job.access.sizes[1]
                    && job.access.bssplit[0] == job.access.bssplit[1]
            }),
            poisson: p.poisson,
            rng: seed | 1,
            last_usec: [0; 2],
            issue_bytes: [0; 2],
            next_io_us: [0; 2],
            done_bytes: [0; 2],
            done_ios: [0; 2],
            min,
            ignore_think: p.rate_ignore_thinktime,
            // fio: thinktime_spin is at most thinktime.
            think_us: p.thinktime_us,
            spin_us: p.thinktime_spin_us.min(p.thinktime_us),
            think_blocks: p.thinktime_blocks,
            blocks_set: p.thinktime_blocks_set,
            think_issue: p.thinktime_issue,
            iotime_us: p.thinktime_iotime_us,
            last_think: 0,
            last_think_blocks: 0,
            seen_blocks: 0,
            seen_at: 0,
            issued: 0,
            lat,
            flow,
            epoch: 0,
            error: None,
        })
    }

    /// Starts (or, after `ramp_time` and the latency search, restarts) the
    /// clock and the counters, as fio's `reset_all_stats`.
    pub fn start(&mut self, now: u64) {
        self.epoch = now;
        (self.issue_bytes, self.next_io_us, self.last_usec) = ([0; 2], [0; 2], [0; 2]);
        (self.done_bytes, self.done_ios) = ([0; 2], [0; 2]);
        if let Some(m) = &mut self.min {
            (m.last_bytes, m.last_ios) = ([0; 2], [0; 2]);
        }
        // The final run of the search keeps its depth; its window counts
        // from here (fio's lat_new_cycle after reset_all_stats).
        match &mut self.lat {
            Some(l) if l.end_run => l.new_cycle(now, 0),
            Some(l) => l.init(now, 0),
            None => {}
        }
        self.last_think = now;
    }

    /// The queue depth the latency search allows now (`None`: no limit).
    #[inline]
    pub fn depth(&self) -> Option<u32> {
        self.lat.as_ref().map(|l| l.qd)
    }

    /// The depth the latency search settled on, for the report.
    pub fn final_depth(&self) -> Option<u32> {
        self.depth()
    }

    /// Before an I/O in direction `write`: the flow's turn, then the rate
    /// (fio's `flow_threshold_exceeded`, `rate_ddir`), until `deadline`.
    /// In a mix, the I/O turns to the other direction when that one is
    /// behind its rate or due first, as fio.
    pub fn wait(&mut self, write: &mut bool, deadline: u64, stop: &StopFlag) -> Step {
        if let Some(f) = &mut self.flow {
            while f.held_back() {
                if stop.is_set() {
                    return Step::Stopped;
                }
                if now_ns() >= deadline {
                    return Step::End;
                }
                match f.sleep_us {
                    0 => std::hint::spin_loop(),
                    us => std::thread::sleep(Duration::from_micros(us)),
                }
            }
        }
        let now = now_ns();
        let (due, dir) = self.due(*write, now);
        *write = dir;
        if due <= now {
            return Step::On;
        }
        if now >= deadline {
            return Step::End;
        }
        match sleep_until(due.min(deadline), stop) {
            Step::On if due > deadline => Step::End,
            s => s,
        }
    }

    /// When the next I/O may go (ns of [`now_ns`]) and in which direction
    /// (fio's `rate_ddir`): the planned one `write` if it is due, else the
    /// other one of a mix if that is due or due sooner.
    fn due(&self, write: bool, now: u64) -> (u64, bool) {
        let at = |w: bool| self.epoch + self.next_io_us[w as usize].saturating_mul(1000);
        let mine = at(write);
        if mine <= now || !self.switch[!write as usize] {
            return (mine, write);
        }
        let other = at(!write);
        if other <= now || other < mine {
            (other, !write)
        } else {
            (mine, write)
        }
    }

    /// [`Pace::wait`] would wait now (the flow holds the clone back with
    /// `flow_sleep`, or the rate is ahead): the loop with I/Os in flight
    /// lets them complete first, as fio.
    pub fn would_wait(&self, write: bool) -> bool {
        if (self.flow.as_ref()).is_some_and(|f| f.sleep_us > 0 && f.would_hold()) {
            return true;
        }
        let now = now_ns();
        self.due(write, now).0 > now
    }

    /// After an I/O of `len` bytes in direction `write` was issued: fio's
    /// `rate_io_issue_bytes` and `usec_for_io`.
    #[inline]
    pub fn issued(&mut self, write: bool, len: u32) {
        let d = write as usize;
        self.issued += 1;
        self.issue_bytes[d] += len as u64;
        let bps = self.bps[d];
        if bps == 0 {
            return;
        }
        self.next_io_us[d] = if self.poisson {
            let iops = (bps / self.min_bs[d]).max(1);
            let val = ((1_000_000 / iops) as f64 * -(self.rand01().ln())) as u64;
            self.last_usec[d] += val;
            self.last_usec[d]
        } else {
            let b = self.issue_bytes[d];
            (b % bps) * 1_000_000 / bps + (b / bps) * 1_000_000
        };
    }

    /// A uniform number in (0, 1] (fio's `__rand_0_1` for the poisson process).
    fn rand01(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        ((self.rng >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// After an I/O of `len` bytes completed with total latency `lat_ns`
    /// at `now`; `ramp`: still in `ramp_time` (nothing checked).
    pub fn done(&mut self, write: bool, len: u32, lat_ns: u64, now: u64, ramp: bool) -> Step {
        let d = write as usize;
        self.done_bytes[d] += len as u64;
        self.done_ios[d] += 1;
        if ramp {
            return Step::On;
        }
        let ios = self.done_ios[0] + self.done_ios[1];
        if let Some(l) = &mut self.lat
            && lat_ns > l.target_ns
        {
            if l.percentile >= 100.0 {
                if l.qd == 1 {
                    self.error = Some(format!(
                        "job '{}': latency of {} usec exceeds the latency_target of {} usec",
                        self.job,
                        lat_ns / 1000,
                        l.target_ns / 1000
                    ));
                    return Step::End;
                }
                l.failed(now, ios);
            } else {
                l.failed += 1;
            }
        }
        if self.min.is_some() && self.below_min_rate(now) {
            return Step::End;
        }
        match &mut self.lat {
            Some(l) if now - l.cycle_start >= l.window_ns => {
                let n = ios.saturating_sub(l.cycle_ios);
                let success = (n as f64 - l.failed as f64) / n as f64 * 100.0;
                if success >= l.percentile {
                    l.success(now, ios)
                } else {
                    l.failed(now, ios);
                    Step::On
                }
            }
            _ => Step::On,
        }
    }

    /// fio's `check_min_rate`; true (with the error kept) when not met.
    fn below_min_rate(&mut self, now: u64) -> bool {
        let Some(m) = &mut self.min else {
            return false;
        };
        if now - self.epoch < 2_000_000_000 {
            return false;
        }
        for d in 0..2 {
            if self.done_bytes[d] == 0 || (m.bytes[d] == 0 && m.iops[d] == 0) {
                continue;
            }
            if m.last_bytes[d] > 0 || m.last_ios[d] > 0 {
                let spent = (now - m.last_time[d]) / 1_000_000;
                if spent < m.cycle_ms || spent == 0 {
                    continue;
                }
                let dir = ["read", "write"][d];
                if m.bytes[d] > 0 {
                    let got = (self.done_bytes[d] - m.last_bytes[d]) * 1000 / spent;
                    if got < m.bytes[d] {
                        self.error = Some(format!(
                            "job '{}': {dir} rate_min={}B/s not met, got {got}B/s",
                            self.job, m.bytes[d]
                        ));
                        return true;
                    }
                } else {
                    let got = (self.done_ios[d] - m.last_ios[d]) * 1000 / spent;
                    if got < m.iops[d] {
                        self.error = Some(format!(
                            "job '{}': {dir} rate_iops_min={} not met, got {got} IOPS",
                            self.job, m.iops[d]
                        ));
                        return true;
                    }
                }
            }
            (m.last_bytes[d], m.last_ios[d], m.last_time[d]) =
                (self.done_bytes[d], self.done_ios[d], now);
        }
        false
    }

    /// A think time is due now (fio's `handle_thinktime` test); the loop
    /// lets the I/Os in flight complete first, then calls [`Pace::think`].
    /// The count and time it saw are what the next one is counted from,
    /// as fio (not those after the I/Os in flight completed).
    #[inline]
    pub fn think_due(&mut self) -> bool {
        if self.think_us == 0 {
            return false;
        }
        let mut stall = false;
        if self.iotime_us > 0 {
            self.seen_at = now_ns();
            if (self.seen_at - self.last_think) / 1000 >= self.iotime_us + self.think_us {
                stall = true;
            } else if !self.blocks_set {
                return false;
            }
        }
        self.seen_blocks = self.blocks();
        stall || self.seen_blocks >= self.last_think_blocks + self.think_blocks
    }

    fn blocks(&self) -> u64 {
        if self.think_issue {
            self.issued
        } else {
            self.done_ios[0] + self.done_ios[1]
        }
    }

    /// Sets `thinktime` from now on (fio's `cpuio` changes it as it goes).
    pub fn set_think_us(&mut self, us: u64) {
        self.think_us = us;
        self.spin_us = self.spin_us.min(us);
    }

    /// Thinks: spins `thinktime_spin`, sleeps the rest of `thinktime`;
    /// with `rate_ignore_thinktime` the rate does not catch up on it.
    pub fn think(&mut self, write: bool, stop: &StopFlag) -> Step {
        let now = now_ns();
        let spin_end = now + self.spin_us * 1000;
        while now_ns() < spin_end {
            std::hint::spin_loop();
        }
        let step = sleep_until(now + self.think_us * 1000, stop);
        let total = (now_ns() - now) / 1000;
        let d = write as usize;
        let bps = self.bps[d];
        if total > 0 && bps > 0 && self.ignore_think {
            let missed = bps * total / 1_000_000;
            let bs = self.min_bs[d];
            let per_op = bs * 1_000_000 / bps;
            let over = if per_op <= total { bs } else { 0 };
            self.issue_bytes[d] = self.issue_bytes[d].wrapping_add(missed.wrapping_sub(over));
            self.last_usec[d] += total;
        }
        self.last_think_blocks = self.seen_blocks;
        if self.iotime_us > 0 {
            self.last_think = self.seen_at;
        }
        step
    }
}

/// Sleeps until `t` (ns of [`now_ns`]) in slices, watching `stop`.
fn sleep_until(t: u64, stop: &StopFlag) -> Step {
    loop {
        if stop.is_set() {
            return Step::Stopped;
        }
        let now = now_ns();
        if now >= t {
            return Step::On;
        }
        std::thread::sleep(Duration::from_nanos((t - now).min(SLEEP_SLICE_NS)));
    }
}
