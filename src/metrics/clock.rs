//! The monotonic clock every op is timed with: `clock_gettime(CLOCK_MONOTONIC)`
//! (vDSO, no syscall) as plain nanoseconds, without `Instant`'s checked
//! arithmetic in the hot loop.

/// Nanoseconds on the monotonic clock.
#[inline(always)]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
