//! What runs mean: key figures of a run ([`summary`]), statistics over
//! repetitions ([`stats`]), A/B comparisons ([`compare`]) and sweeps
//! ([`sweep`]). Library code: it returns data and never prints.

pub mod compare;
pub mod stats;
pub mod summary;
pub mod sweep;
pub mod vary;
