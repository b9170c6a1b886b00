//! What runs mean: statistics over repetitions ([`stats`]), A/B
//! comparisons ([`compare`]: each figure's [`difference`], traces call by
//! call ([`compare_calls`]), the
//! [`verdict`], the workload [`fingerprint`] each side must share, the
//! [`env_diff`] between the sides) and sweeps ([`sweep`], with [`vary`]),
//! all over the key figures of [`crate::metrics::figures`]. Library code:
//! it returns data and never prints.

pub mod compare;
pub mod compare_calls;
pub mod difference;
pub mod env_diff;
pub mod error;
pub mod fingerprint;
pub mod stats;
pub mod sweep;
pub mod vary;
pub mod verdict;

pub use error::{AnalysisError, AnalysisResult};
