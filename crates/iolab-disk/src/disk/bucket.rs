//! A token bucket: "a 100 MiB/s disk" or "a 500 IOPS disk". Each
//! operation takes its tokens (bytes, or 1) and is told how long to wait
//! until the bucket had them; the bucket holds at most [`BURST_NS`] worth
//! of tokens: an idle disk bursts no more than 10 ms of work, so a
//! measurement of a second is off by 1% at most.

/// How much idle time a bucket saves up, ns.
pub const BURST_NS: u64 = 10_000_000;

/// Tokens per second and what is left, in time.
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    /// Tokens added per second.
    rate: u64,
    /// When the tokens taken so far are paid for, ns on the caller's clock.
    paid_until_ns: u64,
}

impl Bucket {
    /// A bucket of `rate` tokens per second (at least 1).
    pub fn new(rate: u64) -> Bucket {
        Bucket {
            rate: rate.max(1),
            paid_until_ns: 0,
        }
    }

    /// Tokens per second.
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// Takes `tokens` at `now_ns`; how long the operation must wait, ns.
    pub fn take(&mut self, tokens: u64, now_ns: u64) -> u64 {
        // An idle bucket refills, but to BURST_NS's worth at most.
        let floor = now_ns.saturating_sub(BURST_NS);
        let start = self.paid_until_ns.max(floor);
        let cost = (tokens as u128 * 1_000_000_000 / self.rate as u128) as u64;
        self.paid_until_ns = start.saturating_add(cost);
        self.paid_until_ns.saturating_sub(now_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_bucket_paces_to_its_rate() {
        // 100 MiB/s, 4 KiB operations back to back from a full bucket: after
        // the burst, each waits for its 4 KiB.
        let mut b = Bucket::new(100 << 20);
        let mut now = 5_000_000_000;
        let mut total = 0u64;
        for _ in 0..100_000 {
            let wait = b.take(4096, now);
            now += wait;
            total += 4096;
        }
        // 390.6 MiB at 100 MiB/s: 3.906 s, less the burst.
        let secs = (now - 5_000_000_000) as f64 / 1e9;
        let want = total as f64 / (100 << 20) as f64 - BURST_NS as f64 / 1e9;
        assert!(
            (secs - want).abs() < 0.001,
            "{secs} s for {total} bytes, not {want}"
        );
    }

    #[test]
    fn iops_cap_counts_operations() {
        let mut b = Bucket::new(100);
        let now = 1_000_000_000;
        let waits: Vec<u64> = (0..3).map(|_| b.take(1, now)).collect();
        // 10 ms each, the first less the 10 ms saved up.
        assert_eq!(waits, [0, 10_000_000, 20_000_000]);
    }
}
