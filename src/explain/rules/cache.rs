//! The CPU's part: copies from the page cache, the cost of each call,
//! threads past the CPUs.

use super::rule::{Rule, io_share};
use crate::explain::ceilings::Ceilings;
use crate::explain::evidence::Evidence;
use crate::explain::finding::{Finding, fig, mib, pct, us};

pub(super) struct CpuSaturation;
impl Rule for CpuSaturation {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        if e.threads <= e.cpus {
            return None;
        }
        let busy = e.cpus_busy();
        let per_thread = busy / f64::from(e.threads);
        // Threads that never wait for a device, a rate or a think time
        // wait for a CPU when they are not on one.
        let cpu_bound = cached(e)
            && e.rate_iops.is_none()
            && e.rate_bw.is_none()
            && e.thinktime_us.is_none()
            && e.fsyncs == 0;
        if !cpu_bound && busy < 0.75 * f64::from(e.cpus) {
            return None;
        }
        let text = format!(
            "CPU saturation: {} threads on {} CPUs, each on a CPU {}% of the time ({:.2} CPUs \
             busy: {} s user, {} s system); past the CPUs, more threads add no throughput \
             ({} IOPS)",
            e.threads,
            e.cpus,
            pct(per_thread.min(1.0)),
            busy,
            us(e.cpu_user_s),
            us(e.cpu_sys_s),
            fig(e.iops)
        );
        Some(
            Finding::new("cpu-saturation", "CPU saturation", 1.3, text)
                .with("threads", f64::from(e.threads))
                .with("cpus", f64::from(e.cpus))
                .with("cpus_busy", busy),
        )
    }
}

pub(super) struct CpuBound;
impl Rule for CpuBound {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        // With per-call latencies the finer rules apply.
        if e.lat_mean_us > 0.0 || e.runtime_s <= 0.0 {
            return None;
        }
        let share = (e.cpus_busy() / f64::from(e.threads.max(1))).min(1.0);
        if share < 0.5 {
            return None;
        }
        let text = format!(
            "CPU: the program was on a CPU {}% of its {} s ({} s user, {} s system), {} read \
             and {} write calls, {} device reads",
            pct(share),
            us(e.runtime_s),
            us(e.cpu_user_s),
            us(e.cpu_sys_s),
            e.reads,
            e.writes,
            e.dev_reads
        );
        Some(Finding::new("cpu-bound", "CPU", share, text).with("share", share))
    }
}

/// True when the reads came from the page cache: the devices read under
/// 1% of the bytes read (bytes, not requests: readahead reads large), or
/// what they read was another process's; and none of them direct.
pub(super) fn cached(e: &Evidence) -> bool {
    !e.direct
        && e.reads > 0
        && (e.device_reads_foreign() || (e.dev_read_bytes as f64) < 0.01 * e.read_bytes as f64)
}

/// Copying an I/O's bytes at the page cache's bandwidth, µs (the
/// calibrated bandwidth, else a conservative 4 GiB/s).
fn copy_us(e: &Evidence, c: Option<&Ceilings>) -> f64 {
    let bw = c.map_or(0.0, |c| c.copy_bw);
    let bw = if bw > 0.0 {
        bw
    } else {
        4.0 * 1024.0 * 1024.0 * 1024.0
    };
    e.io_size / bw * 1e6
}

pub(super) struct PageCacheCopy;
impl Rule for PageCacheCopy {
    fn judge(&self, e: &Evidence, c: Option<&Ceilings>, _: bool) -> Option<Finding> {
        if !cached(e) || copy_us(e, c) < 0.5 * e.lat_mean_us {
            return None;
        }
        let mut text = format!(
            "page-cache copy: {} reads and {} device reads, {} KiB each in {} µs: {} MiB/s \
             copied, the CPUs {}% in the kernel",
            e.reads,
            e.dev_reads,
            fig(e.io_size / 1024.0),
            us(e.lat_mean_us),
            mib(e.bw),
            pct(e.cpu_sys_s / e.thread_s())
        );
        if let Some(c) = c.filter(|c| c.copy_bw > 0.0) {
            let per_thread = e.bw / f64::from(e.threads.max(1));
            text.push_str(&format!(
                "; {} MiB/s per thread = {}% of this machine's page-cache copy bandwidth ({} MiB/s)",
                mib(per_thread),
                pct(per_thread / c.copy_bw),
                mib(c.copy_bw)
            ));
        }
        Some(
            Finding::new("page-cache-copy", "page-cache copy", io_share(e), text)
                .with("bw_bytes_per_s", e.bw)
                .with("device_reads", e.dev_reads as f64),
        )
    }
}

pub(super) struct PerCall;
impl Rule for PerCall {
    fn judge(&self, e: &Evidence, c: Option<&Ceilings>, _: bool) -> Option<Finding> {
        if !cached(e) || copy_us(e, c) >= 0.5 * e.lat_mean_us {
            return None;
        }
        let mut text = format!(
            "per-call overhead: {} B reads from the page cache ({} device reads) take {} µs each, \
             {} IOPS: the cost of each call, not of its bytes ({} µs to copy them)",
            fig(e.io_size),
            e.dev_reads,
            us(e.lat_mean_us),
            fig(e.iops),
            us(copy_us(e, c))
        );
        if let Some(c) = c
            && let Some(call) = c.per_call_us(&e.engine)
        {
            text.push_str(&format!(
                "; a cached 4 KiB read through {} costs {} µs on this machine ({:.2}×), iolab's own \
                 part (null engine) {} µs",
                e.engine,
                us(call),
                e.lat_mean_us / call,
                us(c.null_us)
            ));
        }
        Some(
            Finding::new("per-call", "per-call overhead", io_share(e), text)
                .with("latency_us", e.lat_mean_us)
                .with("io_bytes", e.io_size),
        )
    }
}
