//! A/B comparison over repetitions: per key figure the mean and spread of
//! each side, the change from A to B in percent, and Welch's t-test of
//! whether the difference is more than noise (seed 003's before/after
//! tables, with the statistics the seed did not have); the verdict on the
//! headline figure; each side checked to be one workload (its runs'
//! fingerprints), and the environments of A and B told apart.

pub use super::difference::{ALPHA, MIN_EFFECT_PCT, MIN_RUNS, Outcome, Row};
use super::env_diff::{self, EnvDiff, EnvFacts};
use super::error::{AnalysisError as Error, AnalysisResult as Result};
use super::fingerprint::{self, FieldDiff, Fingerprint, MixedWorkloads, UnlikeTraces};
use super::verdict::{self, Verdict};
use crate::job;
use crate::metrics::figures::{Better, Figures, METRICS, metric};
use crate::runner::{self, NoObserver, Progress, RunOptions, RunResult, StopFlag};
use crate::store::{Store, StoreError, StoredRun, Target};
use crate::sys::environment::Environment;
use iolab_runner::Error as RunError;
use std::path::{Path, PathBuf};

/// One run pooled into a side: its id (None when made now and not
/// stored), its workload and where it ran.
#[derive(Debug, Clone, Default)]
pub struct Member {
    /// Stored run id.
    pub run: Option<i64>,
    /// What it did.
    pub fingerprint: Fingerprint,
    /// Where it ran.
    pub env: EnvFacts,
}

impl Member {
    /// A stored run. A result that no longer decodes (stored by an
    /// iolab whose result shape this one cannot read) has no
    /// fingerprint: its figures still compare, unchecked.
    fn stored(r: &StoredRun) -> Member {
        Member {
            run: Some(r.id),
            fingerprint: Fingerprint::of_stored(r).unwrap_or_default(),
            env: EnvFacts::of(&r.env, &r.iolab_version),
        }
    }

    /// A trace read from its file: the program it traced, where unknown.
    fn trace_file(t: &crate::trace::Trace) -> Member {
        let name = match t.meta.command.first() {
            Some(c) => format!("trace {c}"),
            None => format!("trace -p {}", t.meta.pid),
        };
        Member {
            run: None,
            fingerprint: Fingerprint(vec![("kind", "trace".into()), ("command", name)]),
            env: EnvFacts(vec![String::new(); super::env_diff::FIELDS.len()]),
        }
    }

    /// A run made now.
    fn made(result: &RunResult, run: Option<i64>) -> Member {
        let files: Vec<PathBuf> = result.files.iter().flatten().flatten().cloned().collect();
        Member {
            run,
            fingerprint: Fingerprint::of_jobs(&result.jobs),
            env: EnvFacts::of(
                &Environment::capture(&files, crate::disk::state::injected_at),
                env!("CARGO_PKG_VERSION"),
            ),
        }
    }
}

/// One side of a comparison: its samples (one per repetition).
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// What the user called it (run id, label, job file).
    pub name: String,
    /// Stored runs it consists of.
    pub runs: Vec<i64>,
    /// Key figures of each repetition.
    pub samples: Vec<Figures>,
    /// Each run pooled here, stored or made now.
    pub members: Vec<Member>,
    /// The traces pooled here (without their events), when it is traces.
    pub traces: Vec<crate::trace::Trace>,
}

impl Side {
    /// The fields in which its runs' workloads differ (none: one
    /// workload); runs without a fingerprint are left out.
    pub fn mixed(&self) -> Vec<FieldDiff> {
        let runs: Vec<_> = self
            .members
            .iter()
            .filter(|m| !m.fingerprint.0.is_empty())
            .map(|m| (m.run, &m.fingerprint))
            .collect();
        fingerprint::differences(&runs)
    }

    /// True when any of its runs has `field` = `value`.
    fn any(&self, field: &str, value: &str) -> bool {
        self.members.iter().any(|m| {
            m.fingerprint
                .get(field)
                .is_some_and(|v| v.split(',').any(|x| x == value))
        })
    }
}

/// Compares every key figure both sides have.
pub fn compare(a: &Side, b: &Side) -> Vec<Row> {
    METRICS
        .iter()
        .filter_map(|m| {
            let xa = samples(a, m.key);
            let xb = samples(b, m.key);
            (!xa.is_empty() && !xb.is_empty()).then(|| Row::new(m, &xa, &xb))
        })
        .collect()
}

fn samples(s: &Side, key: &str) -> Vec<f64> {
    s.samples
        .iter()
        .filter_map(|f| f.get(key).copied())
        .collect()
}

/// The verdict of `rows` (on the headline figure, see [`super::verdict`]),
/// marking that row as shown.
pub fn verdict(sides: &[Side; 2], rows: &mut [Row]) -> Option<Verdict> {
    let either = |field: &str, value: &str| sides.iter().any(|s| s.any(field, value));
    let work = if either("kind", "tree") {
        verdict::Work::Tree
    } else if either("kind", "exec") {
        verdict::Work::Commands
    } else {
        verdict::Work::Jobs {
            time_based: either("time_based", "1"),
        }
    };
    let (row, why) = verdict::headline(rows, work)?;
    let better = metric(row.metric).map_or(Better::Neutral, |m| m.better);
    let v = Verdict::new(row, why, better);
    for r in rows.iter_mut().filter(|r| r.metric == v.metric) {
        r.shown = true;
    }
    Some(v)
}

/// What a side argument names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Stored runs: a run id, or every run with a label.
    Stored(Vec<i64>),
    /// Job arguments to run now: a job file, or a quoted set of fio options.
    Jobs(Vec<String>),
    /// A trace file (`iolab trace -o FILE`).
    TraceFile(PathBuf),
}

impl Source {
    /// Reads a side argument: a stored run id, a trace file, a job file, a
    /// quoted set of `--options`, or a label (in that order). Job sides
    /// must parse.
    pub fn resolve(arg: &str, store: Option<&Store>) -> Result<Source> {
        if let (Ok(id), Some(s)) = (arg.parse::<i64>(), store)
            && s.get(id)?.is_some()
        {
            return Ok(Source::Stored(vec![id]));
        }
        if crate::trace::file::is_trace_file(Path::new(arg)) {
            return Ok(Source::TraceFile(PathBuf::from(arg)));
        }
        let jobs = if Path::new(arg).is_file() {
            Some(vec![arg.to_string()])
        } else if arg.trim_start().starts_with("--") {
            Some(arg.split_whitespace().map(String::from).collect())
        } else {
            None
        };
        if let Some(args) = jobs {
            job::jobs_from_args(&args)?;
            return Ok(Source::Jobs(args));
        }
        if let Some(s) = store {
            let ids = s.ids_with_label(arg)?;
            if !ids.is_empty() {
                return Ok(Source::Stored(ids));
            }
        }
        Err(Error::usage(
            format!("'{arg}'"),
            "not a stored run id, a label, a job file, or a quoted set of --options",
        ))
    }
}

/// The name a side argument is shown under: the `--name` of an option
/// set, the file name of a job file, else the argument itself.
pub fn side_name(arg: &str) -> String {
    if arg.trim_start().starts_with("--") {
        arg.split_whitespace()
            .find_map(|a| a.strip_prefix("--name="))
            .unwrap_or("options")
            .to_string()
    } else {
        Path::new(arg)
            .file_name()
            .map_or_else(|| arg.to_string(), |n| n.to_string_lossy().into_owned())
    }
}

/// Two sides compared, figure by figure.
#[derive(Debug, Default)]
pub struct Comparison {
    /// A and B with their samples.
    pub sides: [Side; 2],
    /// One row per key figure both sides have.
    pub rows: Vec<Row>,
    /// Traces on both sides: each call's count and latency in A and B.
    pub calls: Vec<super::compare_calls::CallRow>,
    /// The one-line verdict on the headline figure.
    pub verdict: Option<Verdict>,
    /// Environment fields that differ between A's runs and B's.
    pub env_diff: Vec<EnvDiff>,
    /// Per side, the workload fields its runs differ in (pooled anyway
    /// with `force`).
    pub pooled: [Vec<FieldDiff>; 2],
    /// Show every row, not only those [`Row::shown`].
    pub all: bool,
    /// The label prefix runs made now were stored under (`PREFIX:A`, `PREFIX:B`).
    pub stored_as: Option<String>,
    /// The first run made now that could not be stored (the comparison
    /// goes on: the measurement is still shown).
    pub not_stored: Option<StoreError>,
}

/// An A/B comparison: stored sides are read, job sides run `repeat` times
/// each, interleaved A B A B so drift hits both alike.
#[derive(Debug)]
pub struct AbTest {
    /// Side A then B: the argument as given and what it names.
    pub sides: [(String, Source); 2],
    /// Runs of each job side.
    pub repeat: u32,
    /// Store the runs made now (`--no-store` clears it; stored sides are
    /// still read).
    pub store_new: bool,
    /// Pool a label's runs even when they are of different workloads
    /// (`--force`); otherwise that is a [`MixedWorkloads`] error.
    pub force: bool,
    /// Show every row (`--all`).
    pub all: bool,
}

impl Comparison {
    /// `sides` compared figure by figure, with the verdict and the
    /// environment diff (every row shown with `all`).
    pub fn of_sides(sides: [Side; 2], all: bool) -> Result<Comparison> {
        let mut rows = compare(&sides[0], &sides[1]);
        if rows.is_empty() {
            return Err(Error::usage(
                "A and B",
                "the two sides have no key figure in common",
            ));
        }
        let traced = |s: &Side| s.traces.len() == s.members.len();
        let calls = if traced(&sides[0]) && traced(&sides[1]) {
            super::compare_calls::rows(&sides[0].traces, &sides[1].traces)
        } else {
            Vec::new()
        };
        Ok(Comparison {
            calls,
            verdict: verdict(&sides, &mut rows),
            env_diff: env_diff::diff(&env_of(&sides[0]), &env_of(&sides[1])),
            sides,
            rows,
            all,
            ..Comparison::default()
        })
    }

    /// The rows to show: every one with [`Comparison::all`], else those
    /// that matter ([`Row::shown`]).
    pub fn shown_rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| self.all || r.shown)
    }
}

impl AbTest {
    /// Resolves both side arguments (the error says which side is wrong).
    pub fn new(a: &str, b: &str, repeat: u32, store: Option<&Store>) -> Result<AbTest> {
        if repeat == 0 {
            return Err(Error::usage("--repeat 0", "need at least one run per side"));
        }
        let side = |which: &str, arg: &str| {
            Source::resolve(arg, store).map_err(|e| match e {
                Error::Run(RunError::Job(j)) => Error::usage(which, j.to_string()),
                Error::Run(RunError::Usage { what, problem }) => {
                    Error::usage(format!("{which}: {what}"), problem)
                }
                other => other,
            })
        };
        Ok(AbTest {
            sides: [
                (a.to_string(), side("A", a)?),
                (b.to_string(), side("B", b)?),
            ],
            repeat,
            store_new: true,
            force: false,
            all: false,
        })
    }

    /// Reads the stored sides, runs the job sides (each run stored under
    /// `LABEL:A` / `LABEL:B` of `target`'s label or a dated one), and
    /// compares.
    pub fn run(
        self,
        mut target: Option<Target<'_>>,
        stop: &StopFlag,
        progress: &mut dyn Progress,
    ) -> Result<Comparison> {
        let mut sides = [Side::default(), Side::default()];
        for (i, (arg, src)) in self.sides.iter().enumerate() {
            sides[i].name = side_name(arg);
            if let Source::Stored(ids) = src {
                let store = target.as_ref().map(|t| &*t.store).ok_or_else(|| {
                    Error::usage(arg.clone(), "a stored side needs the results database")
                })?;
                for id in ids {
                    let run = store.run(*id)?;
                    sides[i].members.push(Member::stored(&run));
                    if run.kind == crate::trace::store::KIND {
                        sides[i].traces.push(crate::trace::store::load(&run)?.trace);
                    }
                    sides[i].samples.extend(run.summary.reps);
                    sides[i].runs.push(*id);
                }
                if let [id] = ids.as_slice() {
                    sides[i].name = format!("run {id}");
                }
            }
        }
        for (i, (_, src)) in self.sides.iter().enumerate() {
            if let Source::TraceFile(p) = src {
                let t = crate::trace::file::read(p)?;
                sides[i].members.push(Member::trace_file(&t));
                sides[i]
                    .samples
                    .extend(crate::trace::store::summary(&t).reps);
                sides[i].traces.push(t);
            }
        }
        for (i, s) in sides.iter().enumerate() {
            if !s.runs.is_empty() && s.samples.is_empty() {
                return Err(Error::usage(
                    format!("side {} ({})", ["A", "B"][i], s.name),
                    "has no successful repetition to compare (its runs failed; `iolab show` lists them)",
                ));
            }
        }
        let pooled = [sides[0].mixed(), sides[1].mixed()];
        for (i, fields) in pooled.iter().enumerate() {
            if !fields.is_empty() && !self.force {
                return Err(Error::MixedWorkloads(Box::new(MixedWorkloads {
                    side: ["A", "B"][i],
                    name: sides[i].name.clone(),
                    fields: fields.clone(),
                })));
            }
        }
        // A side run now is a run, whatever the other side traced.
        let made = Fingerprint(vec![("kind", "run".into())]);
        let mut both: Vec<(Option<i64>, &Fingerprint)> = sides
            .iter()
            .flat_map(|s| &s.members)
            .filter(|m| !m.fingerprint.0.is_empty())
            .map(|m| (m.run, &m.fingerprint))
            .collect();
        for (_, src) in &self.sides {
            if matches!(src, Source::Jobs(_)) {
                both.push((None, &made));
            }
        }
        let unlike = fingerprint::unlike_traces(&both);
        if !unlike.is_empty() && !self.force {
            return Err(Error::UnlikeTraces(Box::new(UnlikeTraces {
                a: sides[0].name.clone(),
                b: sides[1].name.clone(),
                fields: unlike,
            })));
        }
        let running = self.sides.iter().any(|s| matches!(s.1, Source::Jobs(_)));
        let mut not_stored = None;
        let prefix = target.as_ref().and_then(|t| t.label).map_or_else(
            || format!("compare-{}", chrono::Local::now().format("%Y%m%d-%H%M%S")),
            String::from,
        );
        for round in 0..if running { self.repeat } else { 0 } {
            for (i, (_, src)) in self.sides.iter().enumerate() {
                let Source::Jobs(args) = src else { continue };
                let which = ["A", "B"][i];
                progress.step(&format!(
                    "compare round {}/{}: {which} ({})",
                    round + 1,
                    self.repeat,
                    sides[i].name
                ));
                let result = runner::run_with(
                    job::jobs_from_args(args)?,
                    &RunOptions::default(),
                    stop,
                    &mut NoObserver,
                    progress,
                )
                .and_then(|r| r.complete(stop))?;
                for w in &result.warnings {
                    progress.warning(w);
                }
                sides[i].samples.extend(result.summary().reps);
                let mut stored = None;
                if let Some(t) = target.as_mut().filter(|_| self.store_new) {
                    let cmd = format!("iolab compare ({which}) {}", args.join(" "));
                    match t.store.insert_run(
                        &result,
                        &cmd,
                        Some(&format!("{prefix}:{which}")),
                        None,
                    ) {
                        Ok(id) => {
                            sides[i].runs.push(id);
                            stored = Some(id);
                        }
                        Err(e) => {
                            not_stored.get_or_insert(e);
                        }
                    }
                }
                sides[i].members.push(Member::made(&result, stored));
            }
        }
        let mut c = Comparison::of_sides(sides, self.all)?;
        c.stored_as = (running && target.is_some() && self.store_new && not_stored.is_none())
            .then_some(prefix);
        c.not_stored = not_stored;
        c.pooled = pooled;
        Ok(c)
    }
}

fn env_of(s: &Side) -> Vec<EnvFacts> {
    s.members.iter().map(|m| m.env.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(name: &str, iops: &[f64]) -> Side {
        Side {
            name: name.into(),
            runs: vec![],
            members: vec![],
            samples: iops
                .iter()
                .map(|v| Figures::from([("iops".to_string(), *v), ("time_s".to_string(), 1.0)]))
                .collect(),
            traces: vec![],
        }
    }

    #[test]
    fn verdicts() {
        let a = side("a", &[101.2, 99.8, 100.5, 100.9, 99.6]);
        let b = side("b", &[104.1, 103.2, 105.0, 103.8, 104.4]);
        let rows = compare(&a, &b);
        let iops = rows.iter().find(|r| r.metric == "iops").unwrap();
        assert!(
            iops.verdict.starts_with("B better, significant"),
            "{}",
            iops.verdict
        );
        assert!((iops.change_pct.unwrap() - 3.7 / 100.4 * 100.0).abs() < 1e-9);
        let time = rows.iter().find(|r| r.metric == "time_s").unwrap();
        assert_eq!(time.verdict, "same");
        let mut rows = rows;
        let v = verdict(&[a, b], &mut rows).unwrap();
        // Same bytes unknown: the rate decides; B's IOPS are higher.
        assert_eq!((v.metric, v.faster), ("iops", verdict::Faster::B));
        assert!(rows.iter().find(|r| r.metric == "iops").unwrap().shown);
        let one = compare(&side("a", &[1.0]), &side("b", &[2.0]));
        let iops = one.iter().find(|r| r.metric == "iops").unwrap();
        assert_eq!(iops.verdict, "not tested: 1 run per side, 3 needed");
    }
}
