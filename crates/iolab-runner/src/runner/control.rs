//! What the launcher and a running clone share besides Ctrl-C: a request
//! to end (fio's `td->terminate`, raised by `exitall` or steady state) and
//! the clone's progress, published every few milliseconds from the timed
//! loop's interval events (nothing per I/O), for steady-state samples and
//! live progress.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// How often a watched clone publishes its progress and looks for an end
/// request (ns).
pub const WATCH_NS: u64 = 5_000_000;

/// A clone's I/Os and bytes so far, at a time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// I/Os completed (reads and writes).
    pub ios: u64,
    /// Bytes completed.
    pub bytes: u64,
    /// When (the clock of `metrics::clock::now_ns`).
    pub t_ns: u64,
}

/// Shared between the launcher and one clone.
#[derive(Debug)]
pub struct CloneCtl {
    end: AtomicBool,
    progress: Mutex<Progress>,
    every_ns: u64,
}

impl Default for CloneCtl {
    fn default() -> Self {
        CloneCtl::every(WATCH_NS)
    }
}

impl CloneCtl {
    /// A control whose clone publishes and looks every `ns` nanoseconds
    /// ([`WATCH_NS`] when the launcher may end clones; longer when it only
    /// shows progress).
    pub fn every(ns: u64) -> CloneCtl {
        CloneCtl {
            end: AtomicBool::new(false),
            progress: Mutex::default(),
            every_ns: ns,
        }
    }

    /// How often the clone publishes and looks (ns).
    pub fn interval_ns(&self) -> u64 {
        self.every_ns
    }

    /// Asks the clone to end at its next look (it ends as if its runtime
    /// were over: not interrupted, no verification pass).
    pub fn end(&self) {
        self.end.store(true, Ordering::Relaxed);
    }

    /// True once an end was asked.
    pub fn ended(&self) -> bool {
        self.end.load(Ordering::Relaxed)
    }

    /// The clone's latest progress.
    pub fn progress(&self) -> Progress {
        *self.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes the clone's progress.
    pub fn publish(&self, p: Progress) {
        *self.progress.lock().unwrap_or_else(|e| e.into_inner()) = p;
    }
}

/// A clone's side: its control and when it looks next.
#[derive(Debug)]
pub struct Watch {
    /// Shared with the launcher.
    pub ctl: std::sync::Arc<CloneCtl>,
    /// Next look (ns); 0: at the first event.
    pub next_ns: u64,
}
