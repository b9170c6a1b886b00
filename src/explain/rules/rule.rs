//! The shape of a rule, and the shares the rules weigh their findings by.

use crate::explain::ceilings::Ceilings;
use crate::explain::evidence::Evidence;
use crate::explain::finding::Finding;

/// One rule.
pub trait Rule: Sync {
    /// The finding, when this rule's limit is at work in the run.
    fn judge(&self, e: &Evidence, c: Option<&Ceilings>, device: bool) -> Option<Finding>;
}

/// Share of the threads' time spent waiting for I/O (0-1): the depth the
/// queue reached over the depth it could have (threads × iodepth).
pub(super) fn io_share(e: &Evidence) -> f64 {
    let cap = f64::from(e.threads.max(1)) * f64::from(e.iodepth.max(1));
    (e.depth_achieved / cap).min(1.0)
}

/// Share of the reads and writes that reached the device: its reads for
/// the run's reads, its writes for the run's writes (a read-only run's
/// device writes are someone's write-back, not its I/O).
pub(super) fn device_share(e: &Evidence) -> f64 {
    let ops = (e.reads + e.writes) as f64;
    let own_reads = if e.device_reads_foreign() {
        0
    } else {
        e.dev_reads
    };
    let dev = own_reads.min(e.reads) + e.dev_writes.min(e.writes);
    match ops > 0.0 {
        true => (dev as f64 / ops).min(1.0),
        false => 0.0,
    }
}
