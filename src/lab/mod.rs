//! Labs: the classic I/O experiments of the seeds as ready commands. A lab
//! prepares its files in a scratch directory, runs the comparison the
//! write-up made by hand, stores every run, and returns the answer: a table,
//! one sentence with the measured numbers, text histograms and charts.
//! Labs never print; they report progress through [`LabCtx::progress`].

pub mod cached_reads;
pub mod log_scan;
pub mod metadata;
pub mod prefetch;
pub mod small_reads;

use crate::error::{Error, Result};
use crate::render::chart::Chart;
use crate::render::table::Table;
use crate::runner::{self, RunOptions, RunResult, StopFlag};
use crate::store::Store;
use std::path::{Path, PathBuf};

/// What a lab may use.
pub struct LabCtx<'a> {
    /// Scratch directory for its files (exists, removed by the caller).
    pub dir: PathBuf,
    /// Small sizes: done in under a minute.
    pub quick: bool,
    /// Override of the main file size.
    pub size: Option<u64>,
    /// Override of the number of operations per run.
    pub ops: Option<u64>,
    /// Ctrl-C.
    pub stop: &'a StopFlag,
    /// Where runs are stored (None: --no-store).
    pub store: Option<&'a mut Store>,
    /// Progress lines for the user.
    pub progress: &'a mut dyn FnMut(&str),
}

/// What a lab found.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Lab name.
    pub lab: &'static str,
    /// Heading.
    pub title: String,
    /// What it did, in a few lines (sizes, counts, cache handling).
    pub setup: Vec<String>,
    /// The result table.
    pub table: Table,
    /// The effect in one sentence, with the measured numbers.
    pub answer: String,
    /// Extra text (log2 histograms, notes).
    pub text: Vec<String>,
    /// Charts by file stem.
    pub charts: Vec<(String, Chart)>,
    /// Files the lab made for the user (flamegraph), by description.
    pub files: Vec<(String, PathBuf)>,
    /// Stored run ids.
    pub runs: Vec<i64>,
}

impl Outcome {
    /// An empty outcome for `lab`.
    pub fn new(lab: &'static str, title: impl Into<String>, table: Table) -> Outcome {
        Outcome {
            lab,
            title: title.into(),
            setup: Vec::new(),
            table,
            answer: String::new(),
            text: Vec::new(),
            charts: Vec::new(),
            files: Vec::new(),
            runs: Vec::new(),
        }
    }
}

/// One experiment.
pub trait Lab {
    /// Command name (`prefetch`).
    fn name(&self) -> &'static str;
    /// One line for `lab list`.
    fn about(&self) -> &'static str;
    /// What it runs and what `--size`/`--ops` mean for it.
    fn details(&self) -> &'static str;
    /// Runs it.
    fn run(&self, ctx: &mut LabCtx) -> Result<Outcome>;
}

/// Every lab, in the order of the seeds.
pub fn all() -> Vec<Box<dyn Lab>> {
    vec![
        Box::new(prefetch::Prefetch),
        Box::new(cached_reads::CachedReads),
        Box::new(small_reads::SmallReads),
        Box::new(metadata::Metadata),
        Box::new(log_scan::LogScan),
    ]
}

/// The lab called `name`.
pub fn find(name: &str) -> Option<Box<dyn Lab>> {
    all().into_iter().find(|l| l.name() == name)
}

impl LabCtx<'_> {
    /// The main file size: `--size`, else `quick` or `full`, capped at a
    /// quarter of the free space of the scratch directory.
    pub fn size(&self, quick: u64, full: u64) -> u64 {
        let want = self.size.unwrap_or(if self.quick { quick } else { full });
        let cap = free_disk(&self.dir) / 4;
        if self.size.is_none() && cap > 0 {
            want.min(cap).max(1 << 20)
        } else {
            want
        }
    }

    /// Operations per run: `--ops`, else `quick` or `full`.
    pub fn ops(&self, quick: u64, full: u64) -> u64 {
        self.ops.unwrap_or(if self.quick { quick } else { full })
    }

    /// Runs fio-style job options; stores the run with label `lab:NAME`.
    pub fn run_job(&mut self, lab: &str, args: &[String]) -> Result<(RunResult, Option<i64>)> {
        if self.stop.is_set() {
            return Err(Error::Interrupted);
        }
        let jobs = crate::job::jobs_from_args(args).map_err(Error::Input)?;
        let r = runner::run(jobs, &RunOptions::default(), self.stop)?;
        if r.interrupted {
            return Err(Error::Interrupted);
        }
        if let Some(e) = r.errors().into_iter().next() {
            return Err(Error::Tool(e));
        }
        let id = self.store_run(lab, &r, args)?;
        Ok((r, id))
    }

    fn store_run(&mut self, lab: &str, r: &RunResult, args: &[String]) -> Result<Option<i64>> {
        let Some(st) = self.store.as_deref_mut() else {
            return Ok(None);
        };
        let cmd = format!("iolab lab {lab}: iolab run {}", args.join(" "));
        st.insert_run(r, &cmd, Some(&format!("lab:{lab}")), None)
            .map(Some)
            .map_err(|e| Error::Tool(e.to_string()))
    }

    /// Stores a tree result with label `lab:NAME`.
    pub fn store_tree(&mut self, lab: &str, t: &crate::tree::TreeResult) -> Result<Option<i64>> {
        let Some(st) = self.store.as_deref_mut() else {
            return Ok(None);
        };
        st.insert_tree(
            t,
            &format!("iolab lab {lab}: tree {}", t.command),
            Some(&format!("lab:{lab}")),
        )
        .map(Some)
        .map_err(|e| Error::Tool(e.to_string()))
    }

    /// Says what is happening.
    pub fn say(&mut self, msg: &str) {
        (self.progress)(msg);
    }
}

/// Free bytes of the file system holding `dir` (0 if unknown).
pub fn free_disk(dir: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return 0;
    };
    // SAFETY: statvfs fills the zeroed struct for a valid path.
    unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut s) != 0 {
            return 0;
        }
        s.f_bavail * s.f_frsize
    }
}

/// Available memory (`MemAvailable`) in bytes.
pub fn free_ram() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// A path argument for job options.
pub fn arg(key: &str, v: impl std::fmt::Display) -> String {
    format!("--{key}={v}")
}

/// `x` microseconds from ns, for tables.
pub fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}
