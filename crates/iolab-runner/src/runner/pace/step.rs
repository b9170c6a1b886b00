//! What a clone's loop does after a pacing step ([`Step`]): the one word
//! the pacing (`Pace`) and the latency search give back.

/// What the loop does after a pacing step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Go on.
    On,
    /// The job ends (deadline, the latency search done, `rate_min` not met:
    /// see `Pace::error`).
    End,
    /// Ctrl-C.
    Stopped,
    /// Statistics start over now (the final run of `latency_target`).
    Reset,
}
