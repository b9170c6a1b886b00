//! What a rank is ([`Me`]) and what it did as rank 0 knows it
//! ([`Ranked`], [`RankFailed`]), with the errors MPI runs give.

use crate::dist::DistError;
use crate::dist::merge::HostRun;

/// This process's place among the ranks.
#[derive(Debug, Clone, Copy)]
pub struct Me {
    /// Its rank (0-based).
    pub rank: u32,
    /// How many ranks there are.
    pub size: u32,
}

/// How a rank's work failed, as it reported (the error itself stayed in
/// its process; its text crossed to rank 0).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RankFailed(pub String);

/// What a rank did, as rank 0 knows it.
#[derive(Debug)]
pub struct Ranked<T> {
    /// Its host name.
    pub hostname: String,
    /// Its clock minus rank 0's (ns).
    pub clock_offset_ns: i64,
    /// When its timed part started, on rank 0's clock (ns).
    pub started_ns: u64,
    /// What its work returned, or its error.
    pub outcome: Result<T, RankFailed>,
    /// Stopped because another rank finished first (`--stonewall-ranks`).
    pub finished: bool,
}

impl<T> Ranked<T> {
    /// Its row of the hosts table, without figures yet.
    pub fn host(&self, rank: usize) -> HostRun {
        let mut h = HostRun::new(rank as u32, &self.hostname);
        h.hostname = self.hostname.clone();
        h.clock_offset_ns = self.clock_offset_ns;
        h.started_ns = self.started_ns;
        h.failed = self.outcome.as_ref().err().map(|e| e.0.clone());
        h
    }
}

/// An MPI usage error.
pub(in crate::dist) fn usage(problem: &str) -> DistError {
    DistError::Usage {
        what: "MPI".into(),
        problem: problem.into(),
    }
}

/// The first failed rank's error.
pub(in crate::dist) fn first_error<T>(ranks: &[Ranked<T>]) -> Option<DistError> {
    ranks.iter().enumerate().find_map(|(r, k)| {
        k.outcome.as_ref().err().map(|e| DistError::Worker {
            host: format!("rank {r} ({})", k.hostname),
            problem: e.to_string(),
        })
    })
}
