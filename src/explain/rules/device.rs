//! The device's part: its latency at the depth reached, its bandwidth,
//! its waits; readahead, cache hits and misses, prefetch.

use super::cache::cached;
use super::rule::{Rule, device_share, io_share};
use crate::explain::ceilings::Ceilings;
use crate::explain::evidence::Evidence;
use crate::explain::finding::{Finding, fig, mib, pct, us};

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

pub(super) struct DeviceBandwidth;
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

pub(super) struct HitsMisses;
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
        if e.direct
            || e.dev_reads == 0
            || e.device_reads_foreign()
            || slow_ios > 2.0 * e.dev_reads as f64 + 2.0
        {
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

pub(super) struct Readahead;
impl Rule for Readahead {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        let size = e.dev_read_size();
        if e.direct || e.dev_reads == 0 || e.reads == 0 || e.io_size < 1.0 {
            return None;
        }
        if e.device_reads_foreign() || size < 2.0 * e.io_size {
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

pub(super) struct Prefetch;
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

pub(super) struct DeviceLatency;
impl Rule for DeviceLatency {
    fn judge(&self, e: &Evidence, c: Option<&Ceilings>, device: bool) -> Option<Finding> {
        let dev = device_share(e);
        if dev < 0.5 || e.lat_mean_us <= 0.0 || cached(e) {
            return None;
        }
        // What the device alone allows at the depth reached: depth over
        // its own latency (the injected delay, else its reads' wait).
        // The disk's counters hold other processes' requests too: a wait
        // longer than the run's own I/Os is not all of them.
        let own = e
            .injected_delay_us
            .or((e.dev_read_wait_us > 0.0).then_some(e.dev_read_wait_us))
            .unwrap_or(e.lat_mean_us)
            .min(e.lat_mean_us);
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

pub(super) struct DeviceWaits;
impl Rule for DeviceWaits {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        let ios = e.dev_reads + e.dev_writes;
        if ios == 0 || e.runtime_s <= 0.0 || e.device_reads_foreign() {
            return None;
        }
        // Busy time, not the waits added up: overlapping requests count once.
        let busy = (e.dev_busy_s / e.runtime_s).min(1.0);
        if busy < 0.2 {
            return None;
        }
        let wait_us =
            e.dev_reads as f64 * e.dev_read_wait_us + e.dev_writes as f64 * e.dev_write_wait_us;
        // A run whose slowest I/Os are far quicker than a device request
        // did not wait for these: they were other processes'.
        if e.lat_p99_us > 0.0 && wait_us / ios as f64 > 4.0 * e.lat_p99_us {
            return None;
        }
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
