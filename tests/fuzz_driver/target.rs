//! What one input goes through: iolab's parser (job-file text or a command
//! line), the options and the rules between them, then the planner of each
//! job over the region its size gives, for a bounded number of I/Os whose
//! bounds are checked. In-process and without I/O but for reading job
//! files: an `include` or a job file named on a command line is read (a
//! job file's text claims to be in `tests/fixtures/fuzz/jobs`, where its
//! relative includes resolve).

use iolab::job::{self, JobSpec, Mix, ini};
use iolab::plan::{PlanParams, Planner, Region, tables_fit};
use std::path::Path;

/// One fuzz input.
#[derive(Debug, Clone)]
pub enum Input {
    /// The text of a job file.
    JobFile(String),
    /// The job arguments of `iolab run`.
    Args(Vec<String>),
}

/// Where a job file's text claims to come from (a file that is not
/// there, in the directory of the corpus's job files).
const JOB_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/fuzz/jobs/input.fio"
);

/// The region of a job without `size` (the runner would use the file's).
const NO_SIZE: u64 = 16 << 20;

/// I/Os drawn from each job's planner.
const UNITS: usize = 256;

/// What happened to an input, for the statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Refused with an error (its message was formatted).
    Refused,
    /// Accepted: this many jobs were planned.
    Planned(usize),
}

/// Runs `input` through parse, validate and plan. Panics on a broken
/// invariant (the driver catches and counts them).
pub fn exercise(input: &Input) -> Outcome {
    let jobs = match input {
        Input::JobFile(text) => {
            let vars = ini::Vars::from([("IOLAB_FUZZ_SIZE".to_string(), "1m".to_string())]);
            ini::parse_text(text, Path::new(JOB_PATH), &vars).and_then(|sections| {
                let mut jobs = Vec::new();
                job::jobs_of_sections(sections, Vec::new(), &mut jobs, job::MAX_JOBS)?;
                job::check_clones(&jobs, job::MAX_JOBS).map(|()| jobs)
            })
        }
        Input::Args(args) => job::jobs_from_args(args),
    };
    match jobs {
        Ok(jobs) => {
            // As the runner: the files laid out, one budget for the tables
            // of every clone, then each job's clone 0 planned.
            let laid_out: Vec<(&JobSpec, Vec<Region>)> = (jobs.iter())
                .filter_map(|job| Some((job, regions(job)?)))
                .collect();
            let clones = (laid_out.iter()).flat_map(|(job, r)| {
                std::iter::repeat_n((*job, r.as_slice()), job.numjobs as usize)
            });
            let tables = tables_fit(clones);
            for (job, regions) in laid_out {
                plan(job, regions, tables);
            }
            Outcome::Planned(jobs.len())
        }
        Err(e) => {
            assert!(!e.to_string().is_empty(), "an error says what is wrong");
            Outcome::Refused
        }
    }
}

/// The regions of `job`'s files as the runner's layout makes them: each
/// file's part of size, or the rest of a file of [`NO_SIZE`] bytes; `None`
/// where the layout refuses the job (an offset past the file, bs past the
/// region).
fn regions(job: &JobSpec) -> Option<Vec<Region>> {
    let files = job.filenames.len().max(1);
    let len = match job.size {
        Some(size) => size / files as u64,
        None if job.offset < NO_SIZE => NO_SIZE - job.offset,
        None => return None,
    };
    let region = Region {
        start: job.offset,
        len,
    };
    (job.bs_min <= len).then(|| vec![region; files])
}

/// Draws the first I/Os of clone 0 of `job` over `regions`, as the runner
/// would, and checks each stays in its file's region.
fn plan(job: &JobSpec, regions: Vec<Region>, tables: bool) {
    let (files, region) = (regions.len(), regions[0]);
    let end = (region.start)
        .checked_add(region.len)
        .expect("a valid job's offset + size fits in 64 bits");
    let planner = Planner::new(PlanParams::of_clone(job, regions, 0, tables));
    for io in planner.take(UNITS) {
        let io_end = io.offset + u64::from(io.len);
        assert!((io.file as usize) < files, "file {} of {files}", io.file);
        assert!(
            io.offset >= region.start && io_end <= end,
            "I/O {}+{} outside {region:?}",
            io.offset,
            io.len
        );
        assert!(
            io.len >= 1 && u64::from(io.len) <= job.bs_max,
            "length {} with bs {}-{}",
            io.len,
            job.bs_min,
            job.bs_max
        );
        match job.mix {
            Mix::Read => assert!(!io.write && !io.trim, "a write in a read job"),
            Mix::Write => assert!(io.write, "a read in a write job"),
            Mix::Trim => assert!(io.trim && !io.write, "no trim in a trim job"),
            Mix::Mixed | Mix::TrimWrite => assert!(!(io.trim && io.write), "a trim that writes"),
        }
    }
}
