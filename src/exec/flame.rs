//! `--flamegraph FILE`: each run profiled by perf (attached to the held
//! command before it `exec`s, so its start is in), the samples folded;
//! drawn as one flamegraph of every run, and as differential flamegraphs:
//! the first run against the rest (seed 001: what does a first run spend
//! its extra time on), A against B (`compare --exec`).

use super::error::Result;
use crate::profile::flamegraph as fg;
use iolab_runner::Error;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The folded samples of one run (`frame;frame count` lines).
pub type Profile = String;

/// perf recording one run.
pub struct Recording(fg::Profiler);

/// Refuses `--flamegraph` without perf before anything runs.
pub fn check() -> Result<()> {
    fg::find_perf().map(|_| ()).ok_or_else(|| {
        Error::tool(
            "perf",
            "--flamegraph needs perf, which is not installed (Debian: apt-get install linux-perf)",
        )
        .into()
    })
}

/// Starts perf on process `pid` (and the children it starts).
pub fn attach(pid: u32) -> Result<Recording> {
    Ok(fg::Profiler::attach(pid).map(Recording)?)
}

impl Recording {
    /// Stops perf; the run's folded samples.
    pub fn finish(self) -> Result<Profile> {
        Ok(self.0.finish_folded()?)
    }
}

/// The pictures written.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Written {
    /// Every run's samples together (or, for A/B, the difference).
    pub path: PathBuf,
    /// The first run against the others, when there were several.
    pub diff: Option<PathBuf>,
    /// Distinct stacks drawn in `path`.
    pub stacks: usize,
}

/// `FILE.svg` -> `FILE.first-vs-rest.svg`.
pub fn diff_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let ext = path
        .extension()
        .map_or("svg".into(), |e| e.to_string_lossy());
    path.with_file_name(format!("{stem}.first-vs-rest.{ext}"))
}

/// Writes the flamegraph of every run to `path` and, with two runs or
/// more, the first against the rest beside it ([`diff_path`]).
pub fn write_runs(profiles: &[Profile], path: &Path, title: &str) -> Result<Written> {
    let all: String = profiles.concat();
    let (svg, stacks) = fg::render_folded(&all, title)?;
    crate::sys::fs::write_atomic(path, &svg)?;
    let diff = match profiles {
        [first, rest @ ..] if !rest.is_empty() => {
            let p = diff_path(path);
            let title = format!("{title}: later runs against the first (red: more in later runs)");
            let (svg, _) = fg::render_diff(first, &rest.concat(), &title)?;
            crate::sys::fs::write_atomic(&p, &svg)?;
            Some(p)
        }
        _ => None,
    };
    Ok(Written {
        path: path.to_path_buf(),
        diff,
        stacks,
    })
}

/// Writes the differential flamegraph of B against A to `path`: B's
/// stacks, red where B spent more than A (A scaled to B's samples).
pub fn write_ab(a: &[Profile], b: &[Profile], path: &Path, title: &str) -> Result<Written> {
    let (svg, stacks) = fg::render_diff(&a.concat(), &b.concat(), title)?;
    crate::sys::fs::write_atomic(path, &svg)?;
    Ok(Written {
        path: path.to_path_buf(),
        diff: None,
        stacks,
    })
}
