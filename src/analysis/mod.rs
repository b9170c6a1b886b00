//! What runs mean: statistics over repetitions ([`stats`]), A/B
//! comparisons ([`compare`]) and sweeps ([`sweep`], with [`vary`]), all
//! over the key figures of [`crate::metrics::figures`]. Library code: it
//! returns data and never prints.

pub mod compare;
pub mod stats;
pub mod sweep;
pub mod vary;
