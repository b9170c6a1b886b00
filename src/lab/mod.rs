//! Labs: the classic I/O experiments of the seeds as ready commands. A lab
//! prepares its files in a scratch directory, runs the comparison the
//! write-up made by hand, stores every run, and returns the answer: a table,
//! one sentence with the measured numbers, text histograms and charts.
//! Labs never print; they report progress through [`LabCtx::progress`].
//! A new lab is one file here and one line in [`LABS`].

pub mod cached_reads;
pub mod log_scan;
pub mod metadata;
pub mod page;
pub mod prefetch;
pub mod reference;
pub mod session;
pub mod small_reads;

use crate::error::{Error, Result};
use crate::explain::{self, Explanation, ceilings, evidence::Evidence};
use crate::job::CachePolicy;
use crate::registry::{self, Entry, entry};
use crate::render::chart::Chart;
use crate::render::table::Table;
use crate::runner::{self, NoObserver, Progress, RunOptions, RunResult, StopFlag};
use crate::store::Store;
use crate::sys::environment::Environment;
use std::path::{Path, PathBuf};

/// Every lab, in the order of the seeds: name, aliases, what it needs, one line of help.
pub static LABS: &[Entry<dyn Lab>] = &[
    entry("prefetch", &[], "", prefetch::ABOUT, &prefetch::Prefetch),
    entry(
        "cached-reads",
        &[],
        "perf for the flamegraph (optional)",
        cached_reads::ABOUT,
        &cached_reads::CachedReads,
    ),
    entry(
        "small-reads",
        &[],
        "",
        small_reads::ABOUT,
        &small_reads::SmallReads,
    ),
    entry(
        "metadata",
        &[],
        "root for a cold dentry and inode cache",
        metadata::ABOUT,
        &metadata::Metadata,
    ),
    entry("log-scan", &[], "", log_scan::ABOUT, &log_scan::LogScan),
];

/// What a lab may use.
pub struct LabCtx<'a> {
    /// The lab's name (its runs are stored with label `lab:NAME`).
    pub lab: &'static str,
    /// Scratch directory for its files (exists, removed by the caller).
    pub dir: PathBuf,
    /// Small sizes: done in under a minute.
    pub quick: bool,
    /// Override of the main file size.
    pub size: Option<u64>,
    /// Override of the number of operations per run.
    pub ops: Option<u64>,
    /// Delays of injected slow disks to repeat the lab on (`--delay`).
    pub delays: &'a [String],
    /// Also run the bare reference loop beside iolab's runs (`--reference`).
    pub reference: bool,
    /// Ctrl-C.
    pub stop: &'a StopFlag,
    /// Where runs are stored (None: --no-store).
    pub store: Option<&'a mut Store>,
    /// Where the lab says what it is doing.
    pub progress: &'a mut dyn Progress,
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
pub trait Lab: Sync {
    /// What it runs and what `--size`/`--ops` mean for it (`--help`).
    fn details(&self) -> &'static str;
    /// Runs it.
    fn run(&self, ctx: &mut LabCtx) -> Result<Outcome>;

    /// True when it repeats itself on injected slow disks (`--delay`).
    fn takes_delays(&self) -> bool {
        false
    }

    /// True when it can run a bare reference loop beside its runs
    /// (`--reference`).
    fn takes_reference(&self) -> bool {
        false
    }
}

/// The lab called `name`, or an error listing the labs there are.
pub fn find(name: &str) -> Result<&'static Entry<dyn Lab>> {
    registry::find(LABS, name).ok_or_else(|| {
        Error::usage(
            format!("lab '{name}'"),
            registry::unknown("lab", name, LABS),
        )
    })
}

impl LabCtx<'_> {
    /// The main file size: `--size`, else `quick` or `full`, capped at a
    /// quarter of the free space of the scratch directory.
    pub fn size(&self, quick: u64, full: u64) -> u64 {
        let want = self.size.unwrap_or(if self.quick { quick } else { full });
        let cap = crate::sys::machine::free_disk(&self.dir) / 4;
        if self.size.is_none() && cap > 0 {
            want.min(cap).max(1 << 20)
        } else {
            want
        }
    }

    /// Refuses a scratch directory whose files live only in memory (tmpfs,
    /// ramfs): their pages cannot be evicted, so a cold read is a cached one.
    pub fn need_eviction(&self) -> Result<()> {
        match crate::sys::fs::memory_only(&self.dir) {
            Some(fs) => Err(Error::usage(
                format!("lab {}: scratch directory {}", self.lab, self.dir.display()),
                format!(
                    "is on {fs}, which keeps files only in memory: their pages cannot be evicted, \
                     so this lab cannot measure cold reads there; give a --dir on a disk-backed file system"
                ),
            )),
            None => Ok(()),
        }
    }

    /// Evicts `path` from the page cache and checks that it left: a lab
    /// that measured a "cold" read of cached pages would report a false
    /// effect.
    pub fn evict(&self, path: &Path) -> Result<()> {
        crate::sys::pagecache::evict(path)
            .map_err(|e| Error::io(format!("evict {}", path.display()), e))?;
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let left = crate::runner::cache::measure(path, 0, len);
        self.still_cached(&left)
    }

    /// An error when more than 1% of the pages of `f` are cached.
    fn still_cached(&self, f: &crate::runner::cache::FileCache) -> Result<()> {
        match &f.state {
            Some(s) if s.cached * 100 > s.pages => Err(Error::tool(
                "page cache",
                format!(
                    "lab {}: {} of {} pages of {} are still cached after eviction \
                     (mapped, locked or dirty elsewhere?); cold reads cannot be measured",
                    self.lab,
                    s.cached,
                    s.pages,
                    f.path.display()
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Operations per run: `--ops`, else `quick` or `full`.
    pub fn ops(&self, quick: u64, full: u64) -> u64 {
        self.ops.unwrap_or(if self.quick { quick } else { full })
    }

    /// Runs fio-style job options; stores the run with label `lab:NAME`.
    pub fn run_job(&mut self, args: &[String]) -> Result<(RunResult, Option<i64>)> {
        if self.stop.is_set() {
            return Err(crate::Error::interrupted(self.stop));
        }
        let jobs = crate::job::jobs_from_args(args)?;
        let cold: Vec<bool> = jobs.iter().map(|j| j.cache == CachePolicy::Cold).collect();
        let r = runner::run_with(
            jobs,
            &RunOptions::default(),
            self.stop,
            &mut NoObserver,
            &mut *self.progress,
        )?
        .complete(self.stop)?;
        for rep in &r.repetitions {
            for (j, files) in rep.cache_before.iter().enumerate() {
                if cold[j] {
                    files.iter().try_for_each(|f| self.still_cached(f))?;
                }
            }
        }
        let id = self.store_run(&r, args)?;
        Ok((r, id))
    }

    /// Why run `r` (stored as `id`) went as it did: its evidence held
    /// against this machine's ceilings (`iolab explain`).
    pub fn explain(&self, r: &RunResult, id: Option<i64>) -> Explanation {
        self.explain_reps(r, id, 0..r.repetitions.len())
    }

    /// The same for repetitions `reps` of `r` alone.
    pub fn explain_reps(
        &self,
        r: &RunResult,
        id: Option<i64>,
        reps: std::ops::Range<usize>,
    ) -> Explanation {
        let files: Vec<PathBuf> = r.files.iter().flatten().flatten().cloned().collect();
        let env = Environment::capture(&files, crate::disk::state::injected_at);
        let found = (self.store.as_deref())
            .and_then(|st| ceilings::find(st, &env).ok())
            .unwrap_or_default();
        explain::explain(Evidence::of_reps(r, &env, reps), found, id)
    }

    fn store_run(&mut self, r: &RunResult, args: &[String]) -> Result<Option<i64>> {
        let lab = self.lab;
        let Some(st) = self.store.as_deref_mut() else {
            return Ok(None);
        };
        let cmd = format!("iolab lab {lab}: iolab run {}", args.join(" "));
        Ok(Some(st.insert_run(
            r,
            &cmd,
            Some(&format!("lab:{lab}")),
            None,
        )?))
    }

    /// Stores a tree result with label `lab:NAME`.
    pub fn store_tree(&mut self, t: &crate::tree::TreeResult) -> Result<Option<i64>> {
        let lab = self.lab;
        let Some(st) = self.store.as_deref_mut() else {
            return Ok(None);
        };
        Ok(Some(st.insert_tree(
            t,
            &format!("iolab lab {lab}: tree {}", t.command),
            Some(&format!("lab:{lab}")),
        )?))
    }

    /// Says what is happening.
    pub fn say(&mut self, msg: &str) {
        self.progress.step(msg);
    }
}

/// A path argument for job options.
pub fn arg(key: &str, v: impl std::fmt::Display) -> String {
    format!("--{key}={v}")
}

/// `x` microseconds from ns, for tables.
pub fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}
