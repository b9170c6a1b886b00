//! How long work (runs, sweeps, comparisons, labs) says what it is doing
//! without printing: it calls a [`Progress`]; the CLI shows the steps,
//! phases and live figures on stderr, a test collects them, [`Quiet`]
//! drops them.

use crate::job::CachePolicy;

/// Receives the steps of long work as they start and, when it asks for
/// them ([`Progress::live`]), the phases and live figures of each run.
pub trait Progress {
    /// One line about the step starting now (`sweep point 2/4: numjobs=2`).
    fn step(&mut self, what: &str);

    /// Something the user should know that did not stop the work (a
    /// failed eviction, a run that was not stored).
    fn warning(&mut self, what: &str) {
        self.step(&format!("warning: {what}"));
    }

    /// True when this receiver shows live figures: the launcher then has
    /// every clone publish its counters every [`LIVE_NS`] (from the timed
    /// loop's interval events, nothing per I/O) and samples them as often
    /// on its own thread.
    fn live(&self) -> bool {
        false
    }

    /// A phase of a run starts (told only when [`Progress::live`]).
    fn phase(&mut self, _phase: Phase) {}

    /// The figures of the running repetition (told only when
    /// [`Progress::live`], every [`LIVE_NS`] while clones run).
    fn tick(&mut self, _live: &Live) {}
}

/// How often live figures are sampled (ns).
pub const LIVE_NS: u64 = 500_000_000;

/// The phases of one run, in the order they come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Files being laid out (written or extended before the timed part).
    Layout,
    /// A job's page-cache state being set as it starts (`cache=cold`:
    /// evict, `cache=warm`: read in).
    Cache(CachePolicy),
    /// Repetition `rep` (from 1) of `reps` running.
    Run {
        /// This repetition, from 1.
        rep: u32,
        /// Repetitions in all.
        reps: u32,
    },
    /// The run is over (or failed): a display of it can go.
    Done,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Phase::Layout => f.write_str("layout"),
            Phase::Cache(CachePolicy::Cold) => f.write_str("evict"),
            Phase::Cache(CachePolicy::Warm) => f.write_str("warm"),
            Phase::Cache(CachePolicy::Keep) => f.write_str("cache"),
            Phase::Run { reps: 1, .. } => f.write_str("run"),
            Phase::Run { rep, reps } => write!(f, "repetition {rep}/{reps}"),
            Phase::Done => f.write_str("done"),
        }
    }
}

/// Live figures of a run, sampled from the clones' published counters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Live {
    /// I/Os completed in this repetition so far (all clones).
    pub ios: u64,
    /// Bytes completed in this repetition so far.
    pub bytes: u64,
    /// When sampled (the clock of `metrics::clock::now_ns`).
    pub t_ns: u64,
    /// Since the first repetition started (ns).
    pub elapsed_ns: u64,
    /// Part of the whole run done, 0 to 1, when the jobs say how much
    /// they do (runtime, size, io_size, number_ios, loops).
    pub done: Option<f64>,
    /// Time left (ns), when known as `done` is.
    pub eta_ns: Option<u64>,
    /// Clones running.
    pub running: usize,
}

impl Live {
    /// I/Os and bytes per second since `prev` (an earlier sample of the
    /// same repetition); `None` when no time passed. Counters that went
    /// back (the figures restart after `ramp_time`) count as zero.
    pub fn rates_since(&self, prev: &Live) -> Option<(f64, f64)> {
        let dt = self.t_ns.checked_sub(prev.t_ns).filter(|&d| d > 0)? as f64 / 1e9;
        Some((
            self.ios.saturating_sub(prev.ios) as f64 / dt,
            self.bytes.saturating_sub(prev.bytes) as f64 / dt,
        ))
    }
}

impl<F: FnMut(&str)> Progress for F {
    fn step(&mut self, what: &str) {
        self(what)
    }
}

/// Progress that goes nowhere.
#[derive(Debug, Default, Clone, Copy)]
pub struct Quiet;

impl Progress for Quiet {
    fn step(&mut self, _what: &str) {}
}
