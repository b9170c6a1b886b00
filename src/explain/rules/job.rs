//! The limits a job sets itself or fails by: errors, a rate, think time,
//! fsync.

use super::rule::Rule;
use crate::explain::ceilings::Ceilings;
use crate::explain::evidence::Evidence;
use crate::explain::finding::{Finding, fig, mib, pct, us};

pub(super) struct Errors;
impl Rule for Errors {
    fn judge(&self, e: &Evidence, _: Option<&Ceilings>, _: bool) -> Option<Finding> {
        let first = e.errors.first()?;
        Some(
            Finding::new("errors", "errors", 2.0, format!("the run failed: {first}"))
                .with("errors", e.errors.len() as f64),
        )
    }
}

pub(super) struct RateLimit;
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

pub(super) struct ThinkTime;
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

pub(super) struct Fsync;
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
