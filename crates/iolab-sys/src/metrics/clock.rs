//! The monotonic clock every op is timed with: `clock_gettime(CLOCK_MONOTONIC)`
//! (vDSO, no syscall) as plain nanoseconds, without `Instant`'s checked
//! arithmetic in the hot loop.

/// Nanoseconds on the monotonic clock.
#[inline(always)]
pub fn now_ns() -> u64 {
    let mut ts = std::mem::MaybeUninit::<libc::timespec>::uninit();
    // SAFETY: clock_gettime writes one whole timespec into `ts`; with
    // CLOCK_MONOTONIC it cannot fail.
    let ts = unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, ts.as_mut_ptr());
        ts.assume_init()
    };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
