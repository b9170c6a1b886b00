//! What the reports show: fio's `percentile_list`, `clat_percentiles`,
//! `lat_percentiles`, `slat_percentiles`.

use crate::job::error::JobProblem;
use crate::job::option_def::OptionGroup;
use crate::job::option_def::{Kind, OptDef, opt};
use crate::job::spec::JobSpec;
use crate::job::units::parse_bool;
use serde::{Deserialize, Serialize};

/// Most percentiles in a `percentile_list` (fio's `FIO_IO_U_LIST_MAX_LEN`).
pub const MAX_PERCENTILES: usize = 20;

/// The settings of this group in a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Report {
    /// The percentiles reported; `None`: fio's default list
    /// (`metrics::histogram::FIO_PERCENTILES`).
    pub percentile_list: Option<Vec<f64>>,
    /// Percentiles of completion latency (default on, as fio).
    pub clat_percentiles: bool,
    /// Percentiles of total latency (default off, as fio).
    pub lat_percentiles: bool,
    /// Percentiles of submission latency (default off, as fio).
    pub slat_percentiles: bool,
    /// fio's `unified_rw_reporting`: the directions reported apart, as one
    /// (`mixed`), or both.
    #[serde(default)]
    pub unified: Unified,
}

/// fio's `unified_rw_reporting` (stat.c `UNIFIED_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Unified {
    /// Each direction apart (`none`, 0; the default).
    #[default]
    Split,
    /// Reads, writes and trims summed into one `mixed` direction (`mixed`, 1).
    Mixed,
    /// Each direction, and `mixed` after them (`both`, 2).
    Both,
}

impl Default for Report {
    fn default() -> Report {
        Report {
            percentile_list: None,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            unified: Unified::Split,
        }
    }
}

/// This group's rows of the option table.
pub const OPTIONS: &[OptDef] = &[
    opt(
        "percentile_list",
        Kind::Str,
        "percentiles to report, ':'-separated (e.g. 50:99:99.9), at most 20",
    ),
    opt(
        "clat_percentiles",
        Kind::Bool,
        "report completion-latency percentiles (default 1)",
    ),
    opt(
        "lat_percentiles",
        Kind::Bool,
        "report total-latency percentiles (default 0)",
    ),
    opt(
        "slat_percentiles",
        Kind::Bool,
        "report submission-latency percentiles (default 0)",
    ),
    opt(
        "unified_rw_reporting",
        Kind::Choice(&["none", "mixed", "both", "0", "1", "2"]),
        "report reads, writes and trims apart (none), summed as 'mixed', or both",
    ),
];

/// Applies one of [`OPTIONS`].
fn apply(job: &mut JobSpec, def: &OptDef, v: &str) -> Result<(), JobProblem> {
    let r = &mut job.report;
    match def.name {
        "percentile_list" => r.percentile_list = Some(percentile_list(v)?),
        "clat_percentiles" => r.clat_percentiles = parse_bool(v)?,
        "lat_percentiles" => r.lat_percentiles = parse_bool(v)?,
        "slat_percentiles" => r.slat_percentiles = parse_bool(v)?,
        "unified_rw_reporting" => {
            r.unified = match v {
                "mixed" | "1" => Unified::Mixed,
                "both" | "2" => Unified::Both,
                _ => Unified::Split,
            }
        }
        other => unreachable!("report group and its table disagree on '{other}'"),
    }
    Ok(())
}

/// fio's `percentile_list`: numbers in 0-100 separated by ':'.
fn percentile_list(v: &str) -> Result<Vec<f64>, JobProblem> {
    let list = v
        .split(':')
        .map(|p| match p.trim().parse::<f64>() {
            Ok(x) if (0.0..=100.0).contains(&x) => Ok(x),
            _ => Err(JobProblem::Invalid(format!(
                "percentile_list: '{p}' is not a percentile (a number from 0 to 100)"
            ))),
        })
        .collect::<Result<Vec<f64>, JobProblem>>()?;
    if list.len() > MAX_PERCENTILES {
        return Err(JobProblem::Invalid(format!(
            "percentile_list: {} percentiles (at most {MAX_PERCENTILES}, as fio)",
            list.len()
        )));
    }
    Ok(list)
}

/// The group.
pub const GROUP: OptionGroup = OptionGroup {
    name: "Reports",
    options: OPTIONS,
    apply,
    validate: crate::job::option_def::no_rules,
};
