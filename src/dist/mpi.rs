//! Under MPI (`mpirun -n 64 iolab run JOB`, `srun iolab run JOB`; cargo
//! feature `mpi`): every rank runs the job on its own files, all start at
//! one `MPI_Barrier`, and rank 0 gathers what each measured, merges it as
//! `--hosts` does, and is the only one to show and store it.
//!
//! Only the main thread calls MPI (`MPI_THREAD_FUNNELED`); the job runs on
//! a thread of its own and reports to it over a channel. After the start,
//! the main thread polls: each rank tells rank 0 when it is done (`DONE`),
//! and rank 0 answers every rank exactly once (`END`): "go on to the
//! gather", or, with `--stonewall-ranks`, as soon as the first rank is
//! done, "stop now". Then each rank sends rank 0 its report (JSON).

use super::error::DistError;
use super::merge::HostRun;

/// The launcher that started this process as an MPI rank, told by the
/// environment it set (`None`: not under an MPI launcher).
pub fn launched() -> Option<&'static str> {
    const MARKS: [(&str, &str); 4] = [
        ("OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun"),
        ("PMI_SIZE", "an MPICH (Hydra) or Slurm PMI launcher"),
        ("PMIX_RANK", "a PMIx launcher (srun --mpi=pmix, prterun)"),
        ("MPI_LOCALNRANKS", "an MPICH launcher"),
    ];
    MARKS
        .iter()
        .find(|(var, _)| std::env::var_os(var).is_some())
        .map(|(_, who)| *who)
}

/// The ranks `srun` started (`SLURM_NTASKS` under a job step), if any.
pub(super) fn slurm_tasks() -> Option<u32> {
    std::env::var("SLURM_STEP_NUM_TASKS")
        .or_else(|_| std::env::var("SLURM_NTASKS"))
        .ok()?
        .parse()
        .ok()
}

/// The error of a build without the `mpi` feature started by an MPI
/// launcher: each rank would run the whole job alone, on the same files.
pub fn not_built(who: &str) -> DistError {
    DistError::Usage {
        what: "MPI".into(),
        problem: format!(
            "started by {who}, but this iolab was built without MPI: build it with \
             `cargo build --release --features mpi` (needs an MPI -dev package and libclang), \
             or use `iolab run --hosts`"
        ),
    }
}

/// What one rank sends rank 0 at the end.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Report {
    pub hostname: String,
    /// When its timed part started (its CLOCK_REALTIME, ns).
    pub started_ns: u64,
    pub run: Option<crate::runner::RunResult>,
    pub env: Option<crate::sys::environment::Environment>,
    pub error: Option<String>,
}

impl Report {
    /// Rank `rank`'s row of the hosts table; its run, if it has one.
    pub(super) fn host(
        self,
        rank: u32,
        offset_ns: i64,
    ) -> (HostRun, Option<crate::runner::RunResult>) {
        let mut h = HostRun::new(rank, &self.hostname);
        h.hostname = self.hostname;
        h.clock_offset_ns = offset_ns;
        h.started_ns = (self.started_ns as i64 - offset_ns) as u64;
        if let Some(run) = &self.run {
            h.finished(run, self.env);
        }
        h.failed = self.error;
        (h, self.run)
    }
}

#[cfg(feature = "mpi")]
pub use super::mpi_ranks::run;
