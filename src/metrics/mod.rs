//! Measurements: latency histograms, CPU use, page-cache state.

pub mod cachestat;
pub mod clock;
pub mod histogram;
pub mod recorder;
pub mod rusage;

pub use cachestat::CacheState;
pub use histogram::LatencyHistogram;
pub use recorder::Recorder;
pub use rusage::CpuUsage;
