//! The rules `explain` judges a run by: each looks at the evidence (and
//! the machine's ceilings, when measured) and, when its limit is at work,
//! returns a [`Finding`]: how much of the run's time it accounts for and
//! the claim with its figures. One trait, one registry ([`RULES`]); a new
//! rule is one type here and one line there. docs/explain.md lists each
//! rule's evidence and thresholds.

mod cache;
mod device;
mod job;
mod rule;

use crate::registry::{Entry, entry};
use cache::{CpuBound, CpuSaturation, PageCacheCopy, PerCall};
use device::{DeviceBandwidth, DeviceLatency, DeviceWaits, HitsMisses, Prefetch, Readahead};
use job::{Errors, Fsync, RateLimit, ThinkTime};
pub use rule::Rule;

/// Every rule, in the order ties are broken.
pub static RULES: &[Entry<dyn Rule>] = &[
    entry("errors", &[], "", "the run failed", &Errors),
    entry(
        "rate-limit",
        &[],
        "",
        "the job's rate or rate_iops caps it",
        &RateLimit,
    ),
    entry(
        "cpu-saturation",
        &[],
        "",
        "more threads than CPUs, the CPUs busy",
        &CpuSaturation,
    ),
    entry(
        "cpu-bound",
        &[],
        "",
        "a program without per-call timing, on a CPU most of the time",
        &CpuBound,
    ),
    entry(
        "think-time",
        &[],
        "",
        "the job's thinktime between I/Os",
        &ThinkTime,
    ),
    entry(
        "fsync",
        &[],
        "",
        "waits in fsync/fdatasync (write-back)",
        &Fsync,
    ),
    entry(
        "device-bandwidth",
        &[],
        "",
        "the device moves no more bytes a second",
        &DeviceBandwidth,
    ),
    entry(
        "cache-hits-misses",
        &[],
        "",
        "a bimodal latency: page-cache hits and device misses",
        &HitsMisses,
    ),
    entry(
        "readahead",
        &[],
        "",
        "device requests much larger than the I/Os: readahead",
        &Readahead,
    ),
    entry(
        "prefetch",
        &[],
        "",
        "the device waits moved to fadvise (prefetch)",
        &Prefetch,
    ),
    entry(
        "device-latency",
        &[],
        "",
        "each I/O waits for the device; IOPS = depth / latency",
        &DeviceLatency,
    ),
    entry(
        "device-waits",
        &[],
        "",
        "the operations wait for fewer, slower device reads",
        &DeviceWaits,
    ),
    entry(
        "page-cache-copy",
        &[],
        "",
        "reads from the page cache, bound by copying bytes",
        &PageCacheCopy,
    ),
    entry(
        "per-call",
        &[],
        "",
        "small cached I/Os, bound by the cost of each call",
        &PerCall,
    ),
];
