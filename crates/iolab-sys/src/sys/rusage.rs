//! CPU use of the calling thread (`getrusage(RUSAGE_THREAD)`) or the
//! process (`RUSAGE_SELF`): the one place that calls getrusage.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `getrusage(who)`.
fn getrusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: getrusage writes into the zeroed struct we pass; `who` is one
    // of the RUSAGE_* constants.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut ru);
        ru
    }
}

fn micros(t: libc::timeval) -> u64 {
    t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64
}

/// The whole process's counters by name: CPU µs, faults, context
/// switches, blocks (for `iolab.counters.rusage`).
pub fn process_counters() -> BTreeMap<String, u64> {
    counters_of(&getrusage(libc::RUSAGE_SELF))
}

/// The counters of `ru` by name (as [`process_counters`]).
pub fn counters_of(ru: &libc::rusage) -> BTreeMap<String, u64> {
    BTreeMap::from([
        ("user_us".to_string(), micros(ru.ru_utime)),
        ("sys_us".to_string(), micros(ru.ru_stime)),
        ("majflt".to_string(), ru.ru_majflt as u64),
        ("minflt".to_string(), ru.ru_minflt as u64),
        ("nvcsw".to_string(), ru.ru_nvcsw as u64),
        ("nivcsw".to_string(), ru.ru_nivcsw as u64),
        ("inblock".to_string(), ru.ru_inblock as u64),
        ("oublock".to_string(), ru.ru_oublock as u64),
    ])
}

/// CPU figures of one thread over an interval.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CpuUsage {
    /// User time in microseconds.
    pub user_us: u64,
    /// System time in microseconds.
    pub sys_us: u64,
    /// Voluntary plus involuntary context switches.
    pub ctx: u64,
    /// Major page faults.
    pub majf: u64,
    /// Minor page faults.
    pub minf: u64,
}

impl CpuUsage {
    /// The calling thread's totals so far.
    pub fn thread_now() -> CpuUsage {
        Self::of(libc::RUSAGE_THREAD)
    }

    /// The whole process's totals so far (all threads, finished ones too).
    pub fn process_now() -> CpuUsage {
        Self::of(libc::RUSAGE_SELF)
    }

    fn of(who: libc::c_int) -> CpuUsage {
        let ru = getrusage(who);
        CpuUsage {
            user_us: micros(ru.ru_utime),
            sys_us: micros(ru.ru_stime),
            ctx: (ru.ru_nvcsw + ru.ru_nivcsw) as u64,
            majf: ru.ru_majflt as u64,
            minf: ru.ru_minflt as u64,
        }
    }

    /// `self - earlier`.
    pub fn since(&self, earlier: &CpuUsage) -> CpuUsage {
        CpuUsage {
            user_us: self.user_us.saturating_sub(earlier.user_us),
            sys_us: self.sys_us.saturating_sub(earlier.sys_us),
            ctx: self.ctx.saturating_sub(earlier.ctx),
            majf: self.majf.saturating_sub(earlier.majf),
            minf: self.minf.saturating_sub(earlier.minf),
        }
    }

    /// Field-wise sum.
    pub fn add(&mut self, o: &CpuUsage) {
        self.user_us += o.user_us;
        self.sys_us += o.sys_us;
        self.ctx += o.ctx;
        self.majf += o.majf;
        self.minf += o.minf;
    }
}
