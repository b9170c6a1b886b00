//! A flag that asks a run to stop (set from a signal handler by the CLI).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Shared "please stop" flag; cheap to poll once per I/O.
#[derive(Clone, Debug, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// A flag that is not set.
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    /// The atomic itself, for `signal_hook::flag::register`.
    pub fn atomic(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }

    /// Asks the run to stop.
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// True once stop was asked.
    #[inline]
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
