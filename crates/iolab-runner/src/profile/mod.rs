//! Where the CPU went during a run: `perf record` attached to iolab itself,
//! folded and drawn as an SVG flamegraph with the inferno crate.

pub mod flamegraph;

pub use flamegraph::Profiler;
