//! iolab's bottom layer: the operating system (`sys`), measurements
//! (`metrics`) and the plug-in registry (`registry`). It knows no iolab
//! subsystem above it: the compiler keeps the layering (docs/ARCHITECTURE.md).

pub mod error;
pub mod metrics;
pub mod registry;
pub mod sys;

pub use error::{Error, Result};
