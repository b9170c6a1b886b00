//! Offset and size generation: what each clone will do, in order.

pub mod access;
pub mod dist;
pub mod draws;
mod freemap;
mod offsets;
pub mod permutation;
pub mod planner;
pub mod shuffle;
mod sizes;
pub mod unit;

pub use planner::Planner;
pub use unit::{IoUnit, MAX_FILES, PlanParams, Region, clone_seed, tables_fit};
