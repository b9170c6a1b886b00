//! Answers held back until their deadline, per queue thread, and how the
//! thread waits for the next one: sleeping in the kernel while the deadline
//! is further away than a wake-up costs (measured once per thread), then
//! spinning the rest of the way.

use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The sleep whose expected oversleep the server reports as its wake-up
/// cost.
pub(crate) const TYPICAL: Duration = Duration::from_micros(50);

/// An answer this close to its deadline counts as on time.
pub(crate) const ON_TIME: Duration = Duration::from_micros(2);

/// Answers waiting for their deadline, earliest first.
pub(crate) struct Deadlines<T> {
    heap: BinaryHeap<Due<T>>,
    seq: u64,
}

struct Due<T> {
    at: Instant,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Due<T> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<T> Eq for Due<T> {}
impl<T> PartialOrd for Due<T> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Due<T> {
    // Earliest (then first pushed) on top of the max-heap.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

impl<T> Deadlines<T> {
    /// None waiting.
    pub(crate) fn new() -> Self {
        Deadlines {
            heap: BinaryHeap::with_capacity(64),
            seq: 0,
        }
    }

    /// Holds `item` until `at`.
    pub(crate) fn push(&mut self, at: Instant, item: T) {
        self.seq += 1;
        self.heap.push(Due {
            at,
            seq: self.seq,
            item,
        });
    }

    /// The earliest deadline.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|d| d.at)
    }

    /// The earliest item if its deadline is `now` or past, with how late
    /// it is at `now`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<(T, Duration)> {
        match self.heap.peek() {
            Some(d) if d.at <= now => self.heap.pop().map(|d| (d.item, now - d.at)),
            _ => None,
        }
    }
}

/// How late one queue's held answers went out: written by its thread
/// only (no contention), read by [`super::Server::punctuality`].
#[repr(align(64))]
#[derive(Debug, Default)]
pub(crate) struct Tally {
    held: AtomicU64,
    on_time: AtomicU64,
    late_ns: AtomicU64,
    max_late_ns: AtomicU64,
}

impl Tally {
    /// One held answer sent `late` after its deadline.
    pub(crate) fn record(&self, late: Duration) {
        let ns = late.as_nanos() as u64;
        self.held.fetch_add(1, Relaxed);
        self.on_time.fetch_add((late <= ON_TIME) as u64, Relaxed);
        self.late_ns.fetch_add(ns, Relaxed);
        self.max_late_ns.fetch_max(ns, Relaxed);
    }

    /// Adds this queue's counts to `p`.
    pub(crate) fn add_to(&self, p: &mut super::Punctuality) {
        let held = self.held.load(Relaxed);
        let late = p.mean_late.as_nanos() as u64 * p.held + self.late_ns.load(Relaxed);
        p.held += held;
        p.on_time += self.on_time.load(Relaxed);
        p.mean_late = Duration::from_nanos(late.checked_div(p.held).unwrap_or(0));
        let max = Duration::from_nanos(self.max_late_ns.load(Relaxed));
        p.max_late = p.max_late.max(max);
    }
}

/// What a queue thread does next when it has nothing to handle.
#[derive(Debug, PartialEq)]
pub(crate) enum Wait {
    /// Sleep until a request comes.
    Block,
    /// Sleep until a request comes or this long passes.
    Sleep(Duration),
    /// Stay awake (watching for requests) until this instant.
    Spin(Instant),
}

/// Sleep lengths fall in buckets around these (us): on a virtual machine
/// a sleep's oversleep grows with its length (a longer idle gets a deeper
/// halt), 20 us late for the shortest, 50 for a millisecond.
const PROBES: [u64; 7] = [20, 48, 96, 192, 384, 768, 1536];
const BUCKETS: usize = PROBES.len();

fn bucket(sleep: Duration) -> usize {
    let us = sleep.as_micros() as u64;
    PROBES
        .iter()
        .position(|p| us < p * 4 / 3)
        .unwrap_or(BUCKETS - 1)
}

/// How late sleeps of one length wake: a running mean and mean deviation
/// (in ns), learned from every sleep that ran to its end.
#[derive(Clone, Copy, Debug, Default)]
struct Over {
    mean: f64,
    dev: f64,
}

/// How a queue thread waits: its oversleep per sleep length, measured at
/// start and then learned from its own sleeps.
#[derive(Clone, Debug)]
pub(crate) struct Pace {
    over: [Over; BUCKETS],
    /// After sending an answer with nothing else held, how long to watch
    /// for the next request before sleeping (0: sleep at once).
    pub idle_spin: Duration,
}

impl Pace {
    /// Measures `sleep`: 5 sleeps per bucket (about 17 ms in all), the
    /// median and half the spread of the middle three, so one preempted
    /// sleep does not count.
    pub(crate) fn measure(mut sleep: impl FnMut(Duration), idle_spin: Duration) -> Pace {
        let mut over = [Over::default(); BUCKETS];
        for (o, us) in over.iter_mut().zip(PROBES) {
            let want = Duration::from_micros(us);
            let mut s: Vec<f64> = (0..5)
                .map(|_| {
                    let t = Instant::now();
                    sleep(want);
                    t.elapsed().saturating_sub(want).as_nanos() as f64
                })
                .collect();
            s.sort_by(f64::total_cmp);
            *o = Over {
                mean: s[2],
                dev: (s[3] - s[1]) / 2.0 + 1000.0,
            };
        }
        Pace { over, idle_spin }
    }

    /// How late a sleep of `d` is expected to wake, at worst most times.
    pub(crate) fn wake(&self, d: Duration) -> Duration {
        let o = self.over[bucket(d)];
        Duration::from_nanos((o.mean + 2.0 * o.dev).max(1000.0) as u64)
    }

    /// The wait before the answer due at `next` (None: none held): sleep
    /// for what is left but the expected oversleep, spin the rest.
    pub(crate) fn plan(&self, next: Option<Instant>, now: Instant) -> Wait {
        let Some(at) = next else {
            return Wait::Block;
        };
        let left = at.saturating_duration_since(now);
        let first = left.saturating_sub(self.wake(left));
        match left.checked_sub(self.wake(first)) {
            Some(s) if !s.is_zero() && !first.is_zero() => Wait::Sleep(s),
            _ => Wait::Spin(at),
        }
    }

    /// Learns from a sleep of `asked` that took `took` (woken by its
    /// timeout; an earlier wake-up by a request teaches nothing).
    pub(crate) fn learn(&mut self, asked: Duration, took: Duration) {
        let Some(late) = took.checked_sub(asked) else {
            return;
        };
        let o = &mut self.over[bucket(asked)];
        // A preempted sleep (milliseconds) would throw the mean off.
        let late = (late.as_nanos() as f64).min(4.0 * (o.mean + 2.0 * o.dev));
        o.dev += ((late - o.mean).abs() - o.dev) / 16.0;
        o.mean += (late - o.mean) / 16.0;
    }
}

/// Spins until `until` or until `ready()` is true; returns `ready()`'s
/// last answer.
pub(crate) fn spin_until(until: Instant, mut ready: impl FnMut() -> bool) -> bool {
    loop {
        if ready() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_fifo() {
        let t = Instant::now();
        let mut d = Deadlines::new();
        d.push(t + Duration::from_micros(30), 'c');
        d.push(t + Duration::from_micros(10), 'a');
        d.push(t + Duration::from_micros(10), 'b');
        assert_eq!(d.pop_due(t), None);
        let later = t + Duration::from_micros(20);
        assert_eq!(d.pop_due(later), Some(('a', Duration::from_micros(10))));
        assert_eq!(d.pop_due(later), Some(('b', Duration::from_micros(10))));
        assert_eq!(d.pop_due(later), None);
        assert_eq!(d.next(), Some(t + Duration::from_micros(30)));
    }

    #[test]
    fn sleeps_far_spins_near() {
        // Every sleep wakes 30 us late, give or take 5.
        let over = Over {
            mean: 30_000.0,
            dev: 5_000.0,
        };
        let mut p = Pace {
            over: [over; BUCKETS],
            idle_spin: Duration::ZERO,
        };
        let t = Instant::now();
        assert_eq!(p.plan(None, t), Wait::Block);
        let far = t + Duration::from_micros(200);
        assert_eq!(
            p.plan(Some(far), t),
            Wait::Sleep(Duration::from_micros(160))
        );
        let near = t + Duration::from_micros(40);
        assert_eq!(p.plan(Some(near), t), Wait::Spin(near));
        // Sleeps of 160 us start waking 60 us late: sleep less.
        for _ in 0..200 {
            p.learn(Duration::from_micros(160), Duration::from_micros(220));
        }
        match p.plan(Some(far), t) {
            Wait::Sleep(d) => assert!(d < Duration::from_micros(145), "{d:?}"),
            w => panic!("{w:?}"),
        }
    }

    #[test]
    fn buckets_by_length() {
        assert_eq!(bucket(Duration::from_micros(10)), 0);
        assert_eq!(bucket(Duration::from_micros(50)), 1);
        assert_eq!(bucket(Duration::from_micros(160)), 3);
        assert_eq!(bucket(Duration::from_millis(50)), BUCKETS - 1);
    }
}
