//! Steady-state detection as fio's steadystate.c: once a second the
//! launcher samples each watched clone's IOPS and bandwidth (summed over
//! the reporting group with `group_reporting`), keeps the last `ss_dur`
//! samples in a ring, and ends the clone (or the group) once the largest
//! deviation from the window's mean, or the least-squares slope, falls
//! below the limit. What it kept is reported as fio's JSON `steadystate`.

use super::control::CloneCtl;
use crate::job::JobSpec;
use crate::job::groups::lifecycle::Steady;
use serde::{Deserialize, Serialize};

/// The steady-state record of one clone (fio's `steadystate_data`), as
/// reported.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyOut {
    /// The criterion asked for.
    pub spec: Steady,
    /// The criterion held: the clone (or its group) was ended.
    pub attained: bool,
    /// The window had filled.
    pub buffer_full: bool,
    /// Ring index of the oldest sample.
    pub head: usize,
    /// Ring index of the newest.
    pub tail: usize,
    /// IOPS samples (ring).
    pub iops: Vec<u64>,
    /// Bandwidth samples in bytes/s (ring).
    pub bw: Vec<u64>,
    /// The least-squares slope of the window.
    pub slope: f64,
    /// The largest deviation from the window's mean.
    pub deviation: f64,
    /// What was compared with the limit.
    pub criterion: f64,
    sum_y: u64,
    sum_xy: u64,
    oldest_y: u64,
}

impl SteadyOut {
    fn new(spec: &Steady) -> SteadyOut {
        let dur = spec.dur_s as usize;
        SteadyOut {
            spec: spec.clone(),
            iops: vec![0; dur],
            bw: vec![0; dur],
            ..SteadyOut::default()
        }
    }

    /// The samples oldest first, as fio's JSON lists them: (bw, iops).
    pub fn in_order(&self) -> (Vec<u64>, Vec<u64>) {
        let dur = self.iops.len();
        if dur == 0 {
            return (Vec::new(), Vec::new());
        }
        let j = if self.attained || !self.buffer_full {
            self.head
        } else if self.head == 0 {
            dur - 1
        } else {
            self.head - 1
        };
        (0..dur)
            .map(|l| (self.bw[(j + l) % dur], self.iops[(j + l) % dur]))
            .unzip()
    }

    /// Mean of the bandwidth samples over the whole window (fio's integer mean).
    pub fn bw_mean(&self) -> u64 {
        self.bw.iter().sum::<u64>() / (self.bw.len().max(1) as u64)
    }

    /// Mean of the IOPS samples over the whole window.
    pub fn iops_mean(&self) -> u64 {
        self.iops.iter().sum::<u64>() / (self.iops.len().max(1) as u64)
    }

    fn y(&self, i: usize) -> u64 {
        if self.spec.bw {
            self.bw[i]
        } else {
            self.iops[i]
        }
    }

    /// Adds a sample; true when the criterion holds (fio's
    /// `steadystate_slope` and `steadystate_deviation`).
    fn add(&mut self, iops: u64, bw: u64) -> bool {
        let dur = self.iops.len();
        let n = dur as u64;
        self.bw[self.tail] = bw;
        self.iops[self.tail] = iops;
        let new_val = self.y(self.tail);
        if self.buffer_full || (self.tail as u32).wrapping_sub(self.head as u32) as u64 == n - 1 {
            if !self.buffer_full {
                self.sum_y = (0..dur).map(|i| self.y(i)).sum();
                if self.spec.slope {
                    for i in 0..dur {
                        let y = self.y((self.head + i) % dur);
                        self.sum_xy = self.sum_xy.wrapping_add(i as u64 * y);
                    }
                }
                self.buffer_full = true;
            } else {
                self.sum_y = self.sum_y.wrapping_sub(self.oldest_y).wrapping_add(new_val);
                if self.spec.slope {
                    self.sum_xy = (self.sum_xy.wrapping_sub(self.sum_y)).wrapping_add(n * new_val);
                }
            }
            self.oldest_y = self.y(self.head);
            let mean_int = (self.sum_y / n) as f64;
            let held = if self.spec.slope {
                let sum_x = (n * (n - 1) / 2) as f64;
                let sum_x_sq = ((n - 1) * n * (2 * n - 1) / 6) as f64;
                self.slope = (self.sum_xy as f64 - sum_x * self.sum_y as f64 / n as f64)
                    / (sum_x_sq - sum_x * sum_x / n as f64);
                self.criterion = if self.spec.pct {
                    100.0 * self.slope / mean_int
                } else {
                    self.slope
                };
                self.criterion.is_nan() || self.criterion.abs() < self.spec.limit
            } else {
                let mean = self.sum_y as f64 / n as f64;
                self.deviation = (0..dur)
                    .map(|i| (self.y(i) as f64 - mean).abs())
                    .fold(0.0, f64::max);
                self.criterion = if self.spec.pct {
                    100.0 * self.deviation / mean
                } else {
                    self.deviation
                };
                self.criterion.is_nan() || self.criterion < self.spec.limit
            };
            // fio is built with -ffast-math: a criterion that is not a
            // number (a one-second slope window) holds there too.
            if held {
                return true;
            }
        }
        self.tail = (self.tail + 1) % dur;
        if self.tail <= self.head {
            self.head = (self.head + 1) % dur;
        }
        false
    }
}

/// One clone as the checker sees it.
struct Watched {
    job: usize,
    group: u32,
    /// It keeps the samples (fio's `FIO_SS_DATA`): every clone, or the
    /// last of its reporting group with `group_reporting`.
    holder: bool,
    ramp_over: bool,
    prev: super::control::Progress,
    out: Option<SteadyOut>,
}

/// The steady-state checks of one repetition.
pub struct Checker {
    clones: Vec<Watched>,
}

impl Checker {
    /// The checker of `clones` (job index of each, in start order) with
    /// their reporting groups `groups` (per job); `None` when no job has
    /// a steady-state window.
    pub fn new(jobs: &[JobSpec], groups: &[u32], clones: &[usize]) -> Option<Checker> {
        if !clones.iter().any(|&j| jobs[j].lifecycle.steady.dur_s > 0) {
            return None;
        }
        let on = |j: usize| jobs[j].lifecycle.steady.dur_s > 0;
        let mut w: Vec<Watched> = clones
            .iter()
            .map(|&j| Watched {
                job: j,
                group: groups[j],
                holder: on(j) && !jobs[j].group_reporting,
                ramp_over: jobs[j].lifecycle.steady.ramp_us == 0,
                prev: Default::default(),
                out: on(j).then(|| SteadyOut::new(&jobs[j].lifecycle.steady)),
            })
            .collect();
        // fio's steadystate_setup: the last clone of each group holds the data.
        for i in 0..w.len() {
            let last_of_group = (w[i + 1..].iter()).all(|o| o.group != w[i].group || !on(o.job));
            if on(w[i].job) && jobs[w[i].job].group_reporting && last_of_group {
                w[i].holder = true;
            }
        }
        Some(Checker { clones: w })
    }

    /// A clone started at `epoch_ns` (its samples count from there).
    pub fn started(&mut self, i: usize, epoch_ns: u64) {
        self.clones[i].prev = super::control::Progress {
            t_ns: epoch_ns,
            ..Default::default()
        };
    }

    /// One check at `now` (fio's `steadystate_check`): `running[i]` says
    /// which clones run, `epochs[i]` when they started; the clones whose
    /// criterion held get an end request.
    pub fn check(
        &mut self,
        jobs: &[JobSpec],
        ctls: &[&CloneCtl],
        running: &[bool],
        epochs: &[u64],
        now: u64,
    ) {
        let (mut prev_group, mut group_bw, mut group_iops, mut group_ramp_over) =
            (None, 0u64, 0u64, 0u32);
        for i in 0..self.clones.len() {
            let c = &mut self.clones[i];
            let job = &jobs[c.job];
            let Some(out) = &c.out else { continue };
            if !running[i] || out.attained {
                continue;
            }
            if !job.group_reporting || prev_group != Some(c.group) {
                (group_bw, group_iops, group_ramp_over) = (0, 0, 0);
            }
            prev_group = Some(c.group);
            let ramp = job.lifecycle.steady.ramp_us;
            if !c.ramp_over && now.saturating_sub(epochs[i]) >= (ramp + 1_000_000) * 1000 {
                c.ramp_over = true;
            }
            let p = ctls[i].progress();
            let dt = p.t_ns.saturating_sub(c.prev.t_ns);
            if c.ramp_over {
                let rate = |d: u64| {
                    (d as u128 * 1_000_000_000)
                        .checked_div(dt as u128)
                        .unwrap_or(0) as u64
                };
                group_bw += rate(p.bytes - c.prev.bytes);
                group_iops += rate(p.ios - c.prev.ios);
                group_ramp_over += 1;
            }
            if p.t_ns > c.prev.t_ns {
                c.prev = p;
            }
            if !c.holder || group_ramp_over == 0 {
                continue;
            }
            let held = c.out.as_mut().is_some_and(|o| o.add(group_iops, group_bw));
            if !held {
                continue;
            }
            let group = c.group;
            let together = job.group_reporting;
            for (k, o) in self.clones.iter_mut().enumerate() {
                if (together && o.group == group) || k == i {
                    if let Some(out) = &mut o.out {
                        out.attained = true;
                    }
                    ctls[k].end();
                }
            }
        }
    }

    /// What each clone kept (those of jobs without a window: `None`).
    pub fn finish(self) -> Vec<Option<SteadyOut>> {
        self.clones.into_iter().map(|c| c.out).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(bw: bool, slope: bool, pct: bool, limit: f64, dur: u64) -> SteadyOut {
        SteadyOut::new(&Steady {
            bw,
            slope,
            pct,
            limit,
            dur_s: dur,
            ramp_us: 0,
        })
    }

    #[test]
    fn slope_is_the_least_squares_slope_of_the_window_in_order() {
        let mut s = window(false, true, false, 20.0, 4);
        // 500, 100, 110, 120: slope -113, steeper than the limit of 20.
        for y in [500, 100, 110, 120] {
            assert!(!s.add(y, 0));
        }
        assert!((s.slope - -113.0).abs() < 1e-9, "{}", s.slope);
        // The ring wraps: 100, 110, 120, 130 has slope 10, under the limit.
        assert!(s.add(130, 0));
        assert!((s.slope - 10.0).abs() < 1e-9, "{}", s.slope);
        // The checker marks it attained; the JSON lists the window oldest first.
        s.attained = true;
        let (_, iops) = s.in_order();
        assert_eq!(iops, [100, 110, 120, 130]);
    }

    #[test]
    fn deviation_is_the_largest_distance_from_the_mean_in_percent() {
        let mut s = window(true, false, true, 10.0, 3);
        assert!(!s.add(0, 100) && !s.add(0, 100));
        // 100, 100, 130: mean 110, largest deviation 20 (18.2%): not steady.
        assert!(!s.add(0, 130));
        assert!((s.criterion - 2000.0 / 110.0).abs() < 1e-9);
        // 100, 130, 120: mean 116.67, deviation 16.67 (14.3%); then 130, 120, 125.
        assert!(!s.add(0, 120));
        assert!(s.add(0, 125));
        assert!(s.criterion < 10.0);
        assert_eq!(s.bw_mean(), 125);
    }

    #[test]
    fn a_one_sample_slope_is_not_a_number_and_holds_as_in_fio() {
        let mut s = window(true, true, true, 1.0, 1);
        assert!(s.add(7, 4096));
        assert!(s.criterion.is_nan());
    }
}
