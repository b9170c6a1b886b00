//! Sweeps: one job run at every point of the cross product of `--vary`
//! values (seed 002's thread loop, done by iolab instead of by hand), every
//! point stored as a run of one sweep, each summarised for the table and
//! the plot (which `render::sweep` draws).

use super::error::{AnalysisError as Error, AnalysisResult as Result};
use super::vary::{Vary, parse_vary, points};
use crate::job::{self, JobSpec, options};
use crate::metrics::figures::{METRICS, MetricDef, Summary, metric};
use crate::runner::{self, NoObserver, Progress, RunOptions, StopFlag};
use crate::store::{StoreError, Target};
use std::collections::BTreeMap;

/// One point: each swept key and its value there.
pub type Point = BTreeMap<String, String>;

/// A sweep whose every point was checked before anything runs.
#[derive(Debug)]
pub struct Sweep {
    /// The swept keys, in the order given (the first varies slowest).
    pub vary: Vec<Vary>,
    /// Each point and the jobs it runs.
    pub points: Vec<(Point, Vec<JobSpec>)>,
}

/// A point that ran.
#[derive(Debug, Clone)]
pub struct Done {
    /// Where in the sweep.
    pub point: Point,
    /// Its key figures (one sample per repetition).
    pub summary: Summary,
    /// The stored run, when stored.
    pub run: Option<i64>,
}

/// What a sweep did: the points that ran, and why it stopped early if it did.
#[derive(Debug)]
pub struct SweepResult {
    /// The swept keys.
    pub vary: Vec<Vary>,
    /// Points that ran, in order.
    pub done: Vec<Done>,
    /// The stored sweep, when stored.
    pub sweep_id: Option<i64>,
    /// How many points the sweep has.
    pub total: usize,
    /// The error that stopped it (a failed point, Ctrl-C).
    pub failure: Option<Error>,
    /// The first point that ran but could not be stored (the sweep goes
    /// on: the measurement is still shown).
    pub not_stored: Option<StoreError>,
}

/// `numjobs=2 bs=4k`.
pub fn show_point(p: &Point) -> String {
    p.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

impl Sweep {
    /// Parses `--vary` arguments and builds every point's jobs from
    /// `job_args` (job files and fio options, as for `iolab run`), with
    /// `repeat` repetitions per point when given.
    pub fn new(job_args: &[String], vary: &[String], repeat: Option<u32>) -> Result<Sweep> {
        let vary: Vec<Vary> = vary.iter().map(|v| parse_vary(v)).collect::<Result<_>>()?;
        check_keys(&vary, job_args)?;
        let points = points(&vary)?
            .into_iter()
            .map(|p| {
                let jobs = point_jobs(job_args, &p, repeat)?;
                Ok((p, jobs))
            })
            .collect::<Result<_>>()?;
        Ok(Sweep { vary, points })
    }

    /// Runs every point in order, storing each into `target` as a point of
    /// one sweep; stops at the first failure or on `stop`.
    pub fn run(
        self,
        mut target: Option<Target<'_>>,
        stop: &StopFlag,
        progress: &mut dyn Progress,
    ) -> Result<SweepResult> {
        let total = self.points.len();
        let sweep_id = match &mut target {
            Some(t) => {
                let v = serde_json::json!(
                    self.vary
                        .iter()
                        .map(|v| (v.key.clone(), v.values.clone()))
                        .collect::<BTreeMap<_, _>>()
                );
                Some(t.store.new_sweep(t.label, t.command, &v)?)
            }
            None => None,
        };
        let mut out = SweepResult {
            vary: self.vary,
            done: Vec::new(),
            sweep_id,
            total,
            failure: None,
            not_stored: None,
        };
        for (i, (point, jobs)) in self.points.into_iter().enumerate() {
            progress.step(&format!(
                "sweep point {}/{total}: {}",
                i + 1,
                show_point(&point)
            ));
            let result = match runner::run_with(
                jobs,
                &RunOptions::default(),
                stop,
                &mut NoObserver,
                progress,
            )
            .and_then(|r| r.complete(stop))
            {
                Ok(r) => r,
                Err(e) => {
                    out.failure = Some(e.into());
                    break;
                }
            };
            for w in &result.warnings {
                progress.warning(w);
            }
            let run = match (&mut target, sweep_id) {
                (Some(t), Some(sid)) => {
                    match t
                        .store
                        .insert_run(&result, t.command, t.label, Some((sid, &point)))
                    {
                        Ok(id) => Some(id),
                        Err(e) => {
                            out.not_stored.get_or_insert(e);
                            None
                        }
                    }
                }
                _ => None,
            };
            out.done.push(Done {
                summary: result.summary(),
                point,
                run,
            });
        }
        Ok(out)
    }
}

/// A swept key must be a job option or a `${variable}` the job uses.
fn check_keys(vary: &[Vary], job_args: &[String]) -> Result<()> {
    let mut text = job_args.join("\n");
    for a in job_args.iter().filter(|a| !a.starts_with('-')) {
        text.push_str(&std::fs::read_to_string(a).unwrap_or_default());
    }
    for v in vary {
        if options::lookup(&v.key).is_none() && !text.contains(&format!("${{{}}}", v.key)) {
            return Err(Error::usage(
                format!("--vary {}", v.key),
                format!(
                    "{} and the job does not use ${{{}}}",
                    options::unknown_message(&v.key),
                    v.key
                ),
            ));
        }
    }
    Ok(())
}

/// The jobs of one point: `${KEY}` replaced in the arguments and job files,
/// swept job options set on every job.
fn point_jobs(job_args: &[String], point: &Point, repeat: Option<u32>) -> Result<Vec<JobSpec>> {
    let args: Vec<String> = job_args
        .iter()
        .map(|a| {
            point
                .iter()
                .fold(a.clone(), |s, (k, v)| s.replace(&format!("${{{k}}}"), v))
        })
        .collect();
    let at = |e: job::JobError| {
        Error::usage(format!("sweep point {}", show_point(point)), e.to_string())
    };
    let mut jobs = job::jobs_from_args_with(&args, point).map_err(at)?;
    for job in &mut jobs {
        for (k, v) in point {
            if let Some(def) = options::lookup(k) {
                *job = job.with_option(def.name, v).map_err(at)?;
            }
        }
        if let Some(n) = repeat {
            *job = job.with_option("repeat", &n.to_string()).map_err(at)?;
        }
    }
    job::check_clones(&jobs, job::MAX_JOBS).map_err(at)?;
    Ok(jobs)
}

/// The key figure `key`, or an error for `option` listing them all.
pub fn metric_named(option: &str, key: &str) -> Result<&'static MetricDef> {
    metric(key).ok_or_else(|| {
        let all: Vec<&str> = METRICS.iter().map(|m| m.key).collect();
        Error::usage(
            format!("{option} '{key}'"),
            format!("not a key figure ({})", all.join(", ")),
        )
    })
}
