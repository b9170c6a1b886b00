//! The gate every operation of a served disk passes: the rules decide
//! (delay, error), the timer answers later. Shared by the layers (block and
//! file) and by the control socket, which reads its counters and swaps its
//! rules while the disk is mounted.

use super::rules::{Counters, Decision, Op, Rules};
use super::timer::{Job, Timer};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Rules, their state and the answer timer of one disk.
pub struct Gate {
    rules: Mutex<Rules>,
    /// Rules apply only once the disk is up: mkfs and mount run at full speed.
    armed: AtomicBool,
    timer: Arc<Timer>,
    start: Instant,
}

impl Gate {
    /// A gate with `rules`, not yet armed, and its timer thread started.
    pub fn new(rules: Rules) -> Arc<Gate> {
        let timer = Arc::new(Timer::default());
        let t = timer.clone();
        std::thread::Builder::new()
            .name("iolab-disk-timer".into())
            .spawn(move || t.run())
            .expect("spawn the timer thread");
        Arc::new(Gate {
            rules: Mutex::new(rules),
            armed: AtomicBool::new(false),
            timer,
            start: Instant::now(),
        })
    }

    /// Starts applying the rules (false: stops).
    pub fn arm(&self, on: bool) {
        self.armed.store(on, Ordering::Release);
    }

    /// True while the rules apply.
    pub fn armed(&self) -> bool {
        self.armed.load(Ordering::Acquire)
    }

    /// What to do with an operation of kind `op` on `bytes` (offset,
    /// length) of `path`; nothing while disarmed.
    pub fn decide(&self, op: Op, bytes: (u64, u64), path: Option<&str>) -> Decision {
        if !self.armed.load(Ordering::Acquire) {
            return Decision::default();
        }
        let now = self.start.elapsed().as_nanos() as u64;
        self.lock().decide(op, bytes, path, now)
    }

    /// Runs `answer` after `delay_ns` (at once for 0), from the timer thread.
    pub fn answer(&self, delay_ns: u64, answer: Job) {
        if delay_ns == 0 {
            return answer();
        }
        self.timer
            .at(Instant::now() + Duration::from_nanos(delay_ns), answer);
    }

    /// The rules' texts and counters now.
    pub fn snapshot(&self) -> (Vec<String>, Counters) {
        let r = self.lock();
        let texts = r.rules().iter().map(|r| r.text.clone()).collect();
        (texts, r.counters.clone())
    }

    /// Replaces the rules, keeping the counters.
    pub fn replace(&self, mut rules: Rules) {
        let mut r = self.lock();
        rules.counters = std::mem::take(&mut r.counters);
        *r = rules;
    }

    /// Answers everything queued at once and stops the timer thread.
    pub fn close(&self) {
        self.timer.close();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Rules> {
        self.rules.lock().unwrap_or_else(|e| e.into_inner())
    }
}
