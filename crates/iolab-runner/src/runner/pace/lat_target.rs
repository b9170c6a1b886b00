//! fio's queue-depth search for `latency_target` (`io_u.c`'s
//! `lat_target_*`): start at depth 1, double while enough I/Os of a window
//! meet the target, bisect down on a miss, then one final window at the
//! depth found. Driven by the clone's `Pace`.

use super::step::Step;

/// fio's latency-target search (`latency_qd`, `latency_qd_low`, ...).
pub(super) struct LatTarget {
    pub(super) target_ns: u64,
    pub(super) window_ns: u64,
    pub(super) percentile: f64,
    pub(super) run: bool,
    pub(super) max_depth: u32,
    pub(super) qd: u32,
    pub(super) high: u32,
    pub(super) low: u32,
    pub(super) stable: u32,
    pub(super) failed: u64,
    pub(super) cycle_start: u64,
    pub(super) cycle_ios: u64,
    pub(super) end_run: bool,
}

impl LatTarget {
    pub(super) fn init(&mut self, now: u64, ios: u64) {
        self.end_run = false;
        (self.qd, self.high, self.low) = (1, self.max_depth, 1);
        self.new_cycle(now, ios);
    }

    pub(super) fn new_cycle(&mut self, now: u64, ios: u64) {
        (self.cycle_start, self.cycle_ios, self.failed) = (now, ios, 0);
    }

    /// fio's `__lat_target_failed`: false at depth 1 (fio gives up there).
    pub(super) fn failed(&mut self, now: u64, ios: u64) -> bool {
        if self.qd == 1 {
            return false;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        self.new_cycle(now, ios);
        true
    }

    /// fio's `lat_target_success`.
    pub(super) fn success(&mut self, now: u64, ios: u64) -> Step {
        let qd = self.qd;
        self.low = qd;
        if qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.qd = if self.high != self.max_depth {
            (qd + self.high) / 2
        } else {
            qd * 2
        }
        .min(self.max_depth);
        let mut step = Step::On;
        if !self.run && self.qd == qd {
            if self.end_run {
                return Step::End;
            }
            self.end_run = true;
            step = Step::Reset;
        }
        self.new_cycle(now, ios);
        step
    }
}
