//! What the launcher tells the repetition about the jobs it runs
//! ([`JobEvents`]): a job starting, a job ended, live samples.

use crate::runner::live::RepSample;

/// What the launcher tells the repetition about the jobs it runs.
pub trait JobEvents {
    /// The first clone of job `j` is about to start (its files' cache
    /// state is set now, as fio sets it when the job starts).
    fn starting(&mut self, j: usize);
    /// Every clone of job `j`, which started, has ended or never will.
    fn ended(&mut self, j: usize);
    /// True when the repetition shows live figures ([`Self::tick`]).
    fn live(&self) -> bool {
        false
    }
    /// A sample of the running clones, every
    /// [`LIVE_NS`](crate::runner::progress::LIVE_NS) while any runs.
    fn tick(&mut self, _sample: &RepSample) {}
}
