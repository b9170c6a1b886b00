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
//!
//! What a rank is and did is [`ranked`]; the MPI calls are in `ranks`.

use super::DistError;
use super::merge::{self, DistRun};
use super::rank::RankRun;

pub mod ranked;
#[cfg(feature = "mpi")]
mod ranks;

pub use ranked::{Me, RankFailed, Ranked};
use ranked::{first_error, usage};

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

/// Rank 0 makes one run of every rank's (an error when none measured).
pub fn gather_runs(ranks: Vec<Ranked<RankRun>>) -> Result<(DistRun, Option<DistError>), DistError> {
    let failed = first_error(&ranks);
    let mut hosts = Vec::new();
    let mut runs = Vec::new();
    for (r, mut k) in ranks.into_iter().enumerate() {
        let mut h = k.host(r);
        if let Ok(done) = &mut k.outcome {
            if k.finished {
                super::rank::stonewalled(&mut done.run);
            }
            h.finished(&done.run, Some(done.env.clone()));
        }
        hosts.push(h);
        runs.push(k.outcome.ok().map(|d| d.run));
    }
    let names: Vec<String> = hosts.iter().map(|h| h.hostname.clone()).collect();
    match merge::merge(&runs, &names) {
        Some(run) => Ok((DistRun { run, hosts }, failed)),
        None => Err(failed.unwrap_or_else(|| usage("no rank sent results"))),
    }
}

/// Runs `args` (the job arguments of `iolab run`) as this MPI rank. Rank 0
/// returns the merged run (and the first failed rank's error); the others
/// `None`.
#[cfg(feature = "mpi")]
pub fn run(
    args: &[String],
    stonewall: bool,
    stop: &crate::runner::StopFlag,
) -> crate::Result<Option<(DistRun, Option<DistError>)>> {
    let ranks = ranks::run_ranks(stonewall, stop, |me, gate| {
        super::rank::run(args, me.rank, stop, gate)
    })?;
    ranks.map(gather_runs).transpose().map_err(Into::into)
}

#[cfg(feature = "mpi")]
pub use ranks::run_ranks;
