//! The rules `explain` judges a run by: each looks at the evidence (and
//! the machine's ceilings, when measured) and, when its limit is at work,
//! returns a [`Finding`]: how much of the run's time it accounts for and
//! the claim with its figures. One trait, one registry ([`RULES`]); a new
//! rule is one type here and one line there. docs/explain.md lists each
//! rule's evidence and thresholds.

use super::ceilings::Ceilings;
use super::evidence::Evidence;
use super::finding::{Finding, fig, mib, pct, us};
use crate::registry::{Entry, entry};

/// One rule.
pub trait Rule: Sync {
    /// The finding, when this rule's limit is at work in the run.
    fn judge(&self, e: &Evidence, c: Option<&Ceilings>, device: bool) -> Option<Finding>;
}

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

/// Share of the threads' time spent waiting for I/O (0-1): the depth the
/// queue reached over the depth it could have (threads × iodepth).
fn io_share(e: &Evidence) -> f64 {
    let cap = f64::from(e.threads.max(1)) * f64::from(e.iodepth.max(1));
    (e.depth_achieved / cap).min(1.0)
}

/// Share of the reads and writes that reached the device: its reads for
/// the run's reads, its writes for the run's writes (a read-only run's
/// device writes are someone's write-back, not its I/O).
fn device_share(e: &Evidence) -> f64 {
    let ops = (e.reads + e.writes) as f64;
    let dev = e.dev_reads.min(e.reads) + e.dev_writes.min(e.writes);
    match ops > 0.0 {
        true => (dev as f64 / ops).min(1.0),
        false => 0.0,
    }
}

struct Errors;
impl Rule for Errors {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        let first = e.errors.first()?;
        Some(
            Finding::new("errors", "errors", 2.0, format!("the run failed: {first}"))
                .with("errors", e.errors.len() as f64),
        )
    }
}

struct RateLimit;
impl Rule for RateLimit {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        let (got, set, what, show): (f64, f64, &str, fn(f64) -> String) =
            match (e.rate_iops, e.rate_bw) {
                (Some(r), _) => (e.iops, r, "rate_iops", fig),
                (None, Some(r)) => (e.bw, r, "rate", |b| format!("{} MiB/s", mib(b))),
                _ => return None,
            };
        let ratio = got / set;
        let text = format!(
            "the job's {what} caps it: {} = {}% of the {} it sets",
            show(got),
            pct(ratio),
            show(set)
        );
        // Well under its rate: the rate is not what holds it back.
        let weight = if ratio >= 0.9 { 1.5 } else { 0.0 };
        Some(
            Finding::new("rate-limit", "the job's rate limit", weight, text)
                .with("achieved", got)
                .with("set", set),
        )
    }
}

struct CpuSaturation;
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

struct CpuBound;
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

struct ThinkTime;
impl Rule for ThinkTime {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        let t = e.thinktime_us?;
        if e.iops <= 0.0 {
            return None;
        }
        // Each thread's cycle: one I/O and the time until the next.
        let cycle = f64::from(e.threads.max(1)) * 1e6 / e.iops;
        let between = (cycle - e.lat_mean_us).max(0.0);
        let share = between / cycle;
        let text = format!(
            "think time: the job thinks {} µs per I/O; each thread's cycle took {} µs, {} µs of \
             I/O and {} µs between I/Os ({}% of the time): {} IOPS",
            fig(t),
            us(cycle),
            us(e.lat_mean_us),
            us(between),
            pct(share),
            fig(e.iops)
        );
        Some(
            Finding::new("think-time", "think time", share, text)
                .with("thinktime_us", t)
                .with("between_us", between)
                .with("share", share),
        )
    }
}

struct Fsync;
impl Rule for Fsync {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        if e.fsyncs == 0 {
            return None;
        }
        let share = (e.fsync_s / e.thread_s()).min(1.0);
        let each = e.fsync_s * 1e6 / e.fsyncs as f64;
        let text = format!(
            "fsync waits: {} fsyncs of {} µs each (write-back to the device: {} device writes) \
             took {}% of the time; the writes themselves {} µs each",
            e.fsyncs,
            us(each),
            e.dev_writes,
            pct(share),
            us(e.lat_mean_us)
        );
        Some(
            Finding::new("fsync", "fsync waits", share, text)
                .with("fsyncs", e.fsyncs as f64)
                .with("fsync_us", each)
                .with("share", share),
        )
    }
}

/// The injected disk's `--bw` cap, bytes/s.
fn injected_bw(e: &Evidence) -> Option<f64> {
    let rules = e.injected.split_once(": ").map_or("", |x| x.1);
    let mut words = rules.split_whitespace();
    while let Some(w) = words.next() {
        if w == "--bw" {
            let v = words.next()?;
            if let Ok(r) = crate::disk::rules::parse("bw", v)
                && let crate::disk::rules::Effect::Bandwidth(n) = r.effect
            {
                return Some(n as f64);
            }
        }
    }
    None
}

/// "; each 4 KiB I/O took 90 µs", when the I/Os were timed.
fn each_took(e: &Evidence) -> String {
    match e.lat_mean_us > 0.0 {
        true => format!(
            "; each {} KiB I/O took {} µs",
            fig(e.io_size / 1024.0),
            us(e.lat_mean_us)
        ),
        false => String::new(),
    }
}

struct DeviceBandwidth;
impl Rule for DeviceBandwidth {
    fn judge(&self, e: &Evidence, c: Option<&Ceilings>, device: bool) -> Option<Finding> {
        let (cap, whose) = match (injected_bw(e), c) {
            (Some(b), _) => (b, "the injected disk's --bw rule".to_string()),
            (None, Some(c)) if device && c.seq_bw > 0.0 => (
                c.seq_bw,
                "this device's calibrated sequential bandwidth".into(),
            ),
            _ => return None,
        };
        let ratio = e.bw / cap;
        // Bytes, not requests: readahead and merging make fewer, larger ones.
        let moved = (e.dev_read_bytes as f64) / (e.read_bytes.max(1) as f64);
        if ratio < 0.8 || (moved < 0.5 && device_share(e) < 0.5) {
            return None;
        }
        let text = format!(
            "device bandwidth: {} MiB/s = {}% of {} ({} MiB/s){}",
            mib(e.bw),
            pct(ratio),
            whose,
            mib(cap),
            each_took(e)
        );
        Some(
            Finding::new("device-bandwidth", "device bandwidth", 1.1, text)
                .with("bw_bytes_per_s", e.bw)
                .with("ceiling_bytes_per_s", cap),
        )
    }
}

struct HitsMisses;
impl Rule for HitsMisses {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        let (a, b) = (e.modes.first()?, e.modes.get(1)?);
        let (fast, slow) = if a.center_us < b.center_us {
            (a, b)
        } else {
            (b, a)
        };
        if fast.share < 0.1 || slow.share < 0.1 || slow.center_us < 8.0 * fast.center_us {
            return None;
        }
        // The slow I/Os are misses only when the device read about as often.
        let slow_ios = slow.share * (e.reads + e.writes) as f64;
        if e.direct || e.dev_reads == 0 || slow_ios > 2.0 * e.dev_reads as f64 + 2.0 {
            return None;
        }
        let slow_time = slow.share * slow.center_us
            / (slow.share * slow.center_us + fast.share * fast.center_us);
        let cached = e
            .cached_before
            .map(|c| format!("; {}% of the file was cached as the run started", pct(c)))
            .unwrap_or_default();
        let text = format!(
            "cache hits and misses: {}% of the I/Os took about {} µs (page-cache hits) and {}% \
             about {} µs (device misses, {} device reads), the misses {}% of the time{cached}",
            pct(fast.share),
            us(fast.center_us),
            pct(slow.share),
            us(slow.center_us),
            e.dev_reads,
            pct(slow_time)
        );
        Some(
            Finding::new(
                "cache-hits-misses",
                "cache hits and misses",
                1.2 * io_share(e),
                text,
            )
            .with("hit_share", fast.share)
            .with("hit_us", fast.center_us)
            .with("miss_share", slow.share)
            .with("miss_us", slow.center_us),
        )
    }
}

struct Readahead;
impl Rule for Readahead {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        let size = e.dev_read_size();
        if e.direct || e.dev_reads == 0 || e.reads == 0 || e.io_size < 1.0 {
            return None;
        }
        if size < 2.0 * e.io_size {
            return None;
        }
        if e.dev_reads as f64 > 0.5 * e.reads as f64 {
            return None;
        }
        let wait = match e.dev_read_wait_us > 0.0 {
            true => format!(", each waiting {} µs", us(e.dev_read_wait_us)),
            false => String::new(),
        };
        let text = format!(
            "readahead: the device read {} KiB per request for {} KiB reads, {} device reads for \
             {} reads (1 per {}){wait}; the other reads found the page cache filled ahead",
            fig(size / 1024.0),
            fig(e.io_size / 1024.0),
            e.dev_reads,
            e.reads,
            fig(e.reads as f64 / e.dev_reads as f64)
        );
        // As much as the device's waits take of the threads' time.
        let waited = e.dev_reads as f64 * e.dev_read_wait_us / 1e6 / e.thread_s();
        Some(
            Finding::new(
                "readahead",
                "readahead",
                1.05 * io_share(e) * waited.min(1.0),
                text,
            )
            .with("device_read_kib", size / 1024.0)
            .with("io_kib", e.io_size / 1024.0),
        )
    }
}

struct Prefetch;
impl Rule for Prefetch {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        if e.advises == 0 {
            return None;
        }
        let share = (e.advise_s / e.thread_s()).min(1.0);
        let text = format!(
            "prefetch: {} fadvise(WILLNEED) calls took {} µs at the median, {}% of the time, \
             while the reads waited {} µs at the median: the device latency moved to fadvise",
            e.advises,
            us(e.advise_p50_us),
            pct(share),
            us(e.lat_p50_us)
        );
        Some(
            Finding::new("prefetch", "prefetch (fadvise)", share, text)
                .with("fadvise_p50_us", e.advise_p50_us)
                .with("read_p50_us", e.lat_p50_us),
        )
    }
}

struct DeviceLatency;
impl Rule for DeviceLatency {
    fn judge(&self, e: &Evidence, c: Option<&Ceilings>, device: bool) -> Option<Finding> {
        let dev = device_share(e);
        if dev < 0.5 || e.lat_mean_us <= 0.0 || cached(e) {
            return None;
        }
        // What the device alone allows at the depth reached: depth over
        // its own latency (the injected delay, else its reads' wait).
        let own = e
            .injected_delay_us
            .or((e.dev_read_wait_us > 0.0).then_some(e.dev_read_wait_us))
            .unwrap_or(e.lat_mean_us);
        let little = e.depth_achieved * 1e6 / own;
        let mut text = format!(
            "device latency: {} IOPS at depth {:.1} (iodepth {} × {} threads) with {} µs per I/O \
             (Little's law: depth = IOPS × latency); at that depth the device's own {} µs allow \
             {} IOPS, {}% of it reached",
            fig(e.iops),
            e.depth_achieved,
            e.iodepth,
            e.threads,
            us(e.lat_mean_us),
            us(own),
            fig(little),
            pct(e.iops / little)
        );
        if e.dev_read_wait_us > 0.0 {
            text.push_str(&format!(
                "; the device's reads waited {} µs each",
                us(e.dev_read_wait_us)
            ));
        }
        if let Some(d) = e.injected_delay_us {
            text.push_str(&format!(
                "; the injected disk added {} µs to each operation ({}), {}% of the latency",
                us(d),
                e.injected.split_once(": ").map_or("", |x| x.1),
                pct((d / e.lat_mean_us).min(1.0))
            ));
        }
        if let Some(c) = c.filter(|c| device && c.rand_iops_d1 > 0.0) {
            let per_thread = e.iops / f64::from(e.threads.max(1));
            let (ceiling, at) = if e.depth_achieved < 1.5 {
                (c.rand_iops_d1, "depth-1")
            } else {
                (c.rand_iops_d32, "depth-32")
            };
            text.push_str(&format!(
                "; {} IOPS per thread = {}% of this device's {at} ceiling ({} IOPS, {} µs); depth \
                 32 reaches {} IOPS here",
                fig(per_thread),
                pct(per_thread / ceiling),
                fig(ceiling),
                us(c.rand_lat_d1_us),
                fig(c.rand_iops_d32)
            ));
        }
        Some(
            Finding::new("device-latency", "device latency", io_share(e) * dev, text)
                .with("iops", e.iops)
                .with("depth", e.depth_achieved)
                .with("latency_us", e.lat_mean_us)
                .with("device_latency_us", own)
                .with("little_iops", little)
                .with("injected_delay_us", e.injected_delay_us.unwrap_or(0.0)),
        )
    }
}

struct DeviceWaits;
impl Rule for DeviceWaits {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        let ios = e.dev_reads + e.dev_writes;
        if ios == 0 || e.runtime_s <= 0.0 {
            return None;
        }
        // Busy time, not the waits added up: overlapping requests count once.
        let busy = (e.dev_busy_s / e.runtime_s).min(1.0);
        if busy < 0.2 {
            return None;
        }
        let wait_us =
            e.dev_reads as f64 * e.dev_read_wait_us + e.dev_writes as f64 * e.dev_write_wait_us;
        let text = format!(
            "device waits: the device was busy {}% of the run with {} reads and {} writes of {} \
             µs each on average, for {} operations{}",
            pct(busy),
            e.dev_reads,
            e.dev_writes,
            us(wait_us / ios as f64),
            e.reads + e.writes,
            each_took(e)
        );
        // The fallback when no finer rule names the device's part.
        Some(
            Finding::new("device-waits", "device waits", 0.7 * busy, text)
                .with("device_ios", ios as f64)
                .with("wait_us", wait_us / ios as f64)
                .with("busy", busy),
        )
    }
}

/// True when the reads came from the page cache: the devices read under
/// 1% of the bytes read (bytes, not requests: readahead reads large), and
/// none of them direct.
fn cached(e: &Evidence) -> bool {
    !e.direct && e.reads > 0 && (e.dev_read_bytes as f64) < 0.01 * e.read_bytes as f64
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

struct PageCacheCopy;
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

struct PerCall;
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
