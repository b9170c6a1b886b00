//! Measurements: latency histograms, CPU use, page-cache state.

pub mod clock;
pub mod histogram;
pub mod recorder;

pub use crate::sys::cachestat::CacheState;
pub use crate::sys::rusage::CpuUsage;
pub use histogram::LatencyHistogram;
pub use recorder::Recorder;
