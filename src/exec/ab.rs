//! `iolab compare --exec 'CMD A' 'CMD B'`: the two commands run
//! interleaved (A B A B, so drift hits both alike), each run under the
//! same cache state, each side stored as one exec; compared like any two
//! sides (the verdict on the run time, every figure side by side).

use super::error::Result;
use super::{ExecError, ExecRequest, ExecResult, figures, store};
use crate::analysis::compare::{Comparison, Member, Side};
use crate::analysis::env_diff::EnvFacts;
use crate::analysis::fingerprint::Fingerprint;
use crate::runner::StopFlag;
use crate::runner::progress::Progress;
use crate::store::Target;
use crate::sys::environment::Environment;

/// The two sides run and compared.
#[derive(Debug)]
pub struct ExecComparison {
    /// The comparison (every figure shown).
    pub comparison: Comparison,
    /// A's and B's runs.
    pub results: [ExecResult; 2],
    /// A store error of a side, after which the comparison still stands.
    pub not_stored: Option<crate::store::StoreError>,
}

/// `sh -c CMD`: a side given as one string, with the shell's pipes and
/// redirections.
pub fn shell(cmd: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), cmd.into()]
}

/// Runs `a` and `b` (each a shell command line) `base.repeat` times,
/// interleaved, with `base`'s cache state, files and output; stores each
/// side under `LABEL:A` and `LABEL:B` when `target` is given.
pub fn run(
    a: &str,
    b: &str,
    base: &ExecRequest,
    mut target: Option<Target<'_>>,
    stop: &StopFlag,
    progress: &mut dyn Progress,
) -> Result<ExecComparison> {
    let reqs = [a, b].map(|cmd| ExecRequest {
        command: shell(cmd),
        repeat: 1,
        ..base.clone()
    });
    for r in &reqs {
        r.check()?;
    }
    let mut results: [ExecResult; 2] = Default::default();
    'rounds: for round in 1..=base.repeat {
        for (i, req) in reqs.iter().enumerate() {
            if stop.is_set() {
                break 'rounds;
            }
            progress.step(&format!(
                "compare round {round}/{}: {} ({})",
                base.repeat,
                ["A", "B"][i],
                [a, b][i]
            ));
            let mut one = super::run(req, stop, &mut Quiet)?;
            let r = &mut results[i];
            if r.runs.is_empty() {
                *r = ExecResult {
                    runs: Vec::new(),
                    profiles: Vec::new(),
                    repeat: base.repeat,
                    ..one.clone()
                };
            }
            for mut run in one.runs.drain(..) {
                run.index = round;
                r.runs.push(run);
            }
            r.profiles.append(&mut one.profiles);
            r.warnings.append(&mut one.warnings);
            r.interrupted |= one.interrupted;
        }
    }
    let prefix = target.as_ref().and_then(|t| t.label).map_or_else(
        || format!("compare-{}", chrono::Local::now().format("%Y%m%d-%H%M%S")),
        String::from,
    );
    let mut not_stored = None;
    if let Some(t) = target.as_mut() {
        // A side stopped before its first run has nothing to keep.
        for (i, r) in results
            .iter_mut()
            .enumerate()
            .filter(|(_, r)| !r.runs.is_empty())
        {
            let label = format!("{prefix}:{}", ["A", "B"][i]);
            match store::save(t.store, r, t.command, Some(&label)) {
                Ok(id) => r.run = Some(id),
                Err(e) => {
                    not_stored.get_or_insert(e);
                }
            }
        }
    }
    // Stopped before both sides succeeded once: the runs made are kept.
    if stop.is_set() && results.iter().any(|r| r.ok_runs().next().is_none()) {
        return Err(iolab_runner::Error::interrupted(stop).into());
    }
    // A side without one successful run has nothing to compare: its
    // failure is the answer (the runs are stored).
    if let Some(r) = results
        .iter()
        .find(|r| !r.runs.is_empty() && r.ok_runs().next().is_none())
    {
        return Err(r.failure().map_or_else(
            || ExecError::usage("compare --exec", "a side has no successful run"),
            Into::into,
        ));
    }
    let sides = [0, 1].map(|i| side(&results[i], [a, b][i]));
    let mut comparison = Comparison::of_sides(sides, true)?;
    if target.is_some() && not_stored.is_none() {
        comparison.stored_as = Some(prefix);
    }
    Ok(ExecComparison {
        comparison,
        results,
        not_stored,
    })
}

/// One side: its successful runs' figures as samples.
fn side(r: &ExecResult, cmd: &str) -> Side {
    let env = Environment::capture(&r.watched(), crate::disk::state::injected_at);
    Side {
        name: cmd.to_string(),
        samples: figures::summary(r).reps,
        runs: r.run.into_iter().collect(),
        members: vec![Member {
            run: r.run,
            fingerprint: Fingerprint(vec![("kind", "exec".into()), ("command", cmd.to_string())]),
            env: EnvFacts::of(&env, env!("CARGO_PKG_VERSION")),
        }],
        traces: Vec::new(),
    }
}

/// The steps of each side's single run are the round's step.
struct Quiet;

impl Progress for Quiet {
    fn step(&mut self, _what: &str) {}
}
