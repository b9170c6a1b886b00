//! When a job starts and what ends it, besides its own I/O: fio's
//! `startdelay`, `wait_for`, `new_group` (reporting groups), `exitall`,
//! `exitall_on_error`, `exit_what`, and steady-state detection
//! (`steadystate`/`ss`, `ss_dur`, `ss_ramp`). The runner
//! (`runner::launch`, `runner::steady`) does what they say.

use crate::job::error::{JobError, JobProblem};
use crate::job::option_def::OptionGroup;
use crate::job::option_def::{Kind, OptDef, Range, aliased};
use crate::job::spec::JobSpec;
use crate::job::units::{parse_bool, parse_size};
use serde::{Deserialize, Serialize};

/// What `exitall` ends when a job ends (fio's `exit_what`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ExitWhat {
    /// Every job of the same reporting group (the default).
    #[default]
    Group,
    /// Every job running now, in any group; the next stonewall still starts.
    Stonewall,
    /// Every job, running or not started yet.
    All,
}

/// fio's steady-state criterion and window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Steady {
    /// Bandwidth (`bw`, `bw_slope`), else IOPS.
    pub bw: bool,
    /// The least-squares slope (`_slope`), else the largest deviation from the mean.
    pub slope: bool,
    /// The limit is a percentage of the window's mean.
    pub pct: bool,
    /// The limit the criterion must fall below.
    pub limit: f64,
    /// The window in whole seconds (`ss_dur`); 0: no detection.
    pub dur_s: u64,
    /// Time before the samples begin (`ss_ramp`), in µs.
    pub ramp_us: u64,
}

impl Default for Steady {
    /// fio's default criterion: `iops_slope:0.01%`, no window.
    fn default() -> Steady {
        Steady {
            bw: false,
            slope: true,
            pct: true,
            limit: 0.01,
            dur_s: 0,
            ramp_us: 0,
        }
    }
}

impl Steady {
    /// fio's text of the criterion in its JSON (`iops_slope:0.010000%`).
    pub fn text(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            if self.bw { "bw" } else { "iops" },
            if self.slope { "_slope" } else { "" },
            self.limit as f32,
            if self.pct { "%" } else { "" }
        )
    }
}

/// The settings of this group in a job.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Lifecycle {
    /// Start this long after the repetition began, in µs: a value drawn
    /// per clone from `(low, high)` (the same twice for one value).
    pub startdelay_us: (u64, u64),
    /// When a job ends, end others (`exit_what` says which), as fio's
    /// `exitall`: one job with it makes it so for every job of the run.
    pub exitall: bool,
    /// When a job ends with an error, end others (`exit_what`).
    pub exitall_on_error: bool,
    /// Which jobs `exitall` ends.
    pub exit_what: ExitWhat,
    /// Start once every clone of the job of this name has ended.
    pub wait_for: Option<String>,
    /// Begin a new reporting group (fio's `new_group`).
    pub new_group: bool,
    /// Steady-state detection.
    pub steady: Steady,
}

/// A time option (µs, seconds unless suffixed), up to a year.
const TIME: Kind = Kind::Time(Range {
    min: 0,
    max: 365 * 86_400_000_000,
});

/// This group's rows of the option table.
pub const OPTIONS: &[OptDef] = &[
    aliased(
        "startdelay",
        &[],
        TIME,
        "start the job this long after the run began; a range a-b: each clone draws its own",
    ),
    aliased(
        "wait_for",
        &[],
        Kind::Str,
        "start the job once every clone of the named (earlier) job has ended",
    ),
    aliased(
        "new_group",
        &[],
        Kind::Bool,
        "begin a new reporting group (fio's groupid, group_reporting)",
    ),
    aliased(
        "exitall",
        &[],
        Kind::Bool,
        "when a job ends, end others (exit_what says which)",
    ),
    aliased(
        "exitall_on_error",
        &[],
        Kind::Bool,
        "when a job ends with an error, end others (exit_what says which)",
    ),
    aliased(
        "exit_what",
        &[],
        Kind::Choice(&["group", "stonewall", "all"]),
        "what exitall ends: group (its reporting group), stonewall (every running job), all",
    ),
    aliased(
        "steadystate",
        &["ss"],
        Kind::Str,
        "stop once steady: iops, iops_slope, bw or bw_slope, ':' and a limit (N or N%)",
    ),
    aliased(
        "steadystate_duration",
        &["ss_dur"],
        TIME,
        "steady-state window (whole seconds, one sample a second); 0: no detection",
    ),
    aliased(
        "steadystate_ramp_time",
        &["ss_ramp"],
        TIME,
        "time before the steady-state samples begin",
    ),
];

/// Applies one of [`OPTIONS`].
fn apply(job: &mut JobSpec, def: &OptDef, v: &str) -> Result<(), JobProblem> {
    let l = &mut job.lifecycle;
    match def.name {
        "startdelay" => l.startdelay_us = def.kind.number_pair(v)?,
        "wait_for" => {
            crate::job::units::plain_text("job name", v)?;
            l.wait_for = Some(v.to_string()).filter(|w| !w.is_empty());
        }
        "new_group" => l.new_group = parse_bool(v)?,
        "exitall" => l.exitall = parse_bool(v)?,
        "exitall_on_error" => l.exitall_on_error = parse_bool(v)?,
        "exit_what" => {
            l.exit_what = match v {
                "stonewall" => ExitWhat::Stonewall,
                "all" => ExitWhat::All,
                _ => ExitWhat::Group,
            }
        }
        "steadystate" => {
            let (steady, _) = steadystate(v)?;
            let s = &mut l.steady;
            (s.bw, s.slope, s.pct, s.limit) = (steady.bw, steady.slope, steady.pct, steady.limit);
        }
        "steadystate_duration" => l.steady.dur_s = def.kind.number(v)? / 1_000_000,
        "steadystate_ramp_time" => l.steady.ramp_us = def.kind.number(v)?,
        other => unreachable!("lifecycle group and its table disagree on '{other}'"),
    }
    Ok(())
}

/// fio's `steadystate=CRITERION:LIMIT` read, with the line fio's
/// `--debug=parse` prints for it (`set steady state threshold to 10.000000%`).
pub fn steadystate(v: &str) -> Result<(Steady, String), JobProblem> {
    let bad = |why: &str| JobProblem::Invalid(format!("steadystate '{v}': {why}"));
    let (word, limit) = v.split_once(':').unwrap_or((v, ""));
    let (bw, slope) = match word.trim() {
        "iops" => (false, false),
        "iops_slope" => (false, true),
        "bw" => (true, false),
        "bw_slope" => (true, true),
        _ => {
            return Err(bad(
                "the criterion is one of iops, iops_slope, bw, bw_slope",
            ));
        }
    };
    let limit = limit.trim();
    if limit.is_empty() {
        return Err(bad(
            "a limit must follow the criterion (like iops:10 or iops_slope:0.1%)",
        ));
    }
    let float = |t: &str| {
        t.trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .ok_or_else(|| bad("the limit is not a number"))
    };
    let mut s = Steady {
        bw,
        slope,
        ..Steady::default()
    };
    let line = if let Some(p) = limit.split_once('%').map(|(n, _)| n) {
        (s.pct, s.limit) = (true, float(p)?);
        format!("set steady state threshold to {:.6}%", s.limit)
    } else if !bw {
        (s.pct, s.limit) = (false, float(limit)?);
        format!("set steady state IOPS threshold to {:.6}", s.limit)
    } else {
        let n =
            parse_size(limit).map_err(|_| bad("the limit is not a bandwidth (like 12 or 10m)"))?;
        (s.pct, s.limit) = (false, n as f64);
        format!("set steady state BW threshold to {n}")
    };
    Ok((s, line))
}

/// The lines fio's `--debug=parse` prints for the options in `entries`
/// (those iolab prints: the steady-state thresholds), as (key, value) pairs.
pub fn parse_debug<'a>(entries: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    entries
        .filter(|(k, _)| {
            let k = k.to_ascii_lowercase();
            OPTIONS.iter().any(|d| {
                d.name == "steadystate" && (d.name == k || d.aliases.contains(&k.as_str()))
            })
        })
        .filter_map(|(_, v)| steadystate(v).ok().map(|(_, line)| line))
        .collect()
}

/// The rules of one job: it does not wait for itself.
fn validate(job: &JobSpec) -> Result<(), JobProblem> {
    if job.lifecycle.wait_for.as_deref() == Some(job.name.as_str()) {
        return Err(JobProblem::Invalid(format!(
            "a job cannot wait for itself (wait_for={})",
            job.name
        )));
    }
    Ok(())
}

/// The rules between jobs, as fio's: a `wait_for` names one job defined
/// before the waiter (no forward reference, no two jobs of that name);
/// the jobs of one reporting group have the same steady-state options.
pub fn check_jobs(jobs: &[JobSpec]) -> Result<(), JobError> {
    let groups = groupids(jobs);
    for (i, job) in jobs.iter().enumerate() {
        let first = groups.iter().position(|g| *g == groups[i]).unwrap_or(i);
        if jobs[first].lifecycle.steady != job.lifecycle.steady {
            return Err(JobError::invalid(
                &job.name,
                format!(
                    "steady-state options (ss, ss_dur, ss_ramp) differ from those of job '{}' \
                     in the same reporting group (fio rejects this; begin a new_group)",
                    jobs[first].name
                ),
            ));
        }
        let Some(w) = &job.lifecycle.wait_for else {
            continue;
        };
        match jobs[..i].iter().filter(|j| &j.name == w).count() {
            1 => {}
            0 => {
                return Err(JobError::invalid(
                    &job.name,
                    format!(
                        "wait_for={w}: no job of that name before this one (fio's waitee must come first)"
                    ),
                ));
            }
            n => {
                return Err(JobError::invalid(
                    &job.name,
                    format!(
                        "wait_for={w}: {n} jobs have that name; the waitee's name must be unique"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Each job's reporting group (fio's `groupid`): a job with `stonewall` or
/// `new_group` begins a new one, unless no job came before it.
pub fn groupids(jobs: &[JobSpec]) -> Vec<u32> {
    let mut id = 0;
    jobs.iter()
        .enumerate()
        .map(|(i, j)| {
            if i > 0 && (j.stonewall || j.lifecycle.new_group) {
                id += 1;
            }
            id
        })
        .collect()
}

/// The group.
pub const GROUP: OptionGroup = OptionGroup {
    name: "Start and end of jobs",
    options: OPTIONS,
    apply,
    validate,
};
