//! Deferred answers: a FUSE request is answered after its delay by one
//! timer thread, so delayed operations overlap as on a real device (32
//! requests of 1 ms in flight finish together, not one after another).

use std::collections::BinaryHeap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// An answer to send later.
pub type Job = Box<dyn FnOnce() + Send>;

/// Even with no timer slack (set by [`Timer::run`]) a sleeping thread
/// wakes tens of microseconds late, more on an idle virtual CPU: sleep to
/// this far before a deadline, then spin. Measured here (1 ms delay, 4 KiB
/// O_DIRECT reads at depth 1): answers 25 us late on average, against 120-220
/// us with the default 50 us slack.
const SPIN: Duration = Duration::from_micros(100);

struct Due(Instant, u64, Job);

impl PartialEq for Due {
    fn eq(&self, o: &Self) -> bool {
        (self.0, self.1) == (o.0, o.1)
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Due {
    // Earliest first out of a max-heap.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.0, o.1).cmp(&(self.0, self.1))
    }
}

#[derive(Default)]
struct Queue {
    heap: BinaryHeap<Due>,
    seq: u64,
    closed: bool,
}

/// The queue of deferred answers; [`Timer::run`] is its thread.
#[derive(Default)]
pub struct Timer {
    queue: Mutex<Queue>,
    wake: Condvar,
}

impl Timer {
    /// Runs `job` at `when` (at once when that has passed).
    pub fn at(&self, when: Instant, job: Job) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if q.closed {
            drop(q);
            return job();
        }
        q.seq += 1;
        let seq = q.seq;
        q.heap.push(Due(when, seq, job));
        self.wake.notify_one();
    }

    /// Answers everything still queued at once and ends [`Timer::run`].
    pub fn close(&self) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.closed = true;
        self.wake.notify_one();
    }

    /// Answers each job at its time until [`Timer::close`].
    pub fn run(&self) {
        crate::sys::thread::exact_timers();
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            match q.heap.peek().map(|d| d.0) {
                Some(t) if t <= now || q.closed => {
                    let Due(_, _, job) = q.heap.pop().expect("peeked");
                    drop(q);
                    job();
                    q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                }
                Some(t) => {
                    // With a queue (deep I/O) spinning would take a CPU the
                    // requests need; precision matters one at a time.
                    let margin = if q.heap.len() > 2 {
                        Duration::ZERO
                    } else {
                        SPIN
                    };
                    if t - now > margin {
                        q = self.wake.wait_timeout(q, t - now - margin).unwrap().0;
                    } else {
                        drop(q);
                        std::hint::spin_loop();
                        q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                    }
                }
                None if q.closed => return,
                None => q = self.wake.wait(q).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn answers_overlap_and_come_in_deadline_order() {
        let t = Arc::new(Timer::default());
        let runner = {
            let t = t.clone();
            std::thread::spawn(move || t.run())
        };
        let order = Arc::new(Mutex::new(Vec::new()));
        let late = Arc::new(AtomicU64::new(0));
        let start = Instant::now();
        for (i, ms) in [(0u64, 20u64), (1, 10), (2, 15)] {
            let (order, late) = (order.clone(), late.clone());
            let when = start + Duration::from_millis(ms);
            t.at(
                when,
                Box::new(move || {
                    order.lock().unwrap().push(i);
                    late.fetch_max(when.elapsed().as_micros() as u64, Ordering::Relaxed);
                }),
            );
        }
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(*order.lock().unwrap(), vec![1, 2, 0]);
        // All three overlapped: the last was answered near 20 ms, not 45.
        assert!(late.load(Ordering::Relaxed) < 15_000);
        t.close();
        runner.join().unwrap();
    }
}
