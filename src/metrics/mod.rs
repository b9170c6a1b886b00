//! Measurements: latency histograms, CPU use, page-cache state.

pub mod cachestat;
pub mod histogram;
pub mod rusage;

pub use cachestat::CacheState;
pub use histogram::LatencyHistogram;
pub use rusage::CpuUsage;
