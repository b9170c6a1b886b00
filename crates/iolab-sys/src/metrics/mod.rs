//! Measurements: latency histograms, CPU use, page-cache state, and the
//! key figures results are summed up in ([`figures`]).

pub mod clock;
pub mod figures;
pub mod format;
pub mod histogram;
pub mod names;
pub mod recorder;

pub use crate::sys::cachestat::CacheState;
pub use crate::sys::rusage::CpuUsage;
pub use histogram::LatencyHistogram;
pub use recorder::Recorder;
