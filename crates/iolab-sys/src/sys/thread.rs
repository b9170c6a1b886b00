//! The calling thread's scheduling: its nice value, its I/O priority and
//! the CPUs it may run on (fio's `nice`, `prio`/`prioclass`,
//! `cpus_allowed`), set by each clone's thread on itself.

use std::io;

/// What a thread sets on itself before it starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sched {
    /// Nice value.
    pub nice: Option<i32>,
    /// I/O priority (class, level).
    pub ioprio: Option<(u32, u32)>,
    /// CPUs it may run on.
    pub cpus: Option<Vec<usize>>,
}

impl Sched {
    /// Sets each of them on the calling thread; the error says which.
    pub fn apply(&self) -> Result<(), (&'static str, io::Error)> {
        if let Some(n) = self.nice {
            set_nice(n).map_err(|e| ("its nice value (nice)", e))?;
        }
        if let Some((class, level)) = self.ioprio {
            set_ioprio(class, level).map_err(|e| ("its I/O priority (prio, prioclass)", e))?;
        }
        if let Some(cpus) = &self.cpus {
            set_affinity(cpus).map_err(|e| ("its CPUs (cpus_allowed, cpumask)", e))?;
        }
        Ok(())
    }
}

/// Sets the calling thread's nice value (Linux: per thread).
pub fn set_nice(nice: i32) -> io::Result<()> {
    // SAFETY: gettid has no arguments and cannot fail.
    let tid = unsafe { libc::gettid() };
    // SAFETY: a plain system call on our own thread; no memory is passed.
    match unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Sets the calling thread's I/O priority: `class` 1 (realtime), 2 (best
/// effort), 3 (idle), `level` 0-7 (see ioprio_set(2)).
pub fn set_ioprio(class: u32, level: u32) -> io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_int = 1;
    let value = (class << 13) | level;
    // SAFETY: ioprio_set with who=0 (the calling thread); no memory passed.
    let rc = unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, value) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Lets the calling thread run only on `cpus`.
pub fn set_affinity(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: CPU_SET checks nothing but writes inside `set` for c
        // below CPU_SETSIZE, which the caller's parser guarantees.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Most CPUs a CPU list may name (the kernel's `CPU_SETSIZE`).
pub const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

/// Asks the kernel to wake this thread's timed sleeps on time: a timer
/// slack of 1 ns instead of the default 50 us (prctl PR_SET_TIMERSLACK).
pub fn exact_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer and touches only the
    // calling thread's slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}
