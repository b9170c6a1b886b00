//! Offset and size generation: what each clone will do, in order.

pub mod draws;
pub mod permutation;
pub mod planner;
pub mod shuffle;

pub use planner::{IoUnit, MAX_FILES, PlanParams, Planner, Region};
