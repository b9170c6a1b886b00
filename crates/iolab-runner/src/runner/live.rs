//! Live figures of a running repetition: how much each clone is to do
//! (its runtime, bytes or I/Os, where the job says), and a sample of the
//! counters the clones publish ([`super::control`]), taken on the
//! launcher's thread: how far the repetition is and how long it has left.

use super::control::Progress as Published;
use crate::job::JobSpec;
use crate::plan::Region;

/// What one clone is to do, as far as its job says: it ends at the first
/// limit it reaches.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Expect {
    /// Its timed part lasts at most this long (`runtime` plus `ramp_time`, ns).
    pub time_ns: Option<u64>,
    /// It moves this many bytes (`size` or `io_size`, times `loops`).
    pub bytes: Option<u64>,
    /// It issues this many I/Os (`number_ios`).
    pub ios: Option<u64>,
}

impl Expect {
    /// What clone of `job` working on `regions` is to do.
    pub fn of_clone(job: &JobSpec, regions: &[Region]) -> Expect {
        let loops = job.loops.max(1);
        let bytes = (!job.time_based).then(|| {
            let a = &job.access;
            let once = if a.io_size > 0 {
                a.io_size
            } else {
                regions.iter().map(|r| r.len).sum()
            };
            once.saturating_mul(loops)
        });
        Expect {
            time_ns: job
                .runtime_us
                .map(|r| r.saturating_add(job.pacing.ramp_us).saturating_mul(1000)),
            bytes: bytes.filter(|&b| b > 0),
            ios: job.number_ios.map(|n| {
                if job.time_based {
                    n
                } else {
                    n.saturating_mul(loops)
                }
            }),
        }
    }

    /// How far the clone is (0 to 1) and how long it has left (ns), after
    /// `elapsed_ns` with `done` published; `None` when its job sets no limit.
    pub fn progress(&self, done: &Published, elapsed_ns: u64) -> Option<(f64, u64)> {
        let by_time = self.time_ns.filter(|&t| t > 0).map(|t| {
            let f = elapsed_ns as f64 / t as f64;
            (f, t.saturating_sub(elapsed_ns))
        });
        let amounts = [(self.bytes, done.bytes), (self.ios, done.ios)];
        let by_amount = (amounts.iter())
            .filter_map(|&(limit, n)| Some(n as f64 / limit.filter(|&l| l > 0)? as f64))
            .map(|f| (f, left_ns(f, elapsed_ns)));
        by_time
            .into_iter()
            .chain(by_amount)
            .reduce(|a, b| (a.0.max(b.0), a.1.min(b.1)))
            .map(|(f, left)| (f.clamp(0.0, 1.0), left))
    }
}

/// Time left when `f` of the work took `elapsed_ns` at the same pace.
fn left_ns(f: f64, elapsed_ns: u64) -> u64 {
    if f >= 1.0 {
        0
    } else if f <= 0.0 {
        u64::MAX
    } else {
        (elapsed_ns as f64 * (1.0 - f) / f) as u64
    }
}

/// Where one clone of the repetition is, for a sample.
#[derive(Debug, Clone, Copy)]
pub enum Seen {
    /// Not started yet.
    Waiting,
    /// Running since `epoch_ns`, with `done` published.
    Running {
        /// When its gate opened.
        epoch_ns: u64,
        /// Its latest counters.
        done: Published,
    },
    /// Ended (or never will start), with its last published counters.
    Over(Published),
}

/// A sample of the repetition: counters summed over its clones, the part
/// done and the time left (the longest of the running clones' and the
/// runtimes of those still to start; unknown when a running clone sets no
/// limit).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RepSample {
    /// I/Os completed.
    pub ios: u64,
    /// Bytes completed.
    pub bytes: u64,
    /// Clones running.
    pub running: usize,
    /// Part of the repetition done, 0 to 1 (the mean over its clones).
    pub done: Option<f64>,
    /// Time left of the repetition (ns).
    pub left_ns: Option<u64>,
}

/// Samples the clones `seen`, each with what it is to do, at `now`.
pub fn sample(clones: &[(Seen, Expect)], now: u64) -> RepSample {
    let mut s = RepSample {
        done: Some(0.0),
        left_ns: Some(0),
        ..Default::default()
    };
    for (seen, expect) in clones {
        let (part, left, counted) = match *seen {
            // As fio's ETA: a clone still to start has at least its runtime left.
            Seen::Waiting => (Some(0.0), expect.time_ns.or(Some(0)), Published::default()),
            Seen::Over(p) => (Some(1.0), Some(0), p),
            Seen::Running { epoch_ns, done } => {
                s.running += 1;
                let p = expect.progress(&done, now.saturating_sub(epoch_ns));
                (p.map(|p| p.0), p.map(|p| p.1), done)
            }
        };
        s.ios += counted.ios;
        s.bytes += counted.bytes;
        s.done = s.done.zip(part).map(|(a, b)| a + b);
        s.left_ns = s.left_ns.zip(left).map(|(a, b)| a.max(b));
    }
    s.done = s.done.map(|d| d / clones.len().max(1) as f64);
    s.left_ns = s.left_ns.filter(|&l| l != u64::MAX);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn published(ios: u64, bytes: u64) -> Published {
        Published {
            ios,
            bytes,
            t_ns: 0,
        }
    }

    #[test]
    fn a_timed_clone_is_as_far_as_its_runtime() {
        let e = Expect {
            time_ns: Some(4_000),
            ..Default::default()
        };
        assert_eq!(e.progress(&published(10, 10), 1_000), Some((0.25, 3_000)));
    }

    #[test]
    fn the_first_limit_reached_wins() {
        let e = Expect {
            time_ns: Some(10_000),
            bytes: Some(100),
            ios: None,
        };
        // Half the bytes in a tenth of the runtime: 0.5 done, as long again left.
        assert_eq!(e.progress(&published(1, 50), 1_000), Some((0.5, 1_000)));
        assert_eq!(Expect::default().progress(&published(1, 50), 1_000), None);
    }

    #[test]
    fn a_sample_sums_the_clones_and_waits_for_the_slowest() {
        let timed = Expect {
            time_ns: Some(4_000),
            ..Default::default()
        };
        let clones = [
            (
                Seen::Running {
                    epoch_ns: 1_000,
                    done: published(5, 500),
                },
                timed,
            ),
            (Seen::Over(published(7, 700)), timed),
            (Seen::Waiting, timed),
            (
                Seen::Running {
                    epoch_ns: 2_000,
                    done: published(1, 100),
                },
                timed,
            ),
        ];
        let s = sample(&clones, 3_000);
        assert_eq!((s.ios, s.bytes, s.running), (13, 1_300, 2));
        // 0.5 + 1 + 0 + 0.25, over four clones; the one still to start
        // has its 4000 ns left, more than the last one's 3000.
        assert_eq!(s.done, Some(0.4375));
        assert_eq!(s.left_ns, Some(4_000));
        assert_eq!(sample(&clones[..2], 3_000).left_ns, Some(2_000));
        let endless = [(
            Seen::Running {
                epoch_ns: 0,
                done: published(1, 1),
            },
            Expect::default(),
        )];
        assert_eq!(sample(&endless, 5).done, None);
    }
}
