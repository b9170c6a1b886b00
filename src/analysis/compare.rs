//! A/B comparison over repetitions: per key figure the mean and spread of
//! each side, the change from A to B in percent, and Welch's t-test of
//! whether the difference is more than noise (seed 003's before/after
//! tables, with the statistics the seed did not have).

use super::stats::{self, Welch};
use crate::error::{Error, Result};
use crate::job;
use crate::metrics::figures::{Better, Figures, METRICS, MetricDef};
use crate::runner::{self, NoObserver, Progress, RunOptions, StopFlag};
use crate::store::{Store, StoreError, Target};
use serde::Serialize;
use std::path::Path;

/// Significance level for "significant".
pub const ALPHA: f64 = 0.05;

/// One side of a comparison: its samples (one per repetition).
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// What the user called it (run id, label, job file).
    pub name: String,
    /// Stored runs it consists of.
    pub runs: Vec<i64>,
    /// Key figures of each repetition.
    pub samples: Vec<Figures>,
}

/// One key figure compared.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Key of the figure.
    pub metric: &'static str,
    /// Column heading of the figure.
    pub label: &'static str,
    /// Samples of A.
    pub n_a: usize,
    /// Mean of A.
    pub a_mean: f64,
    /// Standard deviation of A.
    pub a_sd: f64,
    /// Samples of B.
    pub n_b: usize,
    /// Mean of B.
    pub b_mean: f64,
    /// Standard deviation of B.
    pub b_sd: f64,
    /// (B - A) / A in percent (None when A is 0).
    pub change_pct: Option<f64>,
    /// Welch's test, when both sides have two samples or more.
    pub welch: Option<Welch>,
    /// Plain-words verdict.
    pub verdict: String,
}

/// Compares every key figure both sides have.
pub fn compare(a: &Side, b: &Side) -> Vec<Row> {
    METRICS
        .iter()
        .filter_map(|m| {
            let xa = samples(a, m.key);
            let xb = samples(b, m.key);
            (!xa.is_empty() && !xb.is_empty()).then(|| row(m, &xa, &xb))
        })
        .collect()
}

fn samples(s: &Side, key: &str) -> Vec<f64> {
    s.samples
        .iter()
        .filter_map(|f| f.get(key).copied())
        .collect()
}

fn row(m: &'static MetricDef, a: &[f64], b: &[f64]) -> Row {
    let (am, bm) = (stats::mean(a), stats::mean(b));
    let change = (am != 0.0).then(|| (bm - am) / am.abs() * 100.0);
    let welch = stats::welch(a, b);
    let identical = a.iter().chain(b).all(|v| *v == a[0]);
    let verdict = match welch {
        _ if identical => "same".to_string(),
        None => "no test (needs 2+ repetitions per side)".to_string(),
        Some(w) if w.p < ALPHA => {
            let dir = match (m.better, bm > am) {
                (Better::Higher, true) | (Better::Lower, false) => "B better",
                (Better::Higher, false) | (Better::Lower, true) => "B worse",
                (Better::Neutral, true) => "B higher",
                (Better::Neutral, false) => "B lower",
            };
            format!("{dir}, significant ({})", pfmt(w.p))
        }
        Some(w) => format!("not significant ({})", pfmt(w.p)),
    };
    Row {
        metric: m.key,
        label: m.label,
        n_a: a.len(),
        a_mean: am,
        a_sd: stats::stddev(a),
        n_b: b.len(),
        b_mean: bm,
        b_sd: stats::stddev(b),
        change_pct: change,
        welch,
        verdict,
    }
}

/// `p=0.012`, `p<0.001`.
fn pfmt(p: f64) -> String {
    if p < 0.001 {
        "p<0.001".into()
    } else {
        format!("p={p:.3}")
    }
}

/// What a side argument names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Stored runs: a run id, or every run with a label.
    Stored(Vec<i64>),
    /// Job arguments to run now: a job file, or a quoted set of fio options.
    Jobs(Vec<String>),
}

impl Source {
    /// Reads a side argument: a stored run id, a job file, a quoted set of
    /// `--options`, or a label (in that order). Job sides must parse.
    pub fn resolve(arg: &str, store: Option<&Store>) -> Result<Source> {
        if let (Ok(id), Some(s)) = (arg.parse::<i64>(), store)
            && s.get(id)?.is_some()
        {
            return Ok(Source::Stored(vec![id]));
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
}

impl AbTest {
    /// Resolves both side arguments (the error says which side is wrong).
    pub fn new(a: &str, b: &str, repeat: u32, store: Option<&Store>) -> Result<AbTest> {
        if repeat == 0 {
            return Err(Error::usage("--repeat 0", "need at least one run per side"));
        }
        let side = |which: &str, arg: &str| {
            Source::resolve(arg, store).map_err(|e| match e {
                Error::Job(j) => Error::usage(which, j.to_string()),
                Error::Usage { what, problem } => Error::usage(format!("{which}: {what}"), problem),
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
                    sides[i].samples.extend(store.run(*id)?.summary.reps);
                    sides[i].runs.push(*id);
                }
                if let [id] = ids.as_slice() {
                    sides[i].name = format!("run {id}");
                }
            }
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
                if let Some(t) = target.as_mut().filter(|_| self.store_new) {
                    let cmd = format!("iolab compare ({which}) {}", args.join(" "));
                    match t.store.insert_run(
                        &result,
                        &cmd,
                        Some(&format!("{prefix}:{which}")),
                        None,
                    ) {
                        Ok(id) => sides[i].runs.push(id),
                        Err(e) => {
                            not_stored.get_or_insert(e);
                        }
                    }
                }
            }
        }
        let rows = compare(&sides[0], &sides[1]);
        if rows.is_empty() {
            return Err(Error::usage(
                "A and B",
                "the two sides have no key figure in common",
            ));
        }
        Ok(Comparison {
            stored_as: (running && target.is_some() && self.store_new && not_stored.is_none())
                .then_some(prefix),
            not_stored,
            sides,
            rows,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(name: &str, iops: &[f64]) -> Side {
        Side {
            name: name.into(),
            runs: vec![],
            samples: iops
                .iter()
                .map(|v| Figures::from([("iops".to_string(), *v), ("time_s".to_string(), 1.0)]))
                .collect(),
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
        let one = compare(&side("a", &[1.0]), &side("b", &[2.0]));
        let iops = one.iter().find(|r| r.metric == "iops").unwrap();
        assert!(iops.verdict.starts_with("no test"), "{}", iops.verdict);
    }
}
