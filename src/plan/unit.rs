//! What the planner works with: the I/O it hands out ([`IoUnit`], the
//! engines' type), the part of a file a clone covers ([`Region`]) and what
//! it needs to know of the job ([`PlanParams`]).

use crate::job::{Mix, Pattern};

/// One I/O to issue: what an engine is handed (defined with the engines).
pub use crate::engine::IoUnit;

/// Most files one job clone can work on (the job checks it).
pub use crate::job::MAX_FILES;

const _: () = assert!(std::mem::size_of::<Option<IoUnit>>() == 16);

/// The part of a file a clone works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// First byte.
    pub start: u64,
    /// Length in bytes.
    pub len: u64,
}

/// What the planner needs to know about a job.
#[derive(Debug, Clone)]
pub struct PlanParams {
    /// One region per file.
    pub regions: Vec<Region>,
    /// Sequential or random.
    pub pattern: Pattern,
    /// Directions.
    pub mix: Mix,
    /// Percentage of reads when mixed.
    pub rwmixread: u32,
    /// Smallest I/O.
    pub bs_min: u64,
    /// Largest I/O.
    pub bs_max: u64,
    /// Passes over the regions; `None` for endless (time_based).
    pub loops: Option<u64>,
    /// Stop after this many I/Os.
    pub number_ios: Option<u64>,
    /// Seed of every random choice.
    pub seed: u64,
}
