//! The job of the many-hosts tests (`tests/dist.rs`, `tests/mpi.rs`).

use std::path::Path;

/// The job of the many-hosts tests (`--hosts`, MPI): 2 MiB of 4 KiB random
/// reads of `f` (each rank reads its own `f.RANK`), with `extra` options.
pub fn rank_job(f: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["--name=r", "--size=2m", "--rw=randread", "--bs=4k"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.push(format!("--filename={}", f.display()));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}
