//! How long work (sweeps, comparisons, labs) says what it is doing without
//! printing: it calls a [`Progress`]; the CLI shows the steps on stderr, a
//! test collects them, [`Quiet`] drops them.

/// Receives the steps of long work as they start.
pub trait Progress {
    /// One line about the step starting now (`sweep point 2/4: numjobs=2`).
    fn step(&mut self, what: &str);

    /// Something the user should know that did not stop the work (a
    /// failed eviction, a run that was not stored).
    fn warning(&mut self, what: &str) {
        self.step(&format!("warning: {what}"));
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
