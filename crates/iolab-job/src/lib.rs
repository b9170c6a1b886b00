//! iolab's job layer: the job description (`job`: fio's INI and command
//! line into a checked `JobSpec`) and the plan of its I/Os (`plan`: offsets,
//! sizes, directions). Above the engine layer only: the compiler keeps it
//! from importing the disk, runner or store layers (docs/ARCHITECTURE.md).

pub mod job;
pub mod plan;

// The layers below, under the paths the job code uses (crate::engine::...).
pub use iolab_engine::engine;
pub use iolab_sys::{metrics, registry, sys};
