//! A flag that asks a run to stop, raised by SIGINT or SIGTERM; it keeps
//! which signal it was, so the exit code can say (130 or 143).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Shared "please stop" flag; cheap to poll. Holds the signal number that
/// raised it (0: not raised).
#[derive(Clone, Debug, Default)]
pub struct StopFlag(Arc<AtomicUsize>);

impl StopFlag {
    /// A flag that is not set.
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    /// A flag raised by SIGINT and SIGTERM (handlers installed for the
    /// whole process).
    pub fn on_signals() -> std::io::Result<StopFlag> {
        let stop = StopFlag::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register_usize(sig, stop.0.clone(), sig as usize)?;
        }
        Ok(stop)
    }

    /// Asks the run to stop, as SIGINT would.
    pub fn set(&self) {
        self.0.store(libc::SIGINT as usize, Ordering::Relaxed);
    }

    /// True once stop was asked.
    #[inline]
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed) != 0
    }

    /// The signal that raised the flag, if any.
    pub fn signal(&self) -> Option<i32> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            s => Some(s as i32),
        }
    }
}
