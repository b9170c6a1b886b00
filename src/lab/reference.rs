//! `lab prefetch --reference`: the bare loop the lab's runs imitate (seed
//! 000's C program): plain `pread` and `posix_fadvise(WILLNEED)` calls N
//! reads ahead over the same offsets as the iolab run, nothing timed per
//! call and nothing recorded, so the lab can set its own speed-up beside
//! the program's, measured in the same rounds.

use crate::error::{Error, Result};
use crate::job::{self, JobSpec};
use crate::plan::planner::Planner;
use crate::plan::unit::{PlanParams, Region};
use crate::sys::pagecache;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Instant;

/// The reads (offset, length) the job of `args` does on its one file of
/// `size` bytes, in order: what its first clone's planner draws.
pub fn reads(args: &[String], size: u64) -> Result<Vec<(u64, usize)>> {
    let jobs: Vec<JobSpec> = job::jobs_from_args_in(args, 1, &[])?;
    let job = jobs
        .first()
        .ok_or_else(|| Error::usage("--reference", "no job"))?;
    let mut p = Planner::new(PlanParams::of_clone(
        job,
        vec![Region {
            start: 0,
            len: size,
        }],
        0,
        true,
    ));
    let mut io = crate::engine::IoUnit::default();
    let mut out = Vec::new();
    while p.next_into(&mut io) {
        out.push((io.offset, io.len as usize));
    }
    Ok(out)
}

/// Reads `reads` of `path` with `prefetch` reads advised ahead, its pages
/// evicted first (not timed); the reads per second.
pub fn bare(path: &Path, reads: &[(u64, usize)], prefetch: usize) -> Result<f64> {
    let io = |what: &str, e: std::io::Error| {
        Error::io(format!("reference loop: {what} {}", path.display()), e)
    };
    pagecache::evict(path).map_err(|e| io("evict", e))?;
    let f = File::open(path).map_err(|e| io("open", e))?;
    pagecache::random_access(&f).map_err(|e| io("fadvise", e))?;
    let mut buf = vec![0u8; reads.iter().map(|r| r.1).max().unwrap_or(0)];
    let advise = |i: usize| match reads.get(i) {
        Some(&(off, len)) => pagecache::will_need(&f, off, len as u64),
        None => Ok(()),
    };
    let t0 = Instant::now();
    for i in 0..prefetch {
        advise(i).map_err(|e| io("fadvise", e))?;
    }
    for (i, &(off, len)) in reads.iter().enumerate() {
        if prefetch > 0 {
            advise(i + prefetch).map_err(|e| io("fadvise", e))?;
        }
        f.read_exact_at(&mut buf[..len], off)
            .map_err(|e| io("pread", e))?;
    }
    Ok(reads.len() as f64 / t0.elapsed().as_secs_f64())
}
