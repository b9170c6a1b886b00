//! When each I/O may start: fio's rate limits (`rate`, `rate_iops`,
//! `rate_min`, `rate_iops_min`, `rate_process`, `rate_cycle`,
//! `rate_ignore_thinktime`), think times (`thinktime*`), `ramp_time`, the
//! token flow between jobs (`flow*`), the queue-depth search of
//! `latency_target`, and which times are taken (`gtod_reduce`,
//! `disable_*`). The runner reads [`Pacing::paced`] once per clone: a job
//! without any of them runs the loop without a pacing step.

use super::access_values::per_direction;
use crate::job::error::{JobProblem, ValueError};
use crate::job::option_def::OptionGroup;
use crate::job::option_def::num as number;
use crate::job::option_def::{Kind, OptDef, Range, aliased, opt};
use crate::job::spec::JobSpec;
use crate::job::units::{parse_bool, parse_int, parse_size, parse_time_in};
use serde::{Deserialize, Serialize};

/// fio's largest `flow` weight (`FLOW_MAX_WEIGHT`).
pub const FLOW_MAX_WEIGHT: u64 = 1000;

/// The settings of this group in a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Pacing {
    /// `rate`: bytes per second, read and write (0: none).
    pub rate: [u64; 2],
    /// `rate_iops`: I/Os per second, read and write (0: none).
    pub rate_iops: [u64; 2],
    /// `rate_min`: the job fails below this many bytes per second.
    pub rate_min: [u64; 2],
    /// `rate_iops_min`: the job fails below this many I/Os per second.
    pub rate_iops_min: [u64; 2],
    /// `rate_process=poisson` (else linear).
    pub poisson: bool,
    /// `rate_cycle`: the window of the `rate_min` checks, in ms.
    pub rate_cycle_ms: u64,
    /// `rate_ignore_thinktime`.
    pub rate_ignore_thinktime: bool,
    /// `thinktime` in microseconds (0: none).
    pub thinktime_us: u64,
    /// `thinktime_spin` in microseconds (spent busy, part of `thinktime`).
    pub thinktime_spin_us: u64,
    /// `thinktime_blocks`: I/Os between think times (default 1).
    pub thinktime_blocks: u64,
    /// `thinktime_blocks` was given (fio's `fio_option_is_set`).
    pub thinktime_blocks_set: bool,
    /// `thinktime_blocks_type=issue` (else `complete`).
    pub thinktime_issue: bool,
    /// `thinktime_iotime` in microseconds (0: none).
    pub thinktime_iotime_us: u64,
    /// `ramp_time` in microseconds (0: none).
    pub ramp_us: u64,
    /// `flow`: weight in the token flow of `flow_id` (0: not in a flow).
    pub flow: u64,
    /// `flow_id`.
    pub flow_id: u64,
    /// `flow_sleep` in microseconds (0: spin).
    pub flow_sleep_us: u64,
    /// `latency_target` in microseconds (0: none).
    pub latency_target_us: u64,
    /// `latency_window` in microseconds.
    pub latency_window_us: u64,
    /// `latency_percentile` (default 100).
    pub latency_percentile: f64,
    /// `latency_run`: keep adjusting the depth instead of stopping.
    pub latency_run: bool,
    /// `disable_lat`: no total latency figures.
    pub disable_lat: bool,
    /// `disable_clat`: no completion latency figures.
    pub disable_clat: bool,
    /// `disable_slat`: no submission latency figures.
    pub disable_slat: bool,
    /// `disable_bw_measurement`: no bandwidth and IOPS samples.
    pub disable_bw: bool,
}

impl Default for Pacing {
    fn default() -> Pacing {
        Pacing {
            rate: [0; 2],
            rate_iops: [0; 2],
            rate_min: [0; 2],
            rate_iops_min: [0; 2],
            poisson: false,
            rate_cycle_ms: 1000,
            rate_ignore_thinktime: false,
            thinktime_us: 0,
            thinktime_spin_us: 0,
            thinktime_blocks: 1,
            thinktime_blocks_set: false,
            thinktime_issue: false,
            thinktime_iotime_us: 0,
            ramp_us: 0,
            flow: 0,
            flow_id: 0,
            flow_sleep_us: 0,
            latency_target_us: 0,
            latency_window_us: 0,
            latency_percentile: 100.0,
            latency_run: false,
            disable_lat: false,
            disable_clat: false,
            disable_slat: false,
            disable_bw: false,
        }
    }
}

impl Pacing {
    /// fio's `rate_bps` of direction `d` (0 read, 1 write): `rate`, or
    /// `rate_iops` times the direction's smallest block (`min_bs`).
    pub fn rate_bps(&self, d: usize, min_bs: u64) -> u64 {
        if self.rate[d] > 0 {
            self.rate[d]
        } else {
            self.rate_iops[d].saturating_mul(min_bs)
        }
    }

    /// fio's `should_check_rate`: some rate option is set.
    pub fn checks_rate(&self) -> bool {
        (0..2).any(|d| {
            [self.rate, self.rate_iops, self.rate_min, self.rate_iops_min]
                .iter()
                .any(|r| r[d] > 0)
        })
    }

    /// Any option that adds a step before or after an I/O (rate, think
    /// time, flow, latency target): decided once per clone.
    pub fn paced(&self) -> bool {
        self.checks_rate() || self.thinktime_us > 0 || self.flow > 0 || self.latency_target_us > 0
    }
}

const UINT: Range = Range {
    min: 0,
    max: u32::MAX as u64,
};

/// This group's rows of the option table.
pub const OPTIONS: &[OptDef] = &[
    opt(
        "rate",
        Kind::Str,
        "cap the bandwidth at this many bytes/s, per direction read,write",
    ),
    opt(
        "rate_iops",
        Kind::Str,
        "cap the I/Os per second, per direction read,write",
    ),
    aliased(
        "rate_min",
        &["ratemin"],
        Kind::Str,
        "fail the job below this many bytes/s, per direction",
    ),
    opt(
        "rate_iops_min",
        Kind::Str,
        "fail the job below this many I/Os per second, per direction",
    ),
    opt(
        "rate_process",
        Kind::Choice(&["linear", "poisson"]),
        "how rated I/Os are spaced: evenly (linear) or at random (poisson)",
    ),
    aliased(
        "rate_cycle",
        &["ratecycle"],
        Kind::Int(UINT),
        "window in ms of the rate_min checks (default 1000)",
    ),
    opt(
        "rate_ignore_thinktime",
        Kind::Bool,
        "after a think time go on at the rate instead of catching up",
    ),
    opt(
        "thinktime",
        Kind::Str,
        "stall this long (default unit us) between I/Os",
    ),
    opt(
        "thinktime_spin",
        Kind::Str,
        "spend this much of thinktime busy (us)",
    ),
    opt(
        "thinktime_blocks",
        Kind::Int(UINT),
        "I/Os between think times (default 1)",
    ),
    opt(
        "thinktime_blocks_type",
        Kind::Choice(&["complete", "issue"]),
        "count completed (default) or issued I/Os for thinktime_blocks",
    ),
    opt(
        "thinktime_iotime",
        Kind::Time(Range {
            min: 0,
            max: u32::MAX as u64 * 1_000_000,
        }),
        "think after this long of I/O (default unit s)",
    ),
    opt(
        "ramp_time",
        Kind::Time(Range {
            min: 0,
            max: 365 * 86_400_000_000,
        }),
        "run this long before counting anything (default unit s)",
    ),
    opt(
        "flow",
        Kind::Int(Range {
            min: 0,
            max: FLOW_MAX_WEIGHT,
        }),
        "weight in the token flow of flow_id",
    ),
    opt(
        "flow_id",
        Kind::Int(UINT),
        "the flow the job's weight counts in (default 0)",
    ),
    opt(
        "flow_watermark",
        Kind::Int(UINT),
        "deprecated in fio: accepted without effect",
    ),
    opt(
        "flow_sleep",
        Kind::Int(UINT),
        "us to sleep when the flow holds the job back (0: spin)",
    ),
    opt(
        "latency_target",
        Kind::Str,
        "find the largest depth meeting this latency (default unit us)",
    ),
    opt(
        "latency_window",
        Kind::Str,
        "window of each latency_target step (default unit us)",
    ),
    opt(
        "latency_percentile",
        Kind::Str,
        "share of I/Os (0-100) that must meet latency_target (default 100)",
    ),
    opt(
        "latency_run",
        Kind::Bool,
        "keep adjusting the depth instead of stopping once found",
    ),
    opt(
        "gtod_reduce",
        Kind::Bool,
        "take no latency or bandwidth figures (all disable_* and no percentiles)",
    ),
    opt("disable_lat", Kind::Bool, "no total latency figures"),
    opt("disable_clat", Kind::Bool, "no completion latency figures"),
    opt("disable_slat", Kind::Bool, "no submission latency figures"),
    aliased(
        "disable_bw_measurement",
        &["disable_bw"],
        Kind::Bool,
        "no bandwidth and IOPS samples",
    ),
];

/// A time whose bare number is in microseconds (fio's `is_time` options
/// without `is_seconds`), at most `u32::MAX` us as fio's `int`.
fn time_us(what: &str, v: &str) -> Result<u64, JobProblem> {
    match parse_time_in(v, 1.0)? {
        t if t <= u32::MAX as u64 || what.starts_with("latency") => Ok(t),
        _ => Err(JobProblem::Invalid(format!(
            "{what}: '{v}' is more than fio's 4294967295 us"
        ))),
    }
}

/// `read[,write[,trim]]` into `into` (an empty part keeps its value).
fn dirs(
    into: &mut [u64; 2],
    what: &str,
    v: &str,
    one: impl Fn(&str) -> Result<u64, ValueError>,
) -> Result<(), JobProblem> {
    let p = per_direction(what, v, one)?;
    for d in 0..2 {
        if let Some(x) = p[d] {
            into[d] = x;
        }
    }
    Ok(())
}

/// Applies one of [`OPTIONS`].
fn apply(job: &mut JobSpec, def: &OptDef, v: &str) -> Result<(), JobProblem> {
    let p = &mut job.pacing;
    match def.name {
        "rate" => dirs(&mut p.rate, def.name, v, parse_size)?,
        "rate_iops" => dirs(&mut p.rate_iops, def.name, v, parse_int)?,
        "rate_min" => dirs(&mut p.rate_min, def.name, v, parse_size)?,
        "rate_iops_min" => dirs(&mut p.rate_iops_min, def.name, v, parse_int)?,
        "rate_process" => p.poisson = v.trim() == "poisson",
        "rate_cycle" => p.rate_cycle_ms = number(def, v)?,
        "rate_ignore_thinktime" => p.rate_ignore_thinktime = parse_bool(v)?,
        "thinktime" => p.thinktime_us = time_us(def.name, v)?,
        "thinktime_spin" => p.thinktime_spin_us = time_us(def.name, v)?,
        "thinktime_blocks" => {
            p.thinktime_blocks = number(def, v)?;
            p.thinktime_blocks_set = true;
        }
        "thinktime_blocks_type" => p.thinktime_issue = v.trim() == "issue",
        "thinktime_iotime" => p.thinktime_iotime_us = number(def, v)?,
        "ramp_time" => p.ramp_us = number(def, v)?,
        "flow" => p.flow = number(def, v)?,
        "flow_id" => p.flow_id = number(def, v)?,
        "flow_watermark" => {
            let _: u64 = number(def, v)?;
        }
        "flow_sleep" => p.flow_sleep_us = number(def, v)?,
        "latency_target" => p.latency_target_us = time_us(def.name, v)?,
        "latency_window" => p.latency_window_us = time_us(def.name, v)?,
        "latency_percentile" => {
            p.latency_percentile = match v.trim().trim_end_matches('%').parse::<f64>() {
                Ok(x) if (0.0..=100.0).contains(&x) => x,
                _ => {
                    return Err(JobProblem::Invalid(format!(
                        "latency_percentile: '{v}' is not a percentage (0-100)"
                    )));
                }
            }
        }
        "latency_run" => p.latency_run = parse_bool(v)?,
        "gtod_reduce" => {
            // fio's str_gtod_reduce_cb: only `gtod_reduce=1` changes
            // anything, and later options may undo each part.
            if parse_bool(v)? {
                (p.disable_lat, p.disable_clat, p.disable_slat, p.disable_bw) =
                    (true, true, true, true);
                let r = &mut job.report;
                (r.clat_percentiles, r.lat_percentiles, r.slat_percentiles) = (false, false, false);
            }
        }
        "disable_lat" => p.disable_lat = parse_bool(v)?,
        "disable_clat" => p.disable_clat = parse_bool(v)?,
        "disable_slat" => p.disable_slat = parse_bool(v)?,
        "disable_bw_measurement" => p.disable_bw = parse_bool(v)?,
        other => unreachable!("pacing group and its table disagree on '{other}'"),
    }
    Ok(())
}

/// fio's rules (`fixup_options`, `setup_rate`).
fn validate(job: &JobSpec) -> Result<(), JobProblem> {
    let p = &job.pacing;
    let sum = |a: &[u64; 2]| a[0].saturating_add(a[1]);
    if (sum(&p.rate) > 0 && sum(&p.rate_iops) > 0)
        || (sum(&p.rate_min) > 0 && sum(&p.rate_iops_min) > 0)
    {
        return Err(JobProblem::Invalid(
            "rate and rate_iops (and rate_min and rate_iops_min) are mutually exclusive, as in fio"
                .into(),
        ));
    }
    for (d, name) in ["read", "write"].iter().enumerate() {
        if (p.rate[d] > 0 && p.rate[d] < p.rate_min[d])
            || (p.rate_iops[d] > 0 && p.rate_iops[d] < p.rate_iops_min[d])
        {
            return Err(JobProblem::Invalid(format!(
                "the minimum {name} rate exceeds the {name} rate (rate_min above rate)"
            )));
        }
        let min_bs = job.access.sizes[d].0;
        if (p.rate[d] > 0 || p.rate_iops[d] > 0) && p.poisson && p.rate_bps(d, min_bs) < min_bs {
            return Err(JobProblem::Invalid(format!(
                "rate_process=poisson: the {name} rate is below one block per second"
            )));
        }
    }
    Ok(())
}

/// The group.
pub const GROUP: OptionGroup = OptionGroup {
    name: "Pacing",
    options: OPTIONS,
    apply,
    validate,
};
