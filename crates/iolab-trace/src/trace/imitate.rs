//! `iolab trace export --format job --run DIR`: the derived job run by
//! iolab on files laid out in DIR, and what it did set beside what the
//! trace did, per file and direction (the I/Os the job logged, as
//! `write_iolog` has them, analysed as the trace's events are).

use super::TraceResult as Result;
use super::calls;
use super::iolog;
use super::job::{self, JobFile};
use super::model::{Event, Trace};
use super::pattern::{self, DirPattern};
use crate::runner::{self, RunOptions, RunResult, StopFlag};
use std::path::Path;

/// What one direction of one file came to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Side {
    /// Calls that moved data.
    pub ops: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Median bytes per call.
    pub size_p50: u64,
    /// 90th percentile of bytes per call.
    pub size_p90: u64,
    /// Share (0..=1) of calls at a random offset.
    pub random_share: f64,
    /// Sizes by share of calls, as `bssplit` writes them.
    pub bssplit: String,
}

impl Side {
    fn of(d: &DirPattern) -> Side {
        Side {
            ops: d.sizes.count(),
            bytes: d.bytes,
            size_p50: d.sizes.percentile(50.0),
            size_p90: d.sizes.percentile(90.0),
            random_share: d.random_share(),
            bssplit: job::bssplit(d),
        }
    }
}

/// One file and direction: the trace beside the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The file as traced.
    pub path: String,
    /// `read` or `write`.
    pub dir: &'static str,
    /// What the traced program did.
    pub trace: Side,
    /// What the job did.
    pub run: Side,
}

/// The job, its run and the comparison.
#[derive(Debug)]
pub struct Imitation {
    /// The job as derived (without the logs the run added).
    pub job: JobFile,
    /// The run.
    pub result: RunResult,
    /// Per file and direction the trace did I/O in.
    pub rows: Vec<Row>,
}

/// Derives the job of `t` with its files in `dir` (iolab lays out those
/// missing), runs it, and compares what it did with the trace.
pub fn run(t: &Trace, dir: &Path, stop: &StopFlag) -> Result<Imitation> {
    let dir = std::path::absolute(dir).map_err(|e| super::TraceError::io(dir, e))?;
    let job = job::derive(t, Some(&dir))?;
    std::fs::create_dir_all(&dir).map_err(|e| super::TraceError::io(&dir, e))?;
    let work = tempfile::tempdir()
        .map_err(|e| iolab_runner::Error::io("making a directory for the job file", e))?;
    let mut logged = job.clone();
    logged.log_to(work.path());
    let path = work.path().join("imitate.fio");
    std::fs::write(&path, logged.text()).map_err(|e| super::TraceError::io(&path, e))?;
    let jobs = crate::job::jobs_from_args(&[path.display().to_string()])?;
    let result = runner::run(jobs, &RunOptions::default(), stop)?.complete(stop)?;
    let ran = ran(&result)?;
    let names = iolog::names(t, Some(&dir));
    let theirs = pattern::by(t, |e| e.file);
    let ours = pattern::by(&ran, |e| e.file);
    let mut rows = Vec::new();
    for (f, p) in &theirs {
        if !job::is_file(&t.paths[*f as usize]) {
            continue; // pipes and sockets are not in the job
        }
        let name = &names[*f as usize];
        let run = ran
            .paths
            .iter()
            .position(|n| n == name)
            .and_then(|i| ours.get(&(i as u32)));
        for (dir, d) in [("read", &p.read), ("write", &p.write)] {
            if d.sizes.count() == 0 {
                continue;
            }
            let r = run.map(|r| if dir == "read" { &r.read } else { &r.write });
            rows.push(Row {
                path: t.paths[*f as usize].clone(),
                dir,
                trace: Side::of(d),
                run: r.map(Side::of).unwrap_or_default(),
            });
        }
    }
    rows.sort_by(|a, b| b.trace.bytes.cmp(&a.trace.bytes).then(a.path.cmp(&b.path)));
    Ok(Imitation { job, result, rows })
}

/// What each clone of `r` did, as the events of a trace: one thread per
/// clone, its I/Os (as its `write_iolog` logged them) as pread64 and
/// pwrite64 at their submission time.
fn ran(r: &RunResult) -> Result<Trace> {
    let mut t = Trace::default();
    let call = |name: &str| calls::by_name(name).map_or(0, |(id, _)| id);
    let (read, write) = (call("pread64"), call("pwrite64"));
    let mut tid = 0;
    for rep in &r.repetitions {
        for c in &rep.clones {
            tid += 1;
            let files = r
                .files
                .get(c.job)
                .and_then(|f| f.get(c.clone as usize))
                .map_or(&[][..], Vec::as_slice);
            let index: Vec<u32> = files
                .iter()
                .map(|f| {
                    let name = f.display().to_string();
                    match t.paths.iter().position(|p| *p == name) {
                        Some(i) => i as u32,
                        None => {
                            t.paths.push(name);
                            t.paths.len() as u32 - 1
                        }
                    }
                })
                .collect();
            for log in &c.totals.io_logs {
                log.for_each(|e| {
                    if e.ddir < 2 {
                        t.events.push(Event {
                            t_ns: e.t_ns.saturating_sub(e.lat),
                            tid,
                            call: if e.ddir == 0 { read } else { write },
                            file: index.get(usize::from(e.file)).copied(),
                            offset: Some(e.offset),
                            len: u64::from(e.len),
                            result: i64::from(e.len),
                            lat_ns: e.lat,
                            ..Event::default()
                        });
                    }
                    Ok(())
                })
                .map_err(|e| iolab_runner::Error::io("reading back the I/Os the run logged", e))?;
            }
        }
    }
    Ok(t)
}
