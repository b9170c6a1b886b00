//! CPU use of the calling thread (`getrusage(RUSAGE_THREAD)`) or the
//! process (`RUSAGE_SELF`).

use serde::{Deserialize, Serialize};

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
        // SAFETY: getrusage writes into the zeroed struct we pass.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            libc::getrusage(who, &mut ru);
            ru
        };
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        CpuUsage {
            user_us: us(ru.ru_utime),
            sys_us: us(ru.ru_stime),
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
